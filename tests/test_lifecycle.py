"""Timeouts, cancellation, capabilities, the one-pending policy, and leaks — on both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp_types import (
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    FormElicitationCapability,
    Implementation,
    UrlElicitationCapability,
)

from elicitkit import (
    Accepted,
    ClientOverride,
    ElicitationNotSupported,
    ElicitationTimeout,
)
from elicitkit._clients import declared_modes
from elicitkit._engine.deadlines import Deadlines, here
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import Rounds, by_hand, new_server, settled, text_of, watched_server

pytestmark = pytest.mark.anyio


class SlowHuman:
    """A person who sees the question and never answers (until the test ends)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def deadline_heap() -> Deadlines:
    """The one timer's heap of this event loop (the tests run on asyncio)."""
    found = here()
    assert found is not None
    return found


async def test_no_answer_in_time_raises_elicitation_timeout_in_the_tool(mode: str) -> None:
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Quick?", timeout=0.1))
    hitl = scene.hitl
    if mode == "legacy":
        async with Client(scene.server, mode=mode, elicitation_callback=SlowHuman()) as client:
            assert text_of(await client.call_tool("ask", {})) == "timed out after 0.1"
    else:
        # On 2026-07-28 the person is between rounds: the late retry gets the final result.
        async with by_hand(scene.server) as client:
            first = await Rounds("ask").start(client)
            with anyio.fail_after(5):
                while hitl.pending_questions:
                    await anyio.wait_all_tasks_blocked()
                    await anyio.lowlevel.checkpoint()
            final = await Rounds("ask").answer(client, first, True)
            assert isinstance(final, CallToolResult)
            assert text_of(final) == "timed out after 0.1"
    assert hitl.active_runs == 0


async def test_an_uncaught_timeout_ends_the_call_as_an_error_saying_so() -> None:
    server, hitl = new_server(timeout=0.1)

    @server.tool()
    async def ask(ctx: Context) -> str:
        await hitl.confirm(ctx, "Quick?")
        return "answered"

    async with Client(server, mode="legacy", elicitation_callback=SlowHuman()) as client:
        result = await client.call_tool("ask", {})
    assert result.is_error
    assert "No answer to the elicitation within 0.1 seconds" in text_of(result)


async def test_cancelling_the_tool_call_cancels_the_pending_question_and_the_body() -> None:
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Wait?"))
    human = SlowHuman()
    async with Client(scene.server, mode="legacy", elicitation_callback=human) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "ask", {})
                await human.asked.wait()
                tg.cancel_scope.cancel()
            await scene.cancelled.wait()
        await settled(scene.hitl)


async def test_a_2026_request_closed_in_flight_leaves_its_run_waiting_until_its_expiry() -> None:
    # On 2026-07-28 a client cancels by closing its request, which is also what a dropped connection does: the
    # run waits for the client to send the request again, as between rounds, and ends with its expiry.
    server, hitl = new_server(run_expiry=0.5)
    started, body_cancelled = anyio.Event(), anyio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            body_cancelled.set()
            raise
        return "unreachable"

    async with by_hand(server) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "slow", {})
                await started.wait()
                tg.cancel_scope.cancel()
            await anyio.wait_all_tasks_blocked()
            assert not body_cancelled.is_set()
            assert hitl.active_runs == 1
            await body_cancelled.wait()
        await anyio.wait_all_tasks_blocked()
        assert hitl.active_runs == 0


async def test_with_the_error_policy_a_client_without_the_capability_gets_not_supported(mode: str) -> None:
    server, hitl = new_server(fallback="error")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Anyone?")
        except ElicitationNotSupported as exc:
            return f"not supported: {exc}"
        return "answered"

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("ask", {})
    assert text_of(result) == "not supported: The client did not declare that it can show elicitation forms"


async def test_supports_reports_the_client_capability_on_both_eras(mode: str) -> None:
    server, hitl = new_server()

    @server.tool()
    async def caps(ctx: Context) -> str:
        return f"{hitl.supports(ctx)} {hitl.supports(ctx, 'url')}"

    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman()) as with_cb:
        declared = text_of(await with_cb.call_tool("caps", {}))
    async with Client(server, mode=mode) as without:
        assert text_of(await without.call_tool("caps", {})) == "False False"
    assert declared.startswith("True")


async def test_supports_honours_client_overrides_on_both_eras(mode: str) -> None:
    server, hitl = new_server(client_overrides=[ClientOverride("mcp", modes=())])

    @server.tool()
    async def caps(ctx: Context) -> str:
        return f"{hitl.supports(ctx)} {hitl.supports(ctx, 'url')}"

    info = Implementation(name="mcp", version="1.0")
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(), client_info=info) as client:
        assert text_of(await client.call_tool("caps", {})) == "False False"


@pytest.mark.parametrize(
    ("capability", "form", "url"),
    [
        (None, False, False),
        (ElicitationCapability(), True, False),
        (ElicitationCapability(form=FormElicitationCapability()), True, False),
        (ElicitationCapability(url=UrlElicitationCapability()), False, True),
        (ElicitationCapability(form=FormElicitationCapability(), url=UrlElicitationCapability()), True, True),
    ],
    ids=["none", "bare-{}-means-form", "form", "url-only", "both"],
)
def test_declared_modes_map_to_support(capability: ElicitationCapability | None, form: bool, url: bool) -> None:
    modes = declared_modes(ClientCapabilities(elicitation=capability))
    assert ("form" in modes) is form
    assert ("url" in modes) is url


