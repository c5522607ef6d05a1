"""What the Redis store and broker share: redis-py (or a clear error without it), the default prefix, and how a
URL becomes a client."""

from __future__ import annotations

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


class _Client(aioredis.Redis):
    """redis-py's client, each command bounded by `COMMAND_TIMEOUT` on the event loop's one deadline timer.

    In place of redis-py's socket timeout, which writes every command from a task of its own (`asyncio.wait_for`)
    and arms a loop timer for every reply: a fifth of a command's Python work, measured."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        scope, entry = deadlines.bounded(deadlines.now() + COMMAND_TIMEOUT)
        try:
            with scope:
                return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]  # unannotated
        finally:
            deadlines.discard(entry)
        raise RedisTimeoutError(f"Redis did not answer {args[0]} within {COMMAND_TIMEOUT:g} s")


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
