"""A `before_ask` hook gives a question another time (`Ask(timeout=...)`), on every way of asking and both eras."""

from __future__ import annotations

import time

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Ask, Elicitation, ElicitationTimeout, ElicitationVetoed, QuestionInfo
from elicitkit.channels.base import Responder, Via
from tests.channels.recording import RecordingChannel
from tests.scenes import text_of

pytestmark = pytest.mark.anyio


def desk(given: float | None) -> tuple[MCPServer, RecordingChannel, Elicitation]:
    server = MCPServer("desk")
    channel = RecordingChannel("slack")
    hitl = Elicitation(server, channels=[channel], timeout=60)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        try:
            answer = await hitl.confirm(ctx, "Deploy?", via=Via("slack", "#ops"))
        except ElicitationTimeout as exc:
            return f"timed out after {exc.timeout:g} s"
        except ElicitationVetoed as exc:
            return f"vetoed: {exc}"
        return answer.action

    @hitl.before_ask
    def retime(question: QuestionInfo) -> Ask:
        return Ask(timeout=given)

    del retime
    return server, channel, hitl


async def test_a_hook_shortens_a_helpers_timeout_and_the_timeout_error_says_how_long(mode: str) -> None:
    server, channel, _ = desk(0.5)
    async with Client(server, mode=mode) as client:
        started = anyio.current_time()
        result = await client.call_tool("deploy", {})
    assert text_of(result) == "timed out after 0.5 s"
    assert anyio.current_time() - started < 30
    (prompt,) = channel.posted
    assert prompt.expires_at - time.time() < 1  # the channel was told the new deadline


async def test_a_hook_lengthens_a_timeout_and_none_means_no_limit(mode: str) -> None:
    for given, at_least in ((600.0, 590.0), (None, 3600.0)):
        server, channel, _ = desk(given)
        async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "deploy", {})
            prompt = await channel.next_post(1)
            assert prompt.expires_at - time.time() > at_least
            assert channel.desk is not None
            await channel.desk.reply(prompt.token, Responder("slack", "U1"), "cancel", None)


@pytest.mark.parametrize("given", [0, -1, float("nan")])
async def test_a_hook_that_gives_a_bad_timeout_fails_closed_and_says_why_in_the_log(
    mode: str, given: float, caplog: pytest.LogCaptureFixture
) -> None:
    server, channel, _ = desk(given)
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("deploy", {})
    assert text_of(result).startswith("vetoed: ")
    assert channel.posted == []
    logged = " ".join(f"{r.getMessage()} {r.exc_info[1] if r.exc_info else ''}" for r in caplog.records)
    assert "Ask(timeout=...) must be a positive number of seconds" in logged
