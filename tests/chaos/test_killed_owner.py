"""The node that owns runs is killed with SIGKILL mid-run; the other node completes every run, each step once.

Redis drops a killed process's subscription with its connection, so the other
node knows at once that the owner is gone, takes its runs over and replays
them from the journal: every journaled answer and step comes back without
running again. Killed while a step waits (before its side effect), the step
runs once, on the node that replays it.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_types import CallToolResult, InputRequiredResult

from tests.chaos.conftest import open_gate, pair
from tests.chaos.nodes import effects_of, running
from tests.chaos.wire import post, posted_then_dropped, retry_body
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of

pytestmark = pytest.mark.anyio


def question_of(result: CallToolResult | InputRequiredResult) -> str:
    assert isinstance(result, InputRequiredResult), result
    [request] = (result.input_requests or {}).values()
    return str(request.params.message)


async def test_a_retry_whose_owner_is_killed_mid_step_sent_again_to_the_other_node_completes_the_step_once(
    redis: RedisServer, effects: Path, gates: Path
) -> None:
    a, b = pair(redis.url, effects, gates)
    web = Rounds("provision", {"name": "web"})
    async with running(a, b), by_hand(b.url) as on_b:
        async with by_hand(a.url) as on_a:
            first = await web.start(on_a)
        body = retry_body(web.tool, web.arguments, first, "alpha")
        since = a.mark()
        async with posted_then_dropped(a.url, body):
            await a.said("STEP create-vm web waits", since=since)  # A journaled the answer; its step has not run
            a.kill()  # the connection dies with it: the client never hears back
        open_gate(gates, "web")
        with anyio.fail_after(10):
            second = await post(b.url, body)  # the client sends its retry again, to the node that is left
        assert question_of(second) == "Size for web?"
        assert isinstance(second, InputRequiredResult)
        final = await web.answer(on_b, second, "large")
        assert isinstance(final, CallToolResult)
        assert text_of(final) == "web: vm-web large (code alpha) finished on node-b"
        await b.holds_nothing()
        b.assert_alive_and_clean()
    assert effects_of(effects) == ["create-vm web on node-b"]


async def test_an_answer_forwarded_to_an_owner_killed_mid_step_completes_on_the_node_it_reached(
    redis: RedisServer, effects: Path, gates: Path
) -> None:
    a, b = pair(redis.url, effects, gates)
    web = Rounds("provision", {"name": "web"})
    async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
        first = await web.start(on_a)
        outcome: list[CallToolResult | InputRequiredResult] = []

        async def answer_on_b() -> None:
            outcome.append(await web.answer(on_b, first, "alpha"))  # B forwards it to A, the owner

        since = a.mark()
        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_on_b)
                await a.said("STEP create-vm web waits", since=since)  # A resumed the body with B's answer
                a.kill()
                open_gate(gates, "web")
        assert question_of(outcome[0]) == "Size for web?"
        second = outcome[0]
        assert isinstance(second, InputRequiredResult)
        final = await web.answer(on_b, second, "small")
        assert isinstance(final, CallToolResult)
        assert text_of(final) == "web: vm-web small (code alpha) finished on node-b"
        await b.holds_nothing()
        b.assert_alive_and_clean()
    assert effects_of(effects) == ["create-vm web on node-b"]


async def test_every_run_of_a_killed_owner_and_of_the_survivor_completes_once_on_the_survivor(
    redis: RedisServer, effects: Path, gates: Path
) -> None:
    a, b = pair(redis.url, effects, gates)
    for name in ("web", "cache", "mail"):
        open_gate(gates, name)
    web, cache, mail = (Rounds("provision", {"name": name}) for name in ("web", "cache", "mail"))
    doc = Rounds("review", {"name": "doc"})
    async with running(a, b), by_hand(b.url) as on_b:
        async with by_hand(a.url) as on_a:
            web_1 = await web.start(on_a)  # waits for its first answer, on A
            cache_2 = await cache.answer(on_a, await cache.start(on_a), "beta")  # past its step, on A
            doc_1 = await doc.start(on_a)  # its step came first, on A
        mail_1 = await mail.start(on_b)  # the survivor's own
        a.kill()
        with anyio.fail_after(20):
            web_2 = await web.answer(on_b, web_1, "alpha")
            assert isinstance(web_2, InputRequiredResult)
            assert isinstance(cache_2, InputRequiredResult)
            doc_2 = await doc.answer(on_b, doc_1, "ada")
            assert isinstance(doc_2, InputRequiredResult)
            mail_2 = await mail.answer(on_b, mail_1, "gamma")
            assert isinstance(mail_2, InputRequiredResult)
            finals = [
                await web.answer(on_b, web_2, "large"),
                await cache.answer(on_b, cache_2, "small"),
                await doc.answer(on_b, doc_2, "approve"),
                await mail.answer(on_b, mail_2, "large"),
            ]
        assert [text_of(final) for final in finals if isinstance(final, CallToolResult)] == [
            "web: vm-web large (code alpha) finished on node-b",
            "cache: vm-cache small (code beta) finished on node-b",
            "doc: ticket-doc approve by ada finished on node-b",
            "mail: vm-mail large (code gamma) finished on node-b",
        ]
        await b.holds_nothing()
        b.assert_alive_and_clean()
    assert sorted(effects_of(effects)) == [
        "create-vm cache on node-a",
        "create-vm mail on node-b",
        "create-vm web on node-b",
        "open-ticket doc on node-a",
    ]
