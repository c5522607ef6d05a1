"""Someone answering another person's question: through a retry, the model, a page, or a channel.

Alice and Bob sign in to the same server (real OAuth bearer tokens over streamable HTTP). Bob holds
whatever of Alice's he could have seen — her `requestState`, her `elicitId`, her link, her inbox token —
and each time he is refused, Alice's question stays open, and Alice's own answer is then taken; also when
Bob's answer lands on another node of the deployment, sharing a real Redis.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from elicitkit import Elicitation
from elicitkit.channels import WebInbox
from elicitkit.channels.base import web
from elicitkit.testing import ScriptedHuman
from tests.channels.test_web_inbox import Person
from tests.redis_server import RedisServer
from tests.scenes import Rounds, pending_id, send_answer, serving, text_of
from tests.security.principals import as_user, browser, signed_in_server
from tests.test_urlmode import GOOD, Account, Links, assert_refused, open_form, press, send_good

pytestmark = pytest.mark.anyio

SECRET = "other-principal-secret-0123456789abcdef0123"


def deploy_server() -> Elicitation:
    """`deploy` asks in the client, `connect` on elicitkit's page, `approve` in the caller's web inbox."""
    server, hitl = signed_in_server(channels=[WebInbox()], timeout=10)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        return f"{answer.action}:{getattr(answer, 'data', None)}"

    @server.tool()
    async def connect(ctx: Context) -> str:
        return (await hitl.secure_form(ctx, "Your account, please", Account)).action

    @server.tool()
    async def approve(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Approve the change?", via=web())
        return f"{answer.action}:{getattr(answer, 'data', None)}"

    return hitl


async def test_a_retry_with_another_principals_request_state_is_refused_and_her_own_retry_is_taken() -> None:
    hitl = deploy_server()
    deploy = Rounds("deploy")
    async with serving(hitl) as url, as_user(url, "alice", "auto", elicitation_callback=ScriptedHuman()) as alice:
        first = await deploy.start(alice)
        async with as_user(url, "bob", "auto", elicitation_callback=ScriptedHuman()) as bob:
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await deploy.answer(bob, first, False)
        assert hitl.pending_questions == 1
        done = await deploy.answer(alice, first, True)
    assert isinstance(done, CallToolResult)
    assert text_of(done) == "accept:True"


async def test_the_model_of_another_principal_cannot_answer_with_her_elicit_id(mode: str) -> None:
    hitl = deploy_server()
    async with serving(hitl) as url, as_user(url, "alice", mode) as alice, as_user(url, "bob", mode) as bob:
        elicit_id = pending_id(await alice.call_tool("deploy", {}))
        stolen = await send_answer(bob, elicit_id, "accept", {"value": False})
        assert stolen.is_error
        assert "no open question" in text_of(stolen)
        assert hitl.pending_questions == 1
        mine = await send_answer(alice, elicit_id, "accept", {"value": True})
    assert text_of(mine) == "accept:True"


async def test_her_secure_link_opened_or_posted_by_another_principal_is_refused(mode: str) -> None:
    hitl = deploy_server()
    links = Links()
    async with (
        serving(hitl) as url,
        as_user(url, "alice", mode, elicitation_callback=links) as alice,
        browser(hitl.public_url or "", "alice") as alices_browser,
        browser(hitl.public_url or "", "bob") as bobs_browser,
        anyio.create_task_group() as tg,
    ):
        results: list[CallToolResult] = []
        tg.start_soon(lambda: _call(alice, "connect", results))
        link = (await links.next()).url
        page = await open_form(alices_browser, link)
        assert_refused(await bobs_browser.get(link), 403, "This link was sent to someone else.")
        assert_refused(
            await press(bobs_browser, link, page, "accept", GOOD), 403, "This link was sent to someone else."
        )
        assert hitl.pending_questions == 1
        await send_good(alices_browser, link, page)
    assert [text_of(r) for r in results] == ["accept"]


async def test_her_inbox_question_answered_from_another_principals_inbox_is_refused(mode: str) -> None:
    hitl = deploy_server()
    async with (
        serving(hitl) as url,
        browser(hitl.public_url or "", "alice") as alices_browser,
        browser(hitl.public_url or "", "bob") as bobs_browser,
    ):
        alice, bob = Person(alices_browser), Person(bobs_browser)
        async with alice.events() as events, as_user(url, "alice", mode) as client, anyio.create_task_group() as tg:
            results: list[CallToolResult] = []
            tg.start_soon(lambda: _call(client, "approve", results))
            question = await alice.arrival(events, "Approve the change?")
            assert await bob.questions() == []
            bobs_csrf = bobs_browser.cookies["ek_inbox"]  # his own, valid: only the desk stands in his way
            refused = await bob.answer(question, csrf=bobs_csrf, value="true")
            assert refused.status_code == 403
            assert "not one of the approvers" in refused.text
            assert hitl.pending_questions == 1
            assert (await alice.answer(question, value="false")).status_code == 200
    assert [text_of(r) for r in results] == ["accept:False"]


async def _call(client: Client, tool: str, results: list[CallToolResult]) -> None:
    with anyio.fail_after(10):
        results.append(await client.call_tool(tool, {}))


def node(store: str, name: str) -> Elicitation:
    """One node of a signed-in deployment on a shared store, with a `deploy` tool."""
    _, hitl = signed_in_server(store=store, secret=SECRET, node_id=name, timeout=10)

    @hitl.server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        return f"{answer.action}:{getattr(answer, 'data', None)}"

    return hitl


async def test_another_principals_answer_landing_on_another_node_is_refused_there(
    redis_server: RedisServer, mode: str
) -> None:
    a, b = (node(redis_server.url, name) for name in ("node-a", "node-b"))
    async with AsyncExitStack() as stack:
        stack.push_async_callback(a.aclose)
        stack.push_async_callback(b.aclose)
        url_a, url_b = await stack.enter_async_context(serving(a)), await stack.enter_async_context(serving(b))
        alice = await stack.enter_async_context(as_user(url_a, "alice", mode))
        bob_on_b = await stack.enter_async_context(as_user(url_b, "bob", mode))
        elicit_id = pending_id(await alice.call_tool("deploy", {}))
        stolen = await send_answer(bob_on_b, elicit_id, "accept", {"value": False})
        assert stolen.is_error
        assert "no open question" in text_of(stolen)
        assert a.pending_questions == 1
        mine = await send_answer(alice, elicit_id, "accept", {"value": True})
    assert text_of(mine) == "accept:True"
