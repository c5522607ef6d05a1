"""Questions' deadlines share one timer: each wait still ends exactly at its deadline, in deadline order, and a wait
that ends otherwise (an answer, a withdrawal, a cancelled call, a client gone) leaves nothing behind."""

from __future__ import annotations

import asyncio
import random
from contextlib import suppress
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult

from elicitkit import Accepted, Ask, ElicitationTimeout, QuestionInfo
from elicitkit._engine.deadlines import Bound, Deadlines, bounded, discard, here, now
from tests.scenes import Rounds, Transport, by_hand, connect, new_server, reached, settled, text_of, watched_server

pytestmark = pytest.mark.anyio


def deadlines() -> Deadlines:
    found = here()
    assert found is not None  # the tests run on asyncio
    return found


class SlowHuman:
    """A person who sees every question and answers none."""

    def __init__(self) -> None:
        self.asked = 0
        self.first = anyio.Event()

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked += 1
        self.first.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def human(context: Any, params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="accept", content={"value": True})


# --- the timer ---------------------------------------------------------------------------------------


async def test_scopes_are_cancelled_in_the_order_of_their_deadlines_and_never_before() -> None:
    timer = deadlines()
    start = anyio.current_time()
    at = [start + 0.3 + 0.02 * i for i in range(20)]
    order = list(range(20))
    random.Random(7).shuffle(order)
    ended: list[tuple[int, float]] = []

    async def wait(i: int) -> None:
        with anyio.CancelScope() as scope:
            timer.add(at[i], scope)
            await anyio.sleep_forever()
        ended.append((i, anyio.current_time()))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for i in order:  # added out of order: the timer moves earlier as earlier deadlines come
                tg.start_soon(wait, i)
    assert [i for i, _ in ended] == list(range(20))
    assert all(when >= at[i] for i, when in ended)
    assert len(timer) == 0


