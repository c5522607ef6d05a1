"""Every way an answer arrives gets the same rules: a progress token, a chat, a page or the model change nothing.

Written against the wire (clients, HTTP pages) and the public API only. The
scenes where a replayed run meets a reworded question are in
tests/test_one_door_replay.py.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ErrorData
from pydantic import BaseModel, Field, field_validator

from elicitkit import Accepted, Elicitation, ElicitationClientError
from elicitkit.channels import WebInbox
from elicitkit.channels.base import Responder, Via, web
from elicitkit.testing import ScriptedHuman, accept
from tests.channels.recording import RecordingChannel
from tests.channels.test_web_inbox import calling, header_identity, person
from tests.scenes import Transport, connect, new_server, pending_id, send_answer, serving, text_of
from tests.test_urlmode import Page, asking, open_form, press

pytestmark = pytest.mark.anyio

APPROVER = Responder("desk", "U1", "Ada")


class Progress:
    """A `progress_callback`: passing one makes the client send a progress token with its call."""

    def __init__(self) -> None:
        self.beats: list[tuple[float, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.beats.append((progress, message))


def ok_server(via: Via | None = None, **options: Any) -> tuple[MCPServer, Elicitation]:
    """`ask` asks "OK?" and says how it went: `caught <code>` for a client's error reply, else the outcome."""
    server, hitl = new_server("one-door", timeout=10, **options)

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            answer = await hitl.confirm(ctx, "OK?", via=via)
        except ElicitationClientError as exc:
            return f"caught {exc.code}"
        return f"{answer.action} {answer.data}" if isinstance(answer, Accepted) else answer.action

    return server, hitl


async def call_with(client: Client, tool: str, arguments: dict[str, Any], progress: Progress | None) -> CallToolResult:
    with anyio.fail_after(10):
        result: CallToolResult = await client.call_tool(tool, arguments, progress_callback=progress)
    return result


# --- 1. a progress token changes nothing ----------------------------------------------------------------


@pytest.mark.parametrize("with_progress", [False, True], ids=["without-progress-token", "with-progress-token"])
async def test_a_2025_11_25_clients_error_reply_reaches_the_tool_as_elicitation_client_error(
    transport: Transport, with_progress: bool
) -> None:
    server, _ = ok_server()
    human = ScriptedHuman(ErrorData(code=-32603, message="the form could not be shown"))
    async with connect(server, transport, "legacy", elicitation_callback=human) as client:
        result = await call_with(client, "ask", {}, Progress() if with_progress else None)
    assert not result.is_error, text_of(result)
    assert text_of(result) == "caught -32603"
    assert [x.message for x in human.transcript] == ["OK?"]


async def test_a_call_with_a_progress_token_gets_its_question_answered_on_both_eras(
    mode: str, transport: Transport
) -> None:
    server, _ = ok_server()
    human = ScriptedHuman(accept({"value": True}))
    async with connect(server, transport, mode, elicitation_callback=human) as client:
        result = await call_with(client, "ask", {}, Progress())
    assert not result.is_error, text_of(result)
    assert text_of(result) == "accept True"


async def test_with_a_progress_token_a_question_answered_through_the_model_completes(
    mode: str, transport: Transport
) -> None:
    server, hitl = ok_server()
    progress = Progress()
    async with connect(server, transport, mode) as client:
        pending = await call_with(client, "ask", {}, progress)
        assert not pending.is_error, text_of(pending)
        answer = {"elicitId": pending_id(pending), "action": "accept", "content": {"value": True}}
        result = await call_with(client, "sendElicitationResult", answer, progress)
    assert not result.is_error, text_of(result)
    assert text_of(result) == "accept True"
    assert hitl.active_runs == 0


