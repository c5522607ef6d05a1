"""Telling a crashed node from a slow one, over a real Redis.

A node is alive while its heartbeat is fresh and its process still listens on
its channel: a killed process's subscription dies with its connection, so it is
known gone within a fraction of a second; a frozen process keeps it; a
listener that is only reconnecting comes back within the grace.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from elicitkit._crypto import PlainSealer
from elicitkit._engine.cluster import ABSENT_FOR, Cluster
from elicitkit.stores import MemoryBroker, PresenceBroker
from elicitkit.stores.redis import RedisBroker, RedisStore
from tests.redis_server import RedisServer
from tests.stores.conftest import unique_prefix

pytestmark = pytest.mark.anyio

# A node's process reduced to what presence needs: it listens on its channel until it dies.
LISTENER = """
import sys, anyio
from elicitkit.stores.redis import RedisBroker

async def main() -> None:
    broker = RedisBroker(sys.argv[1], prefix=sys.argv[2])
    async with broker.listen(sys.argv[3]) as messages:
        print("LISTENING", flush=True)
        async for _ in messages:
            pass

anyio.run(main)
"""


@asynccontextmanager
async def nodes(redis_server: RedisServer) -> AsyncIterator[tuple[Cluster, RedisBroker, RedisStore]]:
    """This test's view of the cluster: node "watcher", its store and broker, under a prefix of its own."""
    prefix = unique_prefix()
    store, broker = RedisStore(redis_server.url, prefix=prefix), RedisBroker(redis_server.url, prefix=prefix)
    try:
        yield Cluster(store, broker, PlainSealer(), "watcher"), broker, store
    finally:
        await broker.aclose()
        await store.aclose()


async def start_listener(redis_server: RedisServer, broker: RedisBroker, channel: str) -> subprocess.Popen[str]:
    # Popen returns at once; the wait for the listener to subscribe is on a worker thread.
    process = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-c", LISTENER, redis_server.url, broker.prefix, channel], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    with anyio.fail_after(20):
        assert await anyio.to_thread.run_sync(process.stdout.readline) == "LISTENING\n"
    return process


def reap(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGCONT)
    process.kill()
    process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


def test_redis_sees_presence_and_a_process_local_broker_does_not() -> None:
    assert issubclass(RedisBroker, PresenceBroker)
    assert not isinstance(MemoryBroker(), PresenceBroker)


async def test_a_killed_node_is_gone_at_once_though_its_heartbeat_is_fresh(redis_server: RedisServer) -> None:
    async with nodes(redis_server) as (cluster, broker, store):
        process = await start_listener(redis_server, broker, cluster.channel("node-a"))
        try:
            await store.heartbeat("node-a", time.time() + 60)
            assert await cluster.alive("node-a") is True
            process.kill()
            process.wait(timeout=10)
            with anyio.fail_after(1):
                assert await cluster.alive("node-a") is False
        finally:
            reap(process)


async def test_a_frozen_node_still_listens_and_stays_alive(redis_server: RedisServer) -> None:
    async with nodes(redis_server) as (cluster, broker, store):
        process = await start_listener(redis_server, broker, cluster.channel("node-a"))
        try:
            await store.heartbeat("node-a", time.time() + 60)
            process.send_signal(signal.SIGSTOP)
            for _ in range(3):  # several probes, each longer than the grace, all while it is frozen
                with anyio.fail_after(ABSENT_FOR):
                    assert await cluster.alive("node-a") is True
                await anyio.sleep(ABSENT_FOR)
        finally:
            reap(process)


async def test_a_node_whose_heartbeat_lapsed_is_gone_even_while_it_listens(redis_server: RedisServer) -> None:
    async with nodes(redis_server) as (cluster, broker, store), broker.listen(cluster.channel("node-a")):
        assert await cluster.alive("node-a") is False  # never beat
        await store.heartbeat("node-a", time.time() - 1)
        assert await cluster.alive("node-a") is False


async def test_a_listener_that_only_reconnects_is_not_counted_gone(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")  # a server of its own: the test cuts every subscriber's connection
    await server.start()
    try:
        async with nodes(server) as (cluster, broker, store), broker.listen(cluster.channel("node-a")) as messages:
            await store.heartbeat("node-a", time.time() + 60)
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, messages)
                assert await broker._redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
                with anyio.fail_after(ABSENT_FOR * 2):
                    assert await cluster.alive("node-a") is True
                with anyio.fail_after(5):
                    await messages.resubscribed.wait()  # type: ignore[attr-defined]
                tg.cancel_scope.cancel()
    finally:
        await server.stop()


async def _drain(messages: Any) -> None:
    async for _ in messages:
        pass


async def test_a_forward_to_an_owner_that_dies_after_acknowledging_returns_within_a_second(
    redis_server: RedisServer,
) -> None:
    """The owner takes the answer, acknowledges it, then its listener is gone before the outcome: with a
    15 s lease the sender would wait out the heartbeat; with presence it gives up at once (and takes over)."""
    async with nodes(redis_server) as (sender, broker, store):
        owner = Cluster(store, broker, PlainSealer(), "node-a")
        await store.heartbeat("node-a", time.time() + 60)
        took_it, done = anyio.Event(), anyio.Event()
        outcome: list[dict[str, Any] | None] = []

        async def handle(run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
            took_it.set()
            await anyio.sleep_forever()  # resuming the body; the node dies before it is done
            return None

        owner_scope = anyio.CancelScope()

        async def serve_owner(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            with owner_scope:
                await owner.serve(lambda run_id: None, handle, task_status=task_status)

        async def forward() -> None:
            outcome.append(await sender.forward("node-a", "run-1", None, {"op": "answers"}, 2.0, 600.0, 5.0))
            done.set()

        async with anyio.create_task_group() as tg:
            await tg.start(serve_owner)
            tg.start_soon(forward)
            with anyio.fail_after(5):
                await took_it.wait()
            owner_scope.cancel()  # node-a stops listening; its heartbeat is still fresh
            with anyio.fail_after(1):
                await done.wait()
        assert outcome == [None]


async def test_a_node_whose_heartbeat_the_store_forgot_before_its_lease_ran_out_checks_its_runs(
    redis_server: RedisServer,
) -> None:
    """A Redis restarted without its data forgot the node's heartbeat, and with it the records of the node's runs:
    at its next renewal the node finds out, and checks them (recording again those the store lost)."""
    async with nodes(redis_server) as (cluster, _, store):
        rechecked = anyio.Event()

        async def recheck() -> None:
            rechecked.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cluster.heartbeat, 3.0, recheck)
            with anyio.fail_after(5):
                while True:  # its first beat
                    if await store.is_alive("watcher"):
                        break
                    await anyio.sleep(0.01)
            assert await store._redis.delete(store._key("node", "watcher")) == 1
            with anyio.fail_after(5):  # the next renewal comes a third of the lease later
                await rechecked.wait()
            tg.cancel_scope.cancel()