async def test_deadlines_that_come_in_order_set_one_loop_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    timer, loop = deadlines(), asyncio.get_running_loop()
    set_at: list[float] = []
    call_at = loop.call_at

    def counted(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        set_at.append(when)
        return call_at(when, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counted)
    scopes = [anyio.CancelScope() for _ in range(1000)]
    start = anyio.current_time()
    entries = [timer.add(start + 300 + i, scope) for i, scope in enumerate(scopes)]
    assert len(set_at) <= 1  # none when an earlier deadline's timer is still set
    for entry in entries:
        assert entry is not None
        timer.discard(entry)
    assert len(timer) == 0
    assert not any(scope.cancel_called for scope in scopes)


async def test_ten_thousand_waits_ended_in_any_order_leave_no_entry_behind() -> None:
    timer, rng = deadlines(), random.Random(31)
    start = anyio.current_time()
    entries = [timer.add(start + 60 + rng.random() * 600, anyio.CancelScope()) for _ in range(10_000)]
    rng.shuffle(entries)
    for n, entry in enumerate(entries, 1):
        assert entry is not None
        timer.discard(entry)
        timer.discard(entry)  # twice is harmless
        assert timer.waiting == 10_000 - n
        assert len(timer) <= 2 * timer.waiting + 1  # ended entries are swept as they come to outnumber the rest
    assert len(timer) == 0


async def test_a_deadline_already_past_cancels_on_entry_and_no_limit_sets_nothing() -> None:
    scope, entry = bounded(anyio.current_time())
    assert entry is None
    with scope:
        await anyio.lowlevel.checkpoint()
    assert scope.cancelled_caught
    scope, entry = bounded(float("inf"))
    assert entry is None
    with scope:
        await anyio.lowlevel.checkpoint()
    assert not scope.cancel_called
    discard(None)
    assert len(deadlines()) == 0


def test_off_an_event_loop_there_is_no_shared_timer() -> None:
    assert here() is None


async def test_deadlines_are_on_anyio_s_clock() -> None:
    before = anyio.current_time()
    read = now()
    assert before <= read <= anyio.current_time()
    wait, entry = bounded(now() + 0.05)
    assert entry is not None
    with wait:
        await anyio.sleep_forever()
    assert wait.cancelled_caught
    assert now() >= entry[0]


# --- a bound wait: ended as asyncio.timeout() ends one, without a cancel scope -----------------------


def pending_cancellations() -> int:
    task = asyncio.current_task()
    assert task is not None
    return task.cancelling()


async def test_a_wait_ended_by_its_deadline_or_a_withdrawal_leaves_its_task_free_to_wait_again() -> None:
    for end in ("deadline", "withdrawal"):
        wait, entry = bounded(now() + (0.02 if end == "deadline" else 60))
        assert isinstance(wait, Bound)
        if end == "withdrawal":
            asyncio.get_running_loop().call_soon(wait.cancel)  # an answer from elsewhere, while the task waits
        with wait:
            await anyio.sleep_forever()
        discard(entry)
        assert wait.cancelled_caught and pending_cancellations() == 0
        await anyio.lowlevel.checkpoint()  # no cancellation left over for the task's next wait
    assert len(deadlines()) == 0


async def test_a_wait_that_ends_first_is_not_cancelled_afterwards() -> None:
    wait, entry = bounded(now() + 60)
    with wait:
        await anyio.lowlevel.checkpoint()
    discard(entry)
    wait.cancel()  # a late withdrawal: the wait is over, there is nothing to end
    await anyio.lowlevel.checkpoint()
    assert not wait.cancelled_caught and pending_cancellations() == 0


async def test_a_wait_asked_to_end_by_its_own_task_is_not_cancelled_at_its_next_wait_elsewhere() -> None:
    wait, entry = bounded(now() + 60)
    with wait:
        wait.cancel()  # from the task itself: a Task.cancel() now would land at whatever it awaits next
    discard(entry)
    await anyio.lowlevel.checkpoint()
    assert wait.cancel_called and not wait.cancelled_caught and pending_cancellations() == 0


async def test_a_call_cancelled_while_a_bound_wait_ends_is_still_cancelled() -> None:
    """The bound takes back only its own cancellation: one from around it (a cancel scope, the call's) goes on out,
    whichever of the two comes first in the same turn of the loop."""
    for outer_first in (True, False):
        with anyio.CancelScope() as outer:
            wait, entry = bounded(now() + 60)

            def both(wait: Any = wait, outer: anyio.CancelScope = outer, outer_first: bool = outer_first) -> None:
                for end in (outer.cancel, wait.cancel) if outer_first else (wait.cancel, outer.cancel):
                    end()

            asyncio.get_running_loop().call_soon(both)
            try:
                with wait:
                    await anyio.sleep_forever()
            finally:
                discard(entry)
            await anyio.sleep_forever()  # still inside the cancelled scope: this wait ends at once
        assert outer.cancelled_caught, outer_first
        assert pending_cancellations() == 0
        await anyio.lowlevel.checkpoint()


async def test_a_task_cancelled_from_outside_while_it_waits_is_cancelled_not_timed_out() -> None:
    ended = anyio.Event()
    outcome: list[str] = []

    async def waiting() -> None:
        wait, entry = bounded(now() + 60)
        try:
            with wait:
                await anyio.sleep_forever()
            outcome.append("the wait ended")
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        finally:
            discard(entry)
            ended.set()

    task = asyncio.get_running_loop().create_task(waiting())
    await anyio.lowlevel.checkpoint()
    task.cancel()
    with anyio.fail_after(5):
        await ended.wait()
    with suppress(asyncio.CancelledError):
        await task
    assert outcome == ["cancelled"] and task.cancelled()
    assert len(deadlines()) == 0


# --- questions, both eras ----------------------------------------------------------------------------


async def test_questions_with_interleaved_deadlines_time_out_in_order_each_at_its_deadline(mode: str) -> None:
    server, hitl = new_server()
    timeouts = [0.3 + 0.05 * i for i in range(8)]
    random.Random(3).shuffle(timeouts)
    deadline: dict[int, float] = {}
    ended: list[tuple[int, float]] = []
    all_ended = anyio.Event()

    @server.tool()
    async def ask(i: int, ctx: Context) -> str:
        deadline[i] = anyio.current_time() + timeouts[i]
        try:
            await hitl.confirm(ctx, f"Question {i}?", timeout=timeouts[i])
        except ElicitationTimeout as exc:
            ended.append((i, anyio.current_time()))
            if len(ended) == len(timeouts):
                all_ended.set()
            return f"timed out after {exc.timeout}"
        return "answered"

    results: dict[int, str] = {}
    if mode == "legacy":
        async with Client(server, mode=mode, elicitation_callback=SlowHuman()) as client:

            async def call(i: int) -> None:
                results[i] = text_of(await client.call_tool("ask", {"i": i}))

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    for i in range(len(timeouts)):
                        tg.start_soon(call, i)
    else:
        # The person is between rounds when the time comes; the retry gets the final result.
        async with by_hand(server) as client:
            firsts = [await Rounds("ask", {"i": i}).start(client) for i in range(len(timeouts))]
            await reached(all_ended, 10)
            for i, first in enumerate(firsts):
                final = await Rounds("ask", {"i": i}).answer(client, first, True)
                assert isinstance(final, CallToolResult)
                results[i] = text_of(final)
    assert results == {i: f"timed out after {t}" for i, t in enumerate(timeouts)}
    assert [i for i, _ in ended] == sorted(deadline, key=deadline.__getitem__)
    assert all(when >= deadline[i] for i, when in ended)
    assert hitl.active_runs == 0
    assert len(deadlines()) == 0


async def test_a_question_keeping_its_call_alive_with_progress_still_ends_at_its_deadline() -> None:
    # The wait runs inside the keepalive's task group: the deadline's one cancellation ends the request in flight,
    # the keepalives stop with it, and the body is told the time ran out (and its call goes on).
    server, hitl = new_server(keepalive=0.02)
    beats: list[float] = []
    asked_at: list[float] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        asked_at.append(anyio.current_time())
        try:
            await hitl.confirm(ctx, "Still there?", timeout=0.3)
        except ElicitationTimeout:
            await anyio.lowlevel.checkpoint()  # no cancellation left over for the rest of the body
            return f"timed out after {anyio.current_time() - asked_at[0]:.2f} s"
        return "answered"

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        beats.append(progress)

    async with Client(server, mode="legacy", elicitation_callback=SlowHuman()) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("ask", {}, progress_callback=on_progress)
    assert text_of(result).startswith("timed out after") and float(text_of(result).split()[3]) >= 0.3
    assert len(beats) >= 2
    assert len(deadlines()) == 0


async def test_every_answered_question_takes_its_deadline_with_it(mode: str) -> None:
    # (The timer itself is held to 10,000 waits ended in any order above; here each question of the engine, on
    # either era, discards its own.)
    server, hitl = new_server()

    @server.tool()
    async def ask(n: int, ctx: Context) -> int:
        accepted = 0
        for _ in range(n):
            result = await hitl.confirm(ctx, "Go on?")
            accepted += isinstance(result, Accepted) and result.data is True
            assert len(deadlines()) <= 1  # only the question being asked (the server's timeout applies)
        return accepted

    n = 1000
    async with Client(server, mode=mode, elicitation_callback=human, input_required_max_rounds=n + 1) as client:
        with anyio.fail_after(50):
            assert text_of(await client.call_tool("ask", {"n": n})) == str(n)
    assert len(deadlines()) == 0


async def test_a_cancelled_call_ends_its_question_at_once_and_leaves_no_deadline(transport: Transport) -> None:
    scene = watched_server(lambda hitl, ctx: hitl.confirm(ctx, "Wait?"))
    person = SlowHuman()
    async with connect(scene.server, transport, "legacy", elicitation_callback=person) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "ask", {})
                await person.first.wait()
                assert deadlines().waiting == 1
                tg.cancel_scope.cancel()
            await scene.cancelled.wait()
        await settled(scene.hitl)
        assert len(deadlines()) == 0


