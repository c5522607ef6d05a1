"""A frozen node (SIGSTOP) whose run another node took over keeps no stale copy once it is thawed.

The run starts on node B, and B freezes: it keeps its Redis subscription, so A,
given the answer, waits for it until B's heartbeat lapses (its 3 s lease), then
takes the run over and replays it. B is thawed and handed the next answer at
once: B passes it to A, the run's owner now, which completes the run; B's copy
is dropped (it holds no run and no question). With a `step` after the question
(`provision`) and without one (`review`, whose step comes first), the step ran
once.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp_types import CallToolResult, InputRequiredResult

from tests.chaos.conftest import open_gate, pair
from tests.chaos.nodes import effects_of, running
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of

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


@pytest.mark.parametrize("tool", [PROVISION, REVIEW], ids=["a step after the question", "no step after it"])
async def test_a_frozen_node_thawed_after_a_takeover_passes_the_next_answer_to_the_owner_and_keeps_no_copy(
    redis: RedisServer, effects: Path, gates: Path, tool: Tool
) -> None:
    a, b = pair(redis.url, effects, gates)
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