async def test_with_a_progress_token_a_question_asked_on_a_channel_completes(mode: str, transport: Transport) -> None:
    channel = RecordingChannel("desk")
    server, _ = ok_server(via=Via("desk", "#ops"), channels=[channel])
    got: dict[str, CallToolResult] = {}
    async with connect(server, transport, mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await call_with(client, "ask", {}, Progress())

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert prompt.message == "OK?"
        assert channel.desk is not None
        verdict = await channel.desk.reply(prompt.token, APPROVER, "accept", {"value": True})
        assert verdict.ok, verdict
    assert not got["result"].is_error, text_of(got["result"])
    assert text_of(got["result"]) == "accept True"


# --- 2. constraints the wire schema cannot carry are checked wherever the answer comes from ----------------


class Branch(BaseModel):
    """The slug's pattern and the owner's validator are not in the wire schema: only pydantic knows them."""

    slug: str = Field(title="Slug", pattern=r"^[a-z0-9-]+$")
    owner: str = Field(title="Owner")

    @field_validator("owner")
    @classmethod
    def _not_root(cls, value: str) -> str:
        if value == "root":
            raise ValueError("root may not own a branch")
        return value


BROKEN = [
    ({"slug": "Not A Slug!", "owner": "ada"}, "slug"),
    ({"slug": "fix-login", "owner": "root"}, "owner"),
]
GOOD = {"slug": "fix-login", "owner": "ada"}


def branch_server(**options: Any) -> tuple[MCPServer, Elicitation]:
    """`branch` asks for a `Branch` (on `via`, or on elicitkit's page when `secure`) and names the typed answer."""
    via: Via | None = options.pop("via", None)
    secure: bool = options.pop("secure", False)
    server, hitl = new_server("branches", timeout=20, **options)

    @server.tool()
    async def branch(ctx: Context) -> str:
        if secure:
            answer = await hitl.secure_form(ctx, "New branch?", Branch)
        else:
            answer = await hitl.elicit(ctx, "New branch?", Branch, via=via)
        assert isinstance(answer, Accepted), answer
        assert isinstance(answer.data, Branch), answer.data
        return f"{answer.data.slug} by {answer.data.owner}"

    return server, hitl


async def test_the_web_inbox_refuses_an_answer_that_breaks_the_models_own_rules_and_the_tool_keeps_waiting(
    mode: str,
) -> None:
    _, hitl = branch_server(channels=[WebInbox()], page_identity=header_identity, via=web("alice"))
    async with (
        serving(hitl) as url,
        person(url, "alice") as alice,
        alice.events() as events,
        calling(url, mode, "branch") as call,
    ):
        question = await alice.arrival(events, "New branch?")
        for broken, field in BROKEN:
            refused = await alice.answer(question, **broken)
            assert refused.status_code == 422, refused.text
            assert "Thanks, your answer was recorded." not in refused.text
            marked = refused.text.split(f'id="{question.id}-{field}"', 1)[1].split(">", 1)[0]
            assert 'aria-invalid="true"' in marked, field  # the field says it is in error, and which message says why
            assert f'<p class="error-message" id="{question.id}-{field}-error">' in refused.text, field
            assert [q.message for q in await alice.questions()] == ["New branch?"]
            assert hitl.pending_questions == 1
            assert not call.done.is_set()
        assert "root may not own a branch" in refused.text

        answered = await alice.answer(question, **GOOD)
        assert answered.status_code == 200, answered.text
        assert await call.text() == "fix-login by ada"


async def test_a_chat_reply_that_breaks_the_models_own_rules_is_invalid_and_the_question_stays_open(
    mode: str,
) -> None:
    channel = RecordingChannel("desk")
    server, hitl = branch_server(channels=[channel], via=Via("desk", "#eng"))
    got: dict[str, CallToolResult] = {}
    async with connect(server, "memory", mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await call_with(client, "branch", {}, None)

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        for broken, field in BROKEN:
            verdict = await channel.desk.reply(prompt.token, APPROVER, "accept", broken)
            assert verdict.status == "invalid", verdict
            assert field in verdict.problems, verdict
            assert hitl.pending_questions == 1
            assert "result" not in got
        assert (await channel.desk.reply(prompt.token, APPROVER, "accept", GOOD)).ok
    assert text_of(got["result"]) == "fix-login by ada"


async def test_the_secure_form_page_refuses_an_answer_that_breaks_the_models_own_rules(mode: str) -> None:
    _, hitl = branch_server(secure=True)
    async with asking(hitl, mode) as scene:
        call, link, page = await scene.open("branch")
        for broken, field in BROKEN:
            again = Page(await press(scene.browser, link, page, "accept", broken))
            assert again.response.status_code == 422, again.response.text
            assert field in again.errors, again.errors
            assert hitl.pending_questions == 1
            assert not call.done.is_set()
            page = again
        done = await press(scene.browser, link, page, "accept", GOOD)
        assert done.status_code == 200, done.text
        assert text_of(await call.result()) == "fix-login by ada"


# --- 3. a link's accept carries nothing -------------------------------------------------------------------


def link_server() -> tuple[MCPServer, Elicitation]:
    server, hitl = new_server("links", timeout=10)

    @server.tool()
    async def visit(ctx: Context) -> str:
        answer = await hitl.elicit_url(ctx, "Open this", "https://example.com/x")
        return type(answer).__name__

    return server, hitl


async def test_the_model_accepts_a_link_without_content_and_the_tool_gets_accepted(mode: str) -> None:
    server, hitl = link_server()
    async with connect(server, "memory", mode) as client:  # no elicitation callback: the model relays the link
        pending = await client.call_tool("visit", {})
        assert "https://example.com/x" in text_of(pending)
        with anyio.fail_after(5):
            result = await send_answer(client, pending_id(pending), "accept")  # no "content" at all
    assert not result.is_error, text_of(result)
    assert text_of(result) == "Accepted"
    assert hitl.active_runs == 0


async def test_the_model_accepts_a_finished_secure_form_without_content_and_the_tool_gets_the_typed_answer(
    mode: str,
) -> None:
    _, hitl = branch_server(secure=True)
    async with serving(hitl) as url, Client(url, mode=mode) as client, httpx.AsyncClient() as browser:
        pending = await client.call_tool("branch", {})
        found = re.search(rf"{re.escape(url.removesuffix('/mcp'))}/elicit/f/[\w-]+", text_of(pending))
        assert found is not None, text_of(pending)
        link = found[0]
        page = await open_form(browser, link)
        done = await press(browser, link, page, "accept", GOOD)
        assert done.status_code == 200, done.text
        with anyio.fail_after(10):
            result = await send_answer(client, pending_id(pending), "accept")
    assert not result.is_error, text_of(result)
    assert text_of(result) == "fix-login by ada"


async def test_the_model_accepting_a_form_question_without_content_is_told_what_is_missing_and_may_answer_again(
    mode: str,
) -> None:
    server, _ = ok_server()
    async with connect(server, "memory", mode) as client:
        pending = await client.call_tool("ask", {})
        elicit_id = pending_id(pending)
        refused = await send_answer(client, elicit_id, "accept")
        assert refused.is_error
        assert "content" in text_of(refused)
        with anyio.fail_after(5):
            result = await send_answer(client, elicit_id, "accept", {"value": True})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "accept True"
