"""2026-07-28 retries: one-time `requestState`, bad input, and nothing resumed twice.

The reuse and tampering tests run on the SDK's in-memory pipe and over real streamable HTTP.
"""

from __future__ import annotations

import asyncio

import anyio
import pytest
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit import Accepted
from elicitkit._engine.deadlines import here
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import (
    Rounds,
    Transport,
    assert_idle,
    by_hand,
    connect,
    new_server,
    reached,
    settled,
    text_of,
    two_step_server,
    watched_server,
)

pytestmark = pytest.mark.anyio


def only_message(result: CallToolResult | InputRequiredResult) -> str:
    """The message of the single question an `InputRequiredResult` carries."""
    assert isinstance(result, InputRequiredResult)
    assert result.request_state is not None
    [request] = (result.input_requests or {}).values()
    return request.params.message


async def test_a_used_request_state_is_refused_and_the_body_never_resumes_twice(transport: Transport) -> None:
    server, hitl, counts = two_step_server()
    human = ScriptedHuman()
    ship = Rounds("ship", {"version": "3.0"})
    async with connect(server, transport, "auto", elicitation_callback=human) as client:
        assert client.protocol_version == "2026-07-28"
        first = await ship.start(client)
        assert only_message(first) == "Ship 3.0?"
        second = await ship.answer(client, first, True)
        assert only_message(second) == "Release note?"
        assert counts == {"started": 1, "after_first": 1, "finished": 0}

        # A different answer on the used state: had it resumed anything, the result below would say so.
        with pytest.raises(MCPError, match="requestState was already used") as reused:
            await ship.answer(client, first, False)
        assert reused.value.error.data == {"reason": "request_state_reused"}
        assert counts == {"started": 1, "after_first": 1, "finished": 0}
        assert hitl.pending_questions == 1

        done = await ship.answer(client, second, "all good")
        assert isinstance(done, CallToolResult)
        assert not done.is_error, text_of(done)
        assert done.content == [TextContent(type="text", text="3.0 shipped=True note=all good")]
        assert counts == {"started": 1, "after_first": 1, "finished": 1}
        assert_idle(hitl)

        with pytest.raises(MCPError):
            await ship.answer(client, second, "again")
        assert counts == {"started": 1, "after_first": 1, "finished": 1}
    assert human.transcript == []
    assert_idle(hitl)


async def test_a_request_state_of_a_finished_run_resumes_nothing() -> None:
    server, _, counts = two_step_server()
    ship = Rounds("ship", {"version": "3.0"})
    async with by_hand(server) as client:
        first = await ship.start(client)
        second = await ship.answer(client, first, True)
        assert isinstance(second, InputRequiredResult)
        done = await ship.answer(client, second, "x")
        assert isinstance(done, CallToolResult)
        # Sent again as it was (its response lost), it gets the same result; with other answers it is refused.
        again = await ship.answer(client, second, "x")
        assert isinstance(again, CallToolResult) and again.content == done.content
        with pytest.raises(MCPError, match="already used") as info:
            await ship.answer(client, second, "y")
        with pytest.raises(MCPError, match="already used"):
            await ship.answer(client, first, True)
    assert info.value.error.data == {"reason": "request_state_reused"}
    assert counts == {"started": 1, "after_first": 1, "finished": 1}


