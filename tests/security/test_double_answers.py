"""Two answers raced at one question through two ways at once: exactly one is taken.

The ways: elicitkit's page and the model's `sendElicitationResult`; the secure page a Slack approver
opened and that approver's Decline button in Slack; a 2026-07-28 retry sent to two nodes sharing a real
Redis; and the model's answer sent to both nodes. Each race is started both ways round; which one wins
is up to timing, so each test accepts either winner. The tool resumes once, with the winner's answer, and the
loser is told the question is closed (or that its state was used): never answered twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Elicitation
from elicitkit.channels import SlackChannel
from elicitkit.channels.base import slack
from tests.channels.slack_server import LocalSlack
from tests.channels.test_slack import ALICE, Login, calling
from tests.redis_server import RedisServer
from tests.scenes import by_hand, pending_id, send_answer, serving, text_of
from tests.security.test_tampered_state import SHIP, asks, two_nodes
from tests.test_urlmode import GOOD, form_server, open_form, press

pytestmark = pytest.mark.anyio


async def race(starts: str, **ways: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
    """Run every way at once, `starts` first; what each returned, or the MCPError it raised."""
    outcomes: dict[str, Any] = {}

    async def run(name: str, way: Callable[[], Awaitable[Any]]) -> None:
        try:
            outcomes[name] = await way()
        except MCPError as exc:
            outcomes[name] = exc

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for name in sorted(ways, key=lambda name: name != starts):
                tg.start_soon(run, name, ways[name])
    return outcomes


@pytest.mark.parametrize("starts", ["page", "model"])
async def test_the_page_and_the_model_racing_at_one_question_are_taken_once(mode: str, starts: str) -> None:
    hitl, answers = form_server()
    async with serving(hitl) as url, Client(url, mode=mode) as client, httpx.AsyncClient() as browser:
        pending = await client.call_tool("fill_in", {})
        found = re.search(rf"{re.escape(hitl.public_url or '')}/elicit/f/[\w-]+", text_of(pending))
        assert found is not None
        link, elicit_id = found[0], pending_id(pending)
        page = await open_form(browser, link)
        raced = await race(
            starts,
            page=lambda: press(browser, link, page, "accept", GOOD),
            model=lambda: send_answer(client, elicit_id, "decline"),
        )
        page_won = raced["page"].status_code == 200
        if page_won:
            assert raced["model"].is_error
            assert "no open question" in text_of(raced["model"])
            assert text_of(await send_answer(client, elicit_id, "accept", {})) == "Accepted"
        else:
            assert text_of(raced["model"]) == "Declined"
            assert raced["page"].status_code == 410
    assert [a.action for a in answers] == ["accept" if page_won else "decline"]
    assert hitl.pending_questions == 0


def login_desk(local: LocalSlack) -> Elicitation:
    server = MCPServer("login-desk")
    hitl = Elicitation(server, channels=[SlackChannel(local.token, local.signing_secret, api_url=local.api_url)])

    @server.tool()
    async def login(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, "Registry login?", Login, via=slack("#deploys", approvers=[ALICE.id]))
        return answer.action

    return hitl


@pytest.mark.parametrize("starts", ["page", "slack"])
async def test_a_secure_page_and_a_slack_decline_racing_at_one_question_are_taken_once(mode: str, starts: str) -> None:
    async with LocalSlack().serving() as local:
        hitl = login_desk(local)
        async with (
            serving(hitl) as url,
            Client(url, mode=mode) as client,
            calling(client, "login") as result,
            httpx.AsyncClient() as browser,
        ):
            local.request_url = f"{hitl.public_url}/elicit/channels/slack/interactions"
            message = await local.message(1)
            await local.click(ALICE, message, "Answer on a secure page")
            [link] = re.findall(r"<(http://[^|>]+)\|", (await local.ephemeral_for(ALICE)).text)
            page = await open_form(browser, link)
            await local.click(ALICE, message, "Decline")
            why = await local.opened_view(ALICE)  # the decline modal: its submission races the page
            raced = await race(
                starts,
                page=lambda: press(browser, link, page, "accept", {"user": "ops", "password": "hunter2"}),
                slack=lambda: local.submit(ALICE, why, {"reason": "not now"}),
            )
            assert raced["slack"].status_code == 200
            outcome = await result()
            if raced["page"].status_code == 200:
                assert outcome == "accept"
                assert "This question is closed" in json.dumps(why.view["blocks"])
            else:
                assert outcome == "decline"
                assert (await local.ephemeral_for(ALICE, 2)).text == "Thanks, your answer was recorded."
                assert raced["page"].status_code == 410
    assert message.updates == 1
    assert hitl.pending_questions == 0


@pytest.mark.parametrize("starts", ["a", "b"])
async def test_one_retry_sent_to_two_nodes_at_once_is_taken_once(redis_server: RedisServer, starts: str) -> None:
    async with two_nodes(redis_server.url) as (url_a, url_b, went), by_hand(url_a) as on_a, by_hand(url_b) as on_b:
        first = await SHIP.start(on_a)
        raced = await race(starts, a=lambda: SHIP.answer(on_a, first, True), b=lambda: SHIP.answer(on_b, first, False))
        [(winner, taken)] = [(n, r) for n, r in raced.items() if not isinstance(r, MCPError)]
        [(_, lost)] = [(n, r) for n, r in raced.items() if isinstance(r, MCPError)]
        assert "requestState was already used" in lost.error.message
        done = await SHIP.answer(on_a, asks(taken, "Release note?"), "raced")
    assert text_of(done) == f"1 shipped={winner == 'a'} note=raced"
    assert went == ["started", "confirmed"]


@pytest.mark.parametrize("starts", ["a", "b"])
async def test_the_models_answer_sent_to_two_nodes_at_once_is_taken_once(
    redis_server: RedisServer, starts: str
) -> None:
    async with (
        two_nodes(redis_server.url) as (url_a, url_b, went),
        Client(url_a, mode="auto") as on_a,
        Client(url_b, mode="auto") as on_b,
    ):
        elicit_id = pending_id(await on_a.call_tool("ship", {"version": "1"}))
        raced = await race(
            starts,
            a=lambda: send_answer(on_a, elicit_id, "accept", {"value": True}),
            b=lambda: send_answer(on_b, elicit_id, "accept", {"value": False}),
        )
        [winner] = [n for n, r in raced.items() if not r.is_error]
        [loser] = [r for r in raced.values() if r.is_error]
        assert "no open question" in text_of(loser)
        second = pending_id(raced[winner])
        done = await send_answer(on_a, second, "accept", {"value": "raced"})
    assert text_of(done) == f"1 shipped={winner == 'a'} note=raced"
    assert went == ["started", "confirmed"]
