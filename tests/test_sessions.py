"""2025-11-25 sessions their clients abandoned are closed after an idle timeout, and what ran in them is released.

A client that vanishes without a DELETE leaves its session to the SDK's idle timeout (30 minutes by default,
long enough for a busy server to pile them up); elicitkit sets 10 minutes, and a session whose `tools/call` is
waiting on its person is never idle. Real streamable HTTP, sessions written by hand (tests/legacy_wire.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Accepted, Elicitation
from elicitkit.testing import serve_http
from tests.legacy_wire import Call, LegacySession
from tests.scenes import settled

pytestmark = pytest.mark.anyio

IDLE = 0.5


def question_server(**options: Any) -> tuple[MCPServer, Elicitation, dict[str, anyio.Event]]:
    """`code_word(tag)` asks one question; `ended[tag]` is set once that tool body has ended, however it ended."""
    server = MCPServer("sessions")
    hitl = Elicitation(server, timeout=60, **options)
    ended: dict[str, anyio.Event] = defaultdict(anyio.Event)

    @server.tool()
    async def code_word(tag: str, ctx: Context) -> str:
        try:
            answer = await hitl.text(ctx, f"Code word for {tag}?")
        finally:
            ended[tag].set()
        return f"{tag}={answer.data}" if isinstance(answer, Accepted) else f"{tag}: no answer"

    return server, hitl, ended


@asynccontextmanager
async def session(url: str) -> AsyncIterator[LegacySession]:
    async with httpx.AsyncClient(timeout=10) as http:
        legacy = LegacySession(http, url)
        await legacy.open()
        yield legacy


async def released(hitl: Elicitation, body: anyio.Event) -> None:
    """Wait (a bounded time) for a tool body to end, then for elicitkit to have let go of its run and question."""
    with anyio.fail_after(10):
        await body.wait()
    await settled(hitl)


async def asked(call: Call) -> dict[str, Any]:
    """Read the call's stream up to the server's `elicitation/create`."""
    with anyio.fail_after(5):
        while True:
            message = await call.next_message()
            assert message is not None, "the stream ended before the question"
            if message.get("method") == "elicitation/create":
                return message


async def vanish_mid_question(url: str, tag: str) -> LegacySession:
    """Call the tool, see its question, then go away: the connection dropped, no DELETE."""
    async with session(url) as gone, gone.call("code_word", {"tag": tag}) as call:
        await asked(call)
        await call.drop()
    return gone


async def test_a_session_its_client_left_mid_question_is_closed_after_the_idle_timeout_and_its_run_released() -> None:
    server, hitl, ended = question_server(session_idle_timeout=IDLE)
    async with serve_http(server) as url:
        gone = await vanish_mid_question(url, "left")
        await released(hitl, ended["left"])
        async with httpx.AsyncClient(timeout=10) as http:
            gone.http = http
            assert not await gone.alive()


async def test_a_session_whose_question_is_open_outlives_the_idle_timeout_and_gets_its_answer() -> None:
    server, hitl, ended = question_server(session_idle_timeout=IDLE)
    async with serve_http(server) as url, session(url) as waiting:
        async with waiting.call("code_word", {"tag": "kept"}) as call:
            question = await asked(call)
            # A session left after this question was asked is closed once the idle timeout has passed;
            # the one waiting on its person has been open longer, and is kept.
            await vanish_mid_question(url, "left")
            with anyio.fail_after(10):
                await ended["left"].wait()
            assert not ended["kept"].is_set()
            assert hitl.active_runs == 1 and hitl.pending_questions == 1
            assert await waiting.reply(question, {"action": "accept", "content": {"value": "swordfish"}}) == 202
            with anyio.fail_after(5):
                result = await call.next_message()
                while result is not None and "result" not in result:
                    result = await call.next_message()
        assert result is not None
        assert [c["text"] for c in result["result"]["content"]] == ["kept=swordfish"]
        assert await waiting.alive()
    await settled(hitl)


def test_elicitkit_sets_ten_minutes_of_session_idle_timeout_and_the_apps_own_setting_wins() -> None:
    server, _, _ = question_server()
    server.streamable_http_app()
    assert server.session_manager.session_idle_timeout == 600
    server.streamable_http_app(session_idle_timeout=None)
    assert server.session_manager.session_idle_timeout is None
    server, _, _ = question_server(session_idle_timeout=90)
    server.streamable_http_app()
    assert server.session_manager.session_idle_timeout == 90
    server.streamable_http_app(session_idle_timeout=1800)
    assert server.session_manager.session_idle_timeout == 1800


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "60"])
def test_a_session_idle_timeout_that_is_not_a_positive_number_of_seconds_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="session_idle_timeout must be a positive number of seconds"):
        Elicitation(MCPServer("sessions"), session_idle_timeout=bad)  # type: ignore[arg-type]
