"""A 2026-07-28 retry whose connection drops while the node works on it, sent again byte for byte.

Two node processes share a real Redis. The retry is a raw HTTP POST; the node
takes its answer and runs the tool's `step`, which waits on a gate the test
holds; the test closes the socket then, before any response. On 2026-07-28 a
closed request does not cancel its run: the run goes on, and the same request
sent again (to the same node, or to the other one, which passes it to the
owner) gets the run's next outcome. The tool finishes with every answer, and
its step ran once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import anyio
import pytest
from mcp_types import CallToolResult, InputRequiredResult

from tests.chaos.conftest import open_gate, pair
from tests.chaos.nodes import Node, effects_of, running
from tests.chaos.wire import post, posted_then_dropped, retry_body
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of

pytestmark = pytest.mark.anyio

WEB = Rounds("provision", {"name": "web"})
When = Literal["while its step runs", "after the run moved on"]


@pytest.fixture(params=["while its step runs", "after the run moved on"], ids=["mid-step", "moved-on"])
def when(request: pytest.FixtureRequest) -> When:
    """When the request comes again: while the step still waits, or once the body asks its next question."""
    return request.param  # type: ignore[no-any-return]


def question_of(result: CallToolResult | InputRequiredResult) -> str:
    assert isinstance(result, InputRequiredResult), result
    [request] = (result.input_requests or {}).values()
    return str(request.params.message)


async def dropped_then_resent(owner: Node, resent_to: Node, gates: Path, when: When) -> None:
    """Start `web` on `owner`, drop its first retry mid-step, send it again to `resent_to`, and finish the run."""
    async with by_hand(owner.url) as on_owner:
        first = await WEB.start(on_owner)
    body = retry_body(WEB.tool, WEB.arguments, first, "alpha")
    since = owner.mark()
    async with posted_then_dropped(owner.url, body) as request:
        await owner.said("STEP create-vm web waits", since=since)  # the answer is taken; the step waits on us
        await request.drop()
        await owner.said("dropped", since=since)
    outcome: list[CallToolResult | InputRequiredResult] = []
    if when == "after the run moved on":
        open_gate(gates, "web")
        await owner.said("ASK Size for web?", since=since)  # nobody waits for the run: it asked on its own
        outcome.append(await post(resent_to.url, body))
    else:
        arrived = resent_to.mark()

        async def resend() -> None:
            outcome.append(await post(resent_to.url, body))

        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                tg.start_soon(resend)
                await resent_to.said("in tools/call", since=arrived)
                open_gate(gates, "web")
    assert question_of(outcome[0]) == "Size for web?"
    second = outcome[0]
    assert isinstance(second, InputRequiredResult)
    async with by_hand(resent_to.url) as client:
        final = await WEB.answer(client, second, "large")
    assert isinstance(final, CallToolResult)
    assert text_of(final) == f"web: vm-web large (code alpha) finished on {owner.name}"


async def test_a_retry_dropped_mid_step_and_sent_again_to_the_same_node_completes_with_the_step_once(
    redis: RedisServer, effects: Path, gates: Path, when: When
) -> None:
    a, b = pair(redis.url, effects, gates)
    async with running(a, b):
        await dropped_then_resent(a, a, gates, when)
        assert effects_of(effects) == ["create-vm web on node-a"]
        await a.holds_nothing()
        a.assert_alive_and_clean()
        b.assert_alive_and_clean()


async def test_a_retry_dropped_mid_step_and_sent_again_to_the_other_node_completes_with_the_step_once(
    redis: RedisServer, effects: Path, gates: Path, when: When
) -> None:
    a, b = pair(redis.url, effects, gates)
    async with running(a, b):
        await dropped_then_resent(a, b, gates, when)
        assert effects_of(effects) == ["create-vm web on node-a"]
        await a.holds_nothing()
        await b.holds_nothing()
        a.assert_alive_and_clean()
        b.assert_alive_and_clean()