async def test_a_client_gone_with_its_question_open_ends_the_wait_and_leaves_no_deadline() -> None:
    server, hitl = new_server()
    ended: list[str] = []
    body_ended = anyio.Event()

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Wait?")
        except BaseException as exc:
            ended.append(type(exc).__name__)
            body_ended.set()
            raise
        return "answered"

    async def call(client: Client) -> None:
        with suppress(Exception):  # its connection closes under it
            await client.call_tool("ask", {})

    person = SlowHuman()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            async with Client(server, mode="legacy", elicitation_callback=person) as client:
                tg.start_soon(call, client)
                await person.first.wait()
                assert deadlines().waiting == 1
            # The client closed its connection with the question open.
            await body_ended.wait()
    assert ended == ["ElicitationClientError"]  # the SDK says the connection closed
    assert len(deadlines()) == 0


async def test_a_deadline_a_hook_gives_is_the_one_kept(mode: str) -> None:
    server, hitl = new_server(timeout=None)
    given: dict[str, float | None] = {"Short?": 0.2, "Unbounded?": None}

    @hitl.before_ask
    def retime(question: QuestionInfo) -> Ask:
        return Ask(timeout=given[question.message])

    del retime
    timed_out = anyio.Event()

    @server.tool()
    async def ask(message: str, ctx: Context) -> str:
        try:
            result = await hitl.confirm(ctx, message, timeout=None if message == "Short?" else 0.1)
        except ElicitationTimeout as exc:
            timed_out.set()
            return f"timed out after {exc.timeout}"
        return result.action

    if mode == "legacy":
        person = SlowHuman()
        async with Client(server, mode=mode, elicitation_callback=person) as client:
            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:

                    async def unbounded() -> None:
                        # Asked with 0.1 s, given no limit by the hook: still waiting when the short one times out.
                        await client.call_tool("ask", {"message": "Unbounded?"})

                    tg.start_soon(unbounded)
                    await person.first.wait()
                    assert deadlines().waiting == 0
                    assert text_of(await client.call_tool("ask", {"message": "Short?"})) == "timed out after 0.2"
                    assert hitl.pending_questions == 1
                    tg.cancel_scope.cancel()
    else:
        async with by_hand(server) as client:
            unbounded = await Rounds("ask", {"message": "Unbounded?"}).start(client)
            short = await Rounds("ask", {"message": "Short?"}).start(client)
            assert deadlines().waiting == 3  # the short question's deadline, and each run's clock between rounds
            await reached(timed_out, 10)
            final = await Rounds("ask", {"message": "Short?"}).answer(client, short, True)
            assert isinstance(final, CallToolResult)
            assert text_of(final) == "timed out after 0.2"
            assert hitl.pending_questions == 1  # the unbounded one still waits
            final = await Rounds("ask", {"message": "Unbounded?"}).answer(client, unbounded, True)
            assert isinstance(final, CallToolResult)
            assert text_of(final) == "accept"
    assert len(deadlines()) == 0
