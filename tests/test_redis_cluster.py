"""A real Redis Cluster losing a shard's master (SIGKILL) while runs wait: its replica takes over, and nothing is lost.

The store contract suite (tests/stores/) and the two-node tests of tests/test_cluster.py run on the same
session cluster; these tests fail a master over, then let the killed node rejoin as a replica.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
import redis.asyncio as aioredis
from mcp_types import CallToolResult, InputRequiredResult

from elicitkit.stores.redis_cluster import RedisClusterBroker, RedisClusterStore
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer
from tests.scenes import by_hand, text_of
from tests.stores.conftest import unique_prefix
from tests.test_cluster import CODE_WORD, Node, effects_of, provision, running

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def failed_over(cluster: RedisCluster, master: RedisServer) -> AsyncIterator[RedisServer]:
    """Kill `master` once its replica has every write, promote the replica (yielded); the killed node rejoins
    as a replica on the way out, so that the session's cluster has a replica for every master again."""
    await cluster.synced(master)
    try:
        yield await cluster.fail_over(master)
    finally:
        await cluster.rejoin(master)


async def runs_owned_by(cluster: RedisCluster, node: str) -> list[bytes]:
    """The keys of the run records that `node` owns, on every shard."""
    client = aioredis.RedisCluster.from_url(cluster.url.replace("redis+cluster://", "redis://"))
    try:
        keys = [key async for key in client.scan_iter(match="elicitkit:run:{*")]
        return [key for key in keys if await client.hget(key, "owner") == node.encode()]  # type: ignore[misc]
    finally:
        await client.aclose()


async def test_a_listener_follows_its_channel_to_the_new_master_and_keeps_receiving(
    redis_cluster: RedisCluster,
) -> None:
    prefix = unique_prefix()
    broker = RedisClusterBroker(redis_cluster.url, prefix=prefix)
    try:
        async with broker.listen("node-a") as messages:
            assert await broker.publish("node-a", b"before") == 1
            with anyio.fail_after(5):
                assert await anext(messages) == b"before"
            received: list[bytes] = []
            async with anyio.create_task_group() as tg:

                async def read() -> None:
                    received.append(await anext(messages))

                tg.start_soon(read)
                async with failed_over(redis_cluster, redis_cluster.master_of(f"{prefix}node-a".encode())):
                    with anyio.fail_after(10):
                        # The read fails with the master, and the listener subscribes on the promoted replica.
                        await messages.resubscribed.wait()  # type: ignore[attr-defined]
                    assert await broker.listeners("node-a") == 1
                    assert await broker.publish("node-a", b"after") == 1
            assert received == [b"after"]
    finally:
        await broker.aclose()


async def test_a_store_keeps_a_runs_records_through_a_failover_of_their_shard(redis_cluster: RedisCluster) -> None:
    store = RedisClusterStore(redis_cluster.url, prefix=unique_prefix())
    expires = time.time() + 3600
    try:
        await store.put_run("run-1", "node-a", b"record", expires)
        await store.append_journal("run-1", 0, b"answer")
        await store.put_question("q-1", "run-1", b"question", expires)
        async with failed_over(redis_cluster, redis_cluster.master_of(f"{store.prefix}run:{{run-1}}".encode())):
            # The client finds the new master itself: the first command after the failover gets a retry.
            assert await store.get_run("run-1") == ("node-a", b"record")
            assert await store.take_round("run-1", "round:{run-1}:n1", expires, {1: b"next"}, ["q-1"]) == {1}
            assert await store.journal("run-1") == {0: b"answer", 1: b"next"}
            assert await store.run_questions("run-1") == {}
    finally:
        await store.aclose()


async def test_a_run_waiting_while_its_shards_master_is_killed_completes_with_nothing_lost(
    redis_cluster: RedisCluster, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.log"
    a, b = Node(redis_cluster.url, "shard-a", effects), Node(redis_cluster.url, "shard-b", effects)
    ledger = provision("ledger")
    async with running(a, b), by_hand(a.url) as on_a, by_hand(b.url) as on_b:
        first = await ledger.start(on_a)
        second = await ledger.answer(on_a, first, CODE_WORD)  # A runs the step, then asks again
        assert isinstance(second, InputRequiredResult)
        (run_key,) = await runs_owned_by(redis_cluster, "shard-a")
        async with failed_over(redis_cluster, redis_cluster.master_of(run_key)) as promoted:
            assert redis_cluster.master_of(run_key) is promoted
            final = await ledger.answer(on_b, second, "large")  # lands on B, which forwards it to A
    assert isinstance(final, CallToolResult)
    # A still holds the run, unless its listener was on the killed shard and came back after B looked for it:
    # then B replays the run from its journal. Either way the answers and the step are there, once.
    assert text_of(final) in {f"ledger: vm-ledger large (code {CODE_WORD}) finished on shard-{n}" for n in "ab"}
    assert effects_of(effects) == ["create-vm ledger on shard-a"]
