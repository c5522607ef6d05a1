"""A frozen node (SIGSTOP) whose run another node took over keeps no stale copy once it is thawed.

The run starts on node B, and B freezes: it keeps its Redis subscription, so A,
given the answer, waits for it until B's heartbeat lapses (its 3 s lease), then
takes the run over and replays it. B is thawed and handed the next answer at
once: B passes it to A, the run's owner now, which completes the run; B's copy
is dropped (it holds no run and no question). With a `step` after the question
(`provision`) and without one (`review`, whose step comes first), the step ran
once.

The last test is the in-process regression for a copy thawed after half its run's expiry (when the run's
record is due for renewal): renewing it would write the record as its own and take the run back.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit import Elicitation
from elicitkit._core.kinds import Hosting, new_id
from elicitkit._engine.run import Run
from elicitkit._engine.tenure import NotHeld, Tenure
from elicitkit.stores.redis import RedisBroker, RedisStore
from tests.chaos.conftest import open_gate, pair
from tests.chaos.nodes import SECRET, effects_of, running
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of
from tests.stores.conftest import unique_prefix

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Tool:
    rounds: Rounds
    answers: tuple[str, str]
    next_question: str
    finished: str
    effect: str


PROVISION = Tool(
    Rounds("provision", {"name": "web"}),
    ("alpha", "large"),
    "Size for web?",
    "web: vm-web large (code alpha) finished on node-a",
    "create-vm web on node-a",  # the step follows the first question: A's replay performs it
)
REVIEW = Tool(
    Rounds("review", {"name": "doc"}),
    ("ada", "approve"),
    "Verdict for doc?",
    "doc: ticket-doc approve by ada finished on node-a",
    "open-ticket doc on node-b",  # the step came first, on B, before it froze: A's replay reads it back
)


def question_of(result: CallToolResult | InputRequiredResult) -> str:
    assert isinstance(result, InputRequiredResult), result
    [request] = (result.input_requests or {}).values()
    return str(request.params.message)


@pytest.mark.parametrize(
    ("tool", "framework"),
    [(PROVISION, "mcp"), (REVIEW, "mcp"), (PROVISION, "fastmcp")],
    ids=["step-after-the-question", "no-step-after-it", "fastmcp-nodes"],
)
async def test_a_frozen_node_thawed_after_a_takeover_passes_the_next_answer_to_the_owner_and_keeps_no_copy(
    redis: RedisServer, effects: Path, gates: Path, tool: Tool, framework: str
) -> None:
    a, b = pair(redis.url, effects, gates, framework)
    open_gate(gates, "web")  # provision's step is not held here
    async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
        first = await tool.rounds.start(on_b)  # the run is B's
        assert b.process is not None
        b.signal(signal.SIGSTOP)
        try:
            with anyio.fail_after(15):  # B's lease (3 s) lapses, then A takes the run over
                second = await tool.rounds.answer(on_a, first, tool.answers[0])
        finally:
            thawed = b.mark()
            b.signal(signal.SIGCONT)
        assert question_of(second) == tool.next_question
        assert isinstance(second, InputRequiredResult)
        final = await tool.rounds.answer(on_b, second, tool.answers[1])  # at once: B may still hold its copy
        assert isinstance(final, CallToolResult)
        assert text_of(final) == tool.finished
        await b.said("drops its stale copy", since=thawed)
        await b.holds_nothing()
        await a.holds_nothing()
        a.assert_alive_and_clean()
        b.assert_alive_and_clean()
    assert effects_of(effects) == [tool.effect]


@dataclass
class StaleCopy:
    """Node B's copy of a run, stored by B, which node A then took over while B was frozen."""

    store: RedisStore
    hitl: Elicitation
    run: Run

    @property
    def tenure(self) -> Tenure:
        return self.hitl._engine.runs.tenure

    async def owner(self) -> str | None:
        return await self.hitl._engine.records.owner_of(self.run.id)


@asynccontextmanager
async def stale_copy(
    redis_server: RedisServer, stored_for: float, questions: dict[str, bytes]
) -> AsyncIterator[StaleCopy]:
    """B stores its run for `stored_for` seconds (with `questions`, which B wrote), then A claims it."""
    prefix = unique_prefix()
    store = RedisStore(redis_server.url, prefix=prefix)
    hitl = Elicitation(
        MCPServer("stale"),
        store=store,
        broker=RedisBroker(redis_server.url, prefix=prefix),
        secret=SECRET,
        node_id="node-b",
    )
    engine = hitl._engine
    run = Run(new_id(), "provision", None, mrtr=True, hosting=Hosting.HOSTED)
    engine.registry.runs[run.id] = run
    try:
        await engine.records.keep_run(run, stored_for)
        for question_id, record in questions.items():
            await store.put_question(question_id, run.id, record, 4e9)
            run.wrote_record(question_id)  # its end would delete the question records it wrote
        assert await store.claim_run(run.id, "node-b", "node-a")  # node-a took it over while node-b was frozen
        yield StaleCopy(store, hitl, run)
    finally:
        await hitl.aclose()


async def test_a_stale_copy_renewing_its_runs_record_leaves_the_run_to_the_node_that_took_it_over(
    redis_server: RedisServer,
) -> None:
    # Written long enough ago that its renewal is due.
    async with stale_copy(redis_server, 5.0, {}) as copy:
        with pytest.raises(NotHeld):
            await copy.tenure.store_run(copy.run)  # node-b thawed, about to hand out the copy's next round
        assert await copy.owner() == "node-a"
        assert copy.run.stale
        assert copy.hitl.active_runs == 0


async def test_a_stale_copy_finishing_its_run_leaves_the_run_and_its_questions_to_the_node_that_took_it_over(
    redis_server: RedisServer,
) -> None:
    # Its end would keep the finished run's record for a resend of the last retry, written as its own, and delete
    # the run's questions: it does neither (one fenced write, no read of the owner first).
    async with stale_copy(redis_server, 60.0, {"q-1": b"node-a's question"}) as copy:
        await copy.tenure.forget(copy.run, kept=True)  # node-b thawed, and its copy finished
        assert await copy.owner() == "node-a"
        assert await copy.store.get_question("q-1") == (copy.run.id, b"node-a's question")
        assert copy.run.stale
        assert copy.hitl.active_runs == 0
