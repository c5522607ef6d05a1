"""What the Redis store and broker share: redis-py (or a clear error without it), the default prefix, and how a
URL becomes a client."""

from __future__ import annotations

try:
    import redis.asyncio as aioredis
except ImportError as error:
    raise ImportError("The Redis store needs redis-py: pip install 'elicitkit[redis]'") from error

__all__ = ["DEFAULT_PREFIX", "aioredis"]  # (and `_connect`, `_text`, for the Redis modules)

DEFAULT_PREFIX = "elicitkit:"


def _connect(url: str) -> aioredis.Redis:
    if "+cluster" in url.partition("://")[0]:
        raise ValueError(
            f"{url!r} names a Redis Cluster: use elicitkit.stores.redis_cluster's RedisClusterStore and "
            "RedisClusterBroker, or store=URL"
        )
    # RESP2 because, on RESP3 with its default maintenance notifications, redis-py 8 stops checking a pooled
    # connection before reusing it: the first command after a Redis restart failed on a closed connection.
    # A blocking pool: past its connections (100, or the URL's `max_connections`) a command waits for one to come
    # free (up to 20 s, then StoreUnavailable) instead of failing at once, as a burst of calls made it do.
    pool = aioredis.BlockingConnectionPool.from_url(url, protocol=2, max_connections=100)
    return aioredis.Redis.from_pool(pool)  # the client owns the pool: closing it closes the connections


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
