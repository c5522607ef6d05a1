"""Redis is killed while runs wait on two node processes, and comes back with its data or without it.

With its data (an append-only file, fsynced on every write), every waiting run
completes once after Redis is back, whichever node each answer lands on; a
retry sent while Redis is down is refused as `store_unavailable` and works,
sent again, once it is back. Without its data, each node records the runs it
still holds again, so every one of them completes once; a run no process holds
any more (its node restarted too) is refused as `unknown_elicitation`, and its
client, calling the tool again, completes it once. No node crashes or logs a
traceback, and nothing is answered twice.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult

from tests.chaos.conftest import open_gate, pair
from tests.chaos.nodes import Node, effects_of, running
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of

pytestmark = pytest.mark.anyio

WEB, CACHE, MAIL = (Rounds("provision", {"name": name}) for name in ("web", "cache", "mail"))
DOC = Rounds("review", {"name": "doc"})


def finished(result: CallToolResult | InputRequiredResult) -> str:
    assert isinstance(result, CallToolResult), result
    assert not result.is_error, text_of(result)
    return text_of(result)


def waiting(result: CallToolResult | InputRequiredResult) -> InputRequiredResult:
    assert isinstance(result, InputRequiredResult), result
    return result


def refusal(error: pytest.ExceptionInfo[MCPError]) -> str | None:
    data = error.value.error.data
    return data.get("reason") if isinstance(data, dict) else None


@pytest.fixture
def redis_dir(tmp_path: Path) -> Path:
    return tmp_path / "redis"


async def test_runs_waiting_through_a_redis_restart_with_its_data_each_complete_once(
    redis_dir: Path, effects: Path, gates: Path
) -> None:
    redis = RedisServer(redis_dir, persistent=True)
    await redis.start()
    a, b = pair(redis.url, effects, gates)
    for name in ("web", "cache", "mail"):
        open_gate(gates, name)
    try:
        async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
            web_1 = await WEB.start(on_a)  # A's, before its step
            cache_2 = waiting(await CACHE.answer(on_a, await CACHE.start(on_a), "beta"))  # A's, past its step
            mail_1 = await MAIL.start(on_b)  # B's, before its step
            doc_1 = await DOC.start(on_b)  # B's, its step done
            await redis.kill()
            with pytest.raises(MCPError) as down_elsewhere:
                await WEB.answer(on_b, web_1, "alpha")
            with pytest.raises(MCPError) as down_here:
                await MAIL.answer(on_b, mail_1, "gamma")
            await redis.start()
            with anyio.fail_after(20):
                web_2 = waiting(await WEB.answer(on_b, web_1, "alpha"))  # the same retries, sent again
                mail_2 = waiting(await MAIL.answer(on_b, mail_1, "gamma"))
                doc_2 = waiting(await DOC.answer(on_a, doc_1, "ada"))
                done = [
                    finished(await WEB.answer(on_a, web_2, "large")),
                    finished(await CACHE.answer(on_b, cache_2, "small")),
                    finished(await MAIL.answer(on_a, mail_2, "large")),
                    finished(await DOC.answer(on_b, doc_2, "approve")),
                ]
            await a.holds_nothing()
            await b.holds_nothing()
            a.assert_alive_and_clean()
            b.assert_alive_and_clean()
    finally:
        await redis.stop()
    assert refusal(down_elsewhere) == "store_unavailable"
    assert refusal(down_here) == "store_unavailable"
    assert done == [
        "web: vm-web large (code alpha) finished on node-a",
        "cache: vm-cache small (code beta) finished on node-a",
        "mail: vm-mail large (code gamma) finished on node-b",
        "doc: ticket-doc approve by ada finished on node-b",
    ]
    assert sorted(effects_of(effects)) == [
        "create-vm cache on node-a",
        "create-vm mail on node-b",
        "create-vm web on node-a",
        "open-ticket doc on node-b",
    ]


async def test_runs_waiting_through_a_redis_restart_without_its_data_are_recorded_again_and_each_complete_once(
    redis_dir: Path, effects: Path, gates: Path
) -> None:
    redis = RedisServer(redis_dir)  # not persistent: it comes back empty
    await redis.start()
    a, b = pair(redis.url, effects, gates)
    for name in ("web", "cache", "mail"):
        open_gate(gates, name)
    try:
        async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
            web_1 = await WEB.start(on_a)  # A's, before its step
            cache_2 = waiting(await CACHE.answer(on_a, await CACHE.start(on_a), "beta"))  # A's, past its step
            mail_1 = await MAIL.start(on_b)  # B's, before its step
            doc_1 = await DOC.start(on_b)  # B's, its step done
            since_a, since_b = a.mark(), b.mark()
            await redis.kill()
            await redis.start()
            # Each node finds the store forgot it, and records the runs it holds again.
            assert "recorded 2 lost run(s) again" in a.lines[await a.said("lost run", since=since_a)]
            assert "recorded 2 lost run(s) again" in b.lines[await b.said("lost run", since=since_b)]
            with anyio.fail_after(20):  # every answer lands on the node that does not hold its run
                web_2 = waiting(await WEB.answer(on_b, web_1, "alpha"))
                mail_2 = waiting(await MAIL.answer(on_a, mail_1, "gamma"))
                doc_2 = waiting(await DOC.answer(on_a, doc_1, "ada"))
                done = [
                    finished(await WEB.answer(on_b, web_2, "large")),
                    finished(await CACHE.answer(on_b, cache_2, "small")),
                    finished(await MAIL.answer(on_a, mail_2, "large")),
                    finished(await DOC.answer(on_a, doc_2, "approve")),
                ]
            await a.holds_nothing()
            await b.holds_nothing()
            a.assert_alive_and_clean()
            b.assert_alive_and_clean()
    finally:
        await redis.stop()
    assert done == [
        "web: vm-web large (code alpha) finished on node-a",
        "cache: vm-cache small (code beta) finished on node-a",
        "mail: vm-mail large (code gamma) finished on node-b",
        "doc: ticket-doc approve by ada finished on node-b",
    ]
    assert sorted(effects_of(effects)) == [
        "create-vm cache on node-a",
        "create-vm mail on node-b",
        "create-vm web on node-a",
        "open-ticket doc on node-b",
    ]


async def test_after_redis_and_a_node_restart_without_data_its_clients_are_refused_and_start_over_once(
    redis_dir: Path, effects: Path, gates: Path
) -> None:
    redis = RedisServer(redis_dir)
    await redis.start()
    a, b = pair(redis.url, effects, gates)
    a_again = Node(redis.url, "node-a", effects, gates)  # the same node, restarted
    for name in ("web", "mail"):
        open_gate(gates, name)
    try:
        async with running(a, b), by_hand(b.url) as on_b:
            async with by_hand(a.url) as on_a:
                web_1 = await WEB.start(on_a)  # A's: nothing will hold it any more
            mail_1 = await MAIL.start(on_b)  # B's: B still holds it
            since_b = b.mark()
            await redis.kill()
            a.kill()
            await redis.start()
            async with running(a_again), by_hand(a_again.url) as on_a:
                await b.said("recorded 1 lost run(s) again", since=since_b)
                refused = []
                for client in (on_b, on_a):
                    with pytest.raises(MCPError) as error:
                        await WEB.answer(client, web_1, "alpha")
                    refused.append(refusal(error))
                with anyio.fail_after(20):
                    web_again = waiting(await WEB.answer(on_a, await WEB.start(on_a), "alpha"))  # called again
                    mail_2 = waiting(await MAIL.answer(on_a, mail_1, "gamma"))
                    done = [
                        finished(await WEB.answer(on_b, web_again, "large")),
                        finished(await MAIL.answer(on_a, mail_2, "large")),
                    ]
                with pytest.raises(MCPError) as still:  # the lost run's retry never reaches the new one
                    await WEB.answer(on_b, web_1, "alpha")
                refused.append(refusal(still))
                await a_again.holds_nothing()
                await b.holds_nothing()
                a_again.assert_alive_and_clean()
                b.assert_alive_and_clean()
    finally:
        await redis.stop()
    assert refused == ["unknown_elicitation"] * 3
    assert done == [
        "web: vm-web large (code alpha) finished on node-a",
        "mail: vm-mail large (code gamma) finished on node-b",
    ]
    assert sorted(effects_of(effects)) == ["create-vm mail on node-b", "create-vm web on node-a"]