async def test_one_pending_per_session_cancels_the_previous_question_at_once_leaving_no_deadline() -> None:
    server, hitl = new_server(one_pending_per_session=True)
    outcomes: dict[str, str] = {}

    @server.tool()
    async def ask(name: str, ctx: Context) -> str:
        result = await hitl.text(ctx, name)
        outcomes[name] = result.data if isinstance(result, Accepted) else result.action
        return outcomes[name]

    first_asked = anyio.Event()

    async def human(context: Any, params: ElicitRequestParams) -> ElicitResult:
        if params.message == "first":
            first_asked.set()
            await anyio.sleep_forever()
        return ElicitResult(action="accept", content={"value": "second answer"})

    async with Client(server, mode="legacy", elicitation_callback=human) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "ask", {"name": "first"})
                await first_asked.wait()
                assert deadline_heap().waiting == 1
                tg.start_soon(client.call_tool, "ask", {"name": "second"})
    assert outcomes == {"first": "cancel", "second": "second answer"}
    assert len(deadline_heap()) == 0  # the withdrawn question's deadline went with it


async def test_questions_are_concurrent_by_default() -> None:
    server, hitl = new_server()
    both_asked = anyio.Event()
    asked: list[str] = []

    @server.tool()
    async def ask(name: str, ctx: Context) -> str:
        result = await hitl.text(ctx, name)
        return result.data if isinstance(result, Accepted) else result.action

    async def human(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        if len(asked) == 2:
            both_asked.set()
        await both_asked.wait()
        return ElicitResult(action="accept", content={"value": params.message.upper()})

    results: list[str] = []
    async with Client(server, mode="legacy", elicitation_callback=human) as client:

        async def one(name: str) -> None:
            results.append(text_of(await client.call_tool("ask", {"name": name})))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "a")
                tg.start_soon(one, "b")
    assert sorted(results) == ["A", "B"]


async def test_nothing_leaks_after_answers_timeouts_and_cancellations(mode: str) -> None:
    server, hitl = new_server()

    @server.tool()
    async def ask(kind: str, ctx: Context) -> str:
        try:
            result = await hitl.confirm(ctx, kind, timeout=0.05 if kind == "timeout" else None)
        except ElicitationTimeout:
            return "timeout"
        return result.action

    async def human(context: Any, params: ElicitRequestParams) -> ElicitResult:
        if params.message == "timeout" and mode == "legacy":
            await anyio.sleep_forever()
        return ElicitResult(action="decline")

    async with Client(server, mode=mode, elicitation_callback=human) as client:
        await anyio.wait_all_tasks_blocked()
        baseline = len(asyncio.all_tasks())
        for kind in ["answer", "timeout", "answer"] * 5:
            await client.call_tool("ask", {"kind": kind})
        await anyio.wait_all_tasks_blocked()
        assert hitl.active_runs == 0
        assert hitl.pending_questions == 0
        assert hitl._engine.registry._session_questions == {}
        assert len(asyncio.all_tasks()) == baseline


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_finished_run_is_gone_by_the_time_its_result_arrives(mode: str) -> None:
    """Nothing to settle: a run that finished while its request waited is released before the result is sent."""
    server, hitl = new_server()

    @server.tool()
    async def plain(n: int) -> int:
        return n + 1

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Go?")).action

    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(*[accept({"value": True})] * 3)) as client:
        for _ in range(3):
            assert text_of(await client.call_tool("plain", {"n": 1})) == "2"
            assert hitl.active_runs == 0  # no settling: released before the result was sent
            assert text_of(await client.call_tool("ask", {})) == "accept"
            assert hitl.active_runs == 0
            assert hitl.pending_questions == 0


async def test_anonymous_2026_07_28_callers_are_not_one_session_and_never_cancel_each_other() -> None:
    """2026-07-28 has no sessions: `one_pending_per_session` applies per authenticated principal; two anonymous
    clients (which the SDK cannot tell apart) each keep their question."""
    server, hitl = new_server(one_pending_per_session=True)
    outcomes: dict[str, str] = {}

    @server.tool()
    async def ask(name: str, ctx: Context) -> str:
        result = await hitl.text(ctx, name)
        outcomes[name] = result.data if isinstance(result, Accepted) else result.action
        return outcomes[name]

    first_asked, release = anyio.Event(), anyio.Event()

    async def slow(context: Any, params: ElicitRequestParams) -> ElicitResult:
        first_asked.set()
        await release.wait()
        return ElicitResult(action="accept", content={"value": "first answer"})

    async def quick(context: Any, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"value": "second answer"})

    async with (
        Client(server, mode="auto", elicitation_callback=slow) as alice,
        Client(server, mode="auto", elicitation_callback=quick) as bob,
    ):
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(alice.call_tool, "ask", {"name": "first"})
                await first_asked.wait()
                await bob.call_tool("ask", {"name": "second"})
                release.set()
    assert outcomes == {"first": "first answer", "second": "second answer"}
