"""The Redis client sends the commands of one event-loop turn together, and each caller still gets its own reply.

Against a real redis-server: the commands that several tasks issue in one turn
share a pooled connection and a round trip; each caller gets its own command's
reply or error; a caller cancelled mid-turn takes nothing from the others; a
script Redis forgot is loaded again; and a Redis that stops answering fails
every command of a turn within the command deadline, leaving the connection in
step with Redis once it answers again.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from elicitkit.stores import _redis_client
from tests.redis_server import RedisServer

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(redis_server: RedisServer) -> AsyncIterator[_redis_client._Client]:
    opened = _redis_client._connect(redis_server.url)
    assert isinstance(opened, _redis_client._Client)
    try:
        yield opened
    finally:
        await opened.aclose()


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex}:"


def checkouts(client: _redis_client._Client, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the pooled connections `client` takes from now on."""
    taken: list[int] = []
    pool = client.connection_pool
    original = pool.get_connection

    async def get_connection(*args: Any, **kwargs: Any) -> Any:
        taken.append(1)
        return await original(*args, **kwargs)

    monkeypatch.setattr(pool, "get_connection", get_connection)
    return taken


async def in_one_turn(*calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Each call's result (or the exception it raised), all of them started in the same event-loop turn."""
    return await asyncio.gather(*(call() for call in calls), return_exceptions=True)


async def test_the_commands_of_one_turn_share_a_round_trip_and_each_gets_its_own_reply(
    client: _redis_client._Client, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"{prefix}{i}" for i in range(20)]
    await client.mset({key: f"value-{i}" for i, key in enumerate(keys)})
    taken = checkouts(client, monkeypatch)
    replies = await in_one_turn(*(lambda key=key: client.get(key) for key in keys))
    assert replies == [f"value-{i}".encode() for i in range(20)]
    assert len(taken) == 1  # one connection, one write and one read for the twenty
    await client.delete(*keys)


async def test_a_command_alone_goes_out_as_before(
    client: _redis_client._Client, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = checkouts(client, monkeypatch)
    assert await client.set(f"{prefix}alone", "1") is True
    assert await client.get(f"{prefix}alone") == b"1"
    assert len(taken) == 2
    await client.delete(f"{prefix}alone")


async def test_a_failing_command_fails_alone_and_replies_keep_their_types(
    client: _redis_client._Client, prefix: str
) -> None:
    await client.set(f"{prefix}text", "plain")
    await client.hset(f"{prefix}hash", mapping={"a": "1", "b": "2"})
    wrong, fields, exists, text = await in_one_turn(
        lambda: client.hget(f"{prefix}text", "a"),  # WRONGTYPE: a string is not a hash
        lambda: client.hgetall(f"{prefix}hash"),
        lambda: client.exists(f"{prefix}text", f"{prefix}missing"),
        lambda: client.get(f"{prefix}text"),
    )
    assert isinstance(wrong, ResponseError) and "WRONGTYPE" in str(wrong)
    assert fields == {b"a": b"1", b"b": b"2"}  # parsed by the command's own response callback
    assert exists == 1
    assert text == b"plain"
    await client.delete(f"{prefix}text", f"{prefix}hash")


@pytest.mark.parametrize("cancelled", [0, 1], ids=["the first of the turn", "one riding with it"])
async def test_a_caller_cancelled_mid_turn_takes_nothing_from_the_others(
    client: _redis_client._Client, prefix: str, cancelled: int, caplog: pytest.LogCaptureFixture
) -> None:
    await client.mset({f"{prefix}{i}": str(i) for i in range(3)})
    caplog.set_level(logging.ERROR, logger="asyncio")
    tasks = [asyncio.ensure_future(client.get(f"{prefix}{i}")) for i in range(3)]
    await asyncio.sleep(0)  # every task has issued its command: the turn's first one waits for the turn to end
    tasks[cancelled].cancel()
    with anyio.fail_after(5):
        done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[cancelled], asyncio.CancelledError)
    assert [reply for i, reply in enumerate(done) if i != cancelled] == [
        str(i).encode() for i in range(3) if i != cancelled
    ]
    with anyio.fail_after(5):  # the turn's pipeline is over, and it gave its connection back
        await asyncio.gather(*(client._sending or ()))
    assert not client.connection_pool._in_use_connections
    assert await client.get(f"{prefix}0") == b"0"  # and the connection is in step with Redis
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    await client.delete(*(f"{prefix}{i}" for i in range(3)))


async def test_a_script_redis_forgot_is_loaded_again_for_every_command_of_the_turn(
    client: _redis_client._Client, prefix: str
) -> None:
    script = client.register_script(f"return redis.call('INCR', KEYS[1]) -- {uuid.uuid4().hex}")
    assert await script(keys=[f"{prefix}n"]) == 1
    await client.script_flush()
    replies = await in_one_turn(*(lambda: script(keys=[f"{prefix}n"]) for _ in range(4)))
    assert sorted(replies) == [2, 3, 4, 5]  # each ran once: none twice, none lost
    await client.delete(f"{prefix}n")


async def test_a_frozen_redis_fails_every_command_of_a_turn_within_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_client, "COMMAND_TIMEOUT", 0.3)
    redis = RedisServer(tmp_path)
    await redis.start()
    client = _redis_client._connect(redis.url)
    try:
        await client.set("k", "before")
        redis.signal(signal.SIGSTOP)
        started = anyio.current_time()
        try:
            with anyio.fail_after(10):
                failed = await in_one_turn(*(lambda: client.get("k") for _ in range(3)))
        finally:
            redis.signal(signal.SIGCONT)
        assert all(isinstance(reply, RedisTimeoutError) for reply in failed), failed
        assert anyio.current_time() - started < 2.0
        with anyio.fail_after(10):  # answered again: no reply of the frozen turn comes out of step
            assert await in_one_turn(lambda: client.set("k", "after"), lambda: client.get("k")) == [True, b"after"]
    finally:
        await client.aclose()
        await redis.stop()


async def test_a_redis_that_is_gone_fails_every_command_of_a_turn(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path)
    await redis.start()
    client = _redis_client._connect(redis.url)
    try:
        await client.set("k", "1")
        await redis.stop()
        with anyio.fail_after(30):
            failed = await in_one_turn(*(lambda: client.get("k") for _ in range(3)))
        assert all(isinstance(reply, RedisConnectionError) for reply in failed), failed
        await redis.start()  # back on the same port: the pool connects again
        with anyio.fail_after(30):
            assert await in_one_turn(lambda: client.set("k", "2"), lambda: client.get("k")) == [True, b"2"]
    finally:
        await client.aclose()
        await redis.stop()
