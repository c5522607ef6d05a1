"""What the Redis store and broker share: redis-py (or a clear error without it), the default prefix, and how a
URL becomes a client."""

from __future__ import annotations

import asyncio
from typing import Any

from elicitkit._engine import deadlines

try:
    import redis.asyncio as aioredis
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError as error:
    raise ImportError("The Redis store needs redis-py: pip install 'elicitkit[redis]'") from error

__all__ = ["COMMAND_TIMEOUT", "DEFAULT_PREFIX", "aioredis"]  # (and `_connect`, `_text`, for the Redis modules)

DEFAULT_PREFIX = "elicitkit:"

COMMAND_TIMEOUT = 10.0
"""Seconds a command may take, waiting for a pooled connection included, before it fails (`redis.exceptions.
TimeoutError`, which callers see as `StoreUnavailable`): a Redis that stopped answering (frozen, or cut off without
its connections closing) never holds a request longer."""


Queued = tuple[tuple[Any, ...], dict[str, Any], "asyncio.Future[Any]"]
"""A command waiting for its turn's round trip: its arguments, its options, and where its reply goes."""


class _Client(aioredis.Redis):
    """redis-py's client, its commands bounded by `COMMAND_TIMEOUT` and sent together when issued together.

    Bounded: each command on the event loop's one deadline timer, in place of redis-py's socket timeout, which
    writes every command from a task of its own (`asyncio.wait_for`) and arms a loop timer for every reply (a fifth
    of a command's Python work, measured).

    Together: the commands that the tasks of one event-loop turn issue go to Redis in one write and come back in
    one read (a pipeline, not a transaction: each command is applied on its own and fails on its own), so a node
    under load pays one round trip, one pooled connection and one wake-up of Redis for several of them (on two
    nodes under load, two commands a round trip on average, measured). A command issued alone goes out on its own
    at the end of its turn.
    """

    _gathering: list[Queued] | None = None
    """The commands issued since this turn's first, which waits for the turn to end and sends them with its own."""
    _sending: set[asyncio.Task[None]] | None = None
    """Pipelines under way (held: the loop keeps only weak references to tasks)."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        scope, entry = deadlines.bounded(deadlines.now() + COMMAND_TIMEOUT)
        try:
            with scope:
                return await self._in_turn(args, options)
        finally:
            deadlines.discard(entry)
        raise RedisTimeoutError(f"Redis did not answer {args[0]} within {COMMAND_TIMEOUT:g} s")

    async def _in_turn(self, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
        """`args` sent with the other commands of this turn; alone, as a plain command."""
        gathering = self._gathering
        if gathering is not None:  # another command leads this turn: ride with it
            reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            gathering.append((args, options, reply))
            return await reply  # (cancelled: its pipeline skips it)
        followers: list[Queued] = []
        self._gathering = followers
        try:
            await asyncio.sleep(0)  # the rest of this turn: every command issued in it joins `followers`
        except BaseException:
            self._gathering = None
            if followers:  # the leader is cancelled; those who rode with it are not
                self._send(followers)
            raise
        self._gathering = None
        if not followers:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]  # unannotated
        own: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._send([(args, options, own), *followers])
        return await own

    def _send(self, batch: list[Queued]) -> None:
        """Send `batch` in a task of its own: no one caller's cancellation cuts the others' replies short."""
        if self._sending is None:
            self._sending = set()
        task = asyncio.get_running_loop().create_task(self._pipeline(batch))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _pipeline(self, batch: list[Queued]) -> None:
        replies: list[Any] | None = None
        failure: BaseException | None = None
        scope, entry = deadlines.bounded(deadlines.now() + COMMAND_TIMEOUT)
        try:
            with scope:
                pipe = self.pipeline(transaction=False)
                for args, options, _ in batch:
                    pipe.execute_command(*args, **options)
                replies = await pipe.execute(raise_on_error=False)  # a command's error comes back in its place
        except Exception as exc:  # the connection failed (after redis-py's retries): every command did
            failure = exc
        finally:
            deadlines.discard(entry)
        if replies is None and failure is None:
            failure = RedisTimeoutError(f"Redis did not answer within {COMMAND_TIMEOUT:g} s")
        for i, (_, _, reply) in enumerate(batch):
            if reply.done():  # its caller was cancelled
                continue
            outcome = failure if replies is None else replies[i]
            if isinstance(outcome, BaseException):
                reply.set_exception(outcome)
                reply.exception()  # retrieved here: a caller cancelled before it reads the error logs nothing
            else:
                reply.set_result(outcome)


def _connect(url: str) -> aioredis.Redis:
    if "+cluster" in url.partition("://")[0]:
        raise ValueError(
            f"{url!r} names a Redis Cluster: use elicitkit.stores.redis_cluster's RedisClusterStore and "
            "RedisClusterBroker, or store=URL"
        )
    # RESP2 because, on RESP3 with its default maintenance notifications, redis-py 8 stops checking a pooled
    # connection before reusing it: the first command after a Redis restart failed on a closed connection.
    # A blocking pool: past its connections (100, or the URL's `max_connections`) a command waits for one to come
    # free (within its `COMMAND_TIMEOUT`, then StoreUnavailable) instead of failing at once, as a burst of calls
    # made it do. No socket timeout (a URL may still set one): `_Client` bounds each command instead.
    pool = aioredis.BlockingConnectionPool.from_url(url, protocol=2, max_connections=100, socket_timeout=None)
    return _Client.from_pool(pool)  # the client owns the pool: closing it closes the connections


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