async def test_a_tampered_request_state_is_refused_and_resumes_nothing(transport: Transport) -> None:
    server, hitl, counts = two_step_server()
    ship = Rounds("ship", {"version": "3.1"})
    async with connect(server, transport, "auto", elicitation_callback=ScriptedHuman()) as client:
        assert client.protocol_version == "2026-07-28"
        first = await ship.start(client)
        state = first.request_state
        assert state is not None
        # One character flipped in the middle of the sealed state, and one near its end.
        for at in (len(state) // 2, len(state) - 3):
            tampered = state[:at] + ("A" if state[at] != "A" else "B") + state[at + 1 :]
            assert tampered != state
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await ship.answer(client, first, True, request_state=tampered)
        assert counts == {"started": 1, "after_first": 0, "finished": 0}
        assert hitl.active_runs == 1
        assert hitl.pending_questions == 1

        # The genuine state still works: a forgery does not burn it.
        second = await ship.answer(client, first, True)
        assert only_message(second) == "Release note?"
        assert counts == {"started": 1, "after_first": 1, "finished": 0}
        done = await ship.answer(client, second, "fine")
        assert isinstance(done, CallToolResult)
        assert text_of(done) == "3.1 shipped=True note=fine"
        assert counts == {"started": 1, "after_first": 1, "finished": 1}
        assert_idle(hitl)


async def test_a_request_state_replayed_against_other_arguments_is_refused() -> None:
    server, _, _ = two_step_server()
    async with by_hand(server) as client:
        first = await Rounds("ship", {"version": "1"}).start(client)
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await Rounds("ship", {"version": "2"}).answer(client, first, True)


async def test_malformed_input_responses_are_refused_without_burning_the_state() -> None:
    server, _, counts = two_step_server()
    ship = Rounds("ship", {"version": "3.0"})
    async with by_hand(server) as client:
        first = await ship.start(client)
        key = next(iter(first.input_requests or {}))
        # The SDK client refuses to send malformed responses, so this one goes out raw, as a buggy client's would.
        raw = {"name": "ship", "arguments": ship.arguments, "inputResponses": {key: {"action": "maybe"}}}
        with pytest.raises(MCPError, match=r"inputResponses\[.*\] is not a valid elicitation result"):
            await client.session._dispatcher.send_raw_request("tools/call", raw | {"requestState": first.request_state})
        assert counts["after_first"] == 0
        assert isinstance(await ship.answer(client, first, True), InputRequiredResult)
    assert counts == {"started": 1, "after_first": 1, "finished": 0}


async def test_unanswered_questions_are_asked_again_and_answers_bind_by_question_id() -> None:
    server, hitl = new_server("state-server")

    @server.tool()
    async def both(ctx: Context) -> str:
        got: dict[str, str] = {}

        async def ask(name: str) -> None:
            result = await hitl.text(ctx, name)
            assert isinstance(result, Accepted)
            got[name] = result.data

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "left")
            tg.start_soon(ask, "right")
        return f"{got['left']},{got['right']}"

    rounds = Rounds("both")
    async with by_hand(server) as client:
        first = await rounds.start(client)
        by_message = {r.params.message: key for key, r in (first.input_requests or {}).items()}
        assert set(by_message) == {"left", "right"}
        partial = await rounds.answer(client, first, input_responses={by_message["right"]: accept({"value": "R"})})
        assert isinstance(partial, InputRequiredResult)
        assert list(partial.input_requests or {}) == [by_message["left"]]
        final = await rounds.answer(client, partial, input_responses={by_message["left"]: accept({"value": "L"})})
    assert isinstance(final, CallToolResult)
    assert final.content == [TextContent(type="text", text="L,R")]


async def test_a_run_waits_for_each_round_on_the_loops_one_deadline_timer_and_leaves_nothing_on_it() -> None:
    # Between rounds a run's expiry clock runs on the loop's one deadline timer (as its questions' deadlines do):
    # a timer of its own each round would stay in the loop's heap of timers until due, run_expiry later.
    server, hitl, _ = two_step_server()
    ship = Rounds("ship", {"version": "4.0"})
    timer = here()
    assert timer is not None
    loop = asyncio.get_running_loop()
    async with by_hand(server) as client:
        timers = len(loop._scheduled)  # type: ignore[attr-defined]
        for _ in range(5):
            first = await ship.start(client)
            assert timer.waiting == 2  # the run's clock and its question's deadline
            second = await ship.answer(client, first, True)
            done = await ship.answer(client, second, "n")
            assert isinstance(done, CallToolResult)
        await settled(hitl)
        assert timer.waiting == 0
        assert len(loop._scheduled) <= timers + 1  # type: ignore[attr-defined]  # (the one deadline timer)


async def test_a_run_whose_retry_never_comes_is_cancelled_and_freed_after_its_expiry() -> None:
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Still there?"), run_expiry=0.2)
    async with by_hand(scene.server) as client:
        first = await Rounds("ask").start(client)
        assert scene.hitl.active_runs == 1
        await reached(scene.cancelled)
        await settled(scene.hitl)
        with pytest.raises(MCPError, match="unknown or has expired"):
            await Rounds("ask").answer(client, first, True)
