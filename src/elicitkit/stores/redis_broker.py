"""The Redis broker: messages between the nodes of a deployment over Redis pub/sub (see `redis` for the store).

Needs redis-py (`pip install 'elicitkit[redis]'`). Channels live under the same prefix as the store's keys; a
node's own channel carries what other nodes forward to it, and each forwarded answer's reply comes on a channel
of its own.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio

from elicitkit.stores._redis_client import DEFAULT_PREFIX, _connect, _text

try:
    from redis.asyncio.client import PubSub
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import RedisError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError as error:  # (the import above says so first)
    raise ImportError("The Redis broker needs redis-py: pip install 'elicitkit[redis]'") from error

__all__ = ["RedisBroker"]

_IDLE_LISTENERS = 16
"""Connections a `RedisBroker` keeps for listeners to come (more listen at once: the rest close as they end)."""


class RedisBroker:
    """A `Broker` over Redis pub/sub at `url`, with channel names under `prefix`.

    Delivery is at most once, as with any Redis pub/sub: a listener whose connection
    drops (Redis restarting, say) reconnects and subscribes again, and what was
    published meanwhile is lost. One that cannot reconnect within `timeout` seconds
    raises `redis.exceptions.ConnectionError` from its iteration, as `publish` does
    when Redis is unreachable. Close listeners before closing the broker.
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 10.0) -> None:
        self.prefix = prefix
        self.timeout = timeout
        self._redis = _connect(url)
        self._idle: list[PubSub] = []
        """Listeners' connections that unsubscribed cleanly, for the next listener: redis-py closes a `PubSub`'s
        connection with it, so each listener would cost a new connection and its handshake (every answer
        forwarded to another node listens for its reply)."""

    async def publish(self, channel: str, message: bytes) -> int:
        return int(await self._redis.publish(self.prefix + channel, message))

    async def listeners(self, channel: str) -> int:
        """`PUBSUB NUMSUB`: Redis drops a subscription with its connection, so a dead process's go at once."""
        name = self.prefix + channel
        counts = {_text(channel): int(count) for channel, count in await self._redis.pubsub_numsub(name)}
        return counts.get(name, 0)

    @asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        name = self.prefix + channel
        pubsub = await self._subscribed(name)
        clean = False
        try:
            try:
                yield _Messages(pubsub, reconnect_for=self.timeout)
            finally:
                # Wait for UNSUBSCRIBE's reply, so that once we return nobody counts this listener. It follows
                # whatever was published to `name` before it: nothing of this listener's is left to read after it.
                with anyio.move_on_after(self.timeout, shield=True), suppress(RedisError, OSError):
                    await pubsub.unsubscribe(name)
                    await _reply(pubsub, "unsubscribe")
                    clean = True
        finally:
            if clean and len(self._idle) < _IDLE_LISTENERS:
                self._idle.append(pubsub)
            else:
                with anyio.CancelScope(shield=True):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated

    async def _subscribed(self, name: str) -> PubSub:
        """A connection subscribed to `name`: a kept one while one still works (Redis may have closed it while it
        waited: a restart), else a new one."""
        while True:
            kept = bool(self._idle)
            pubsub = self._idle.pop() if kept else self._redis.pubsub()
            try:
                # SUBSCRIBE's reply precedes, on the same connection, every message published after it.
                with anyio.fail_after(self.timeout):
                    await pubsub.subscribe(name)
                    await _reply(pubsub, "subscribe")
                return pubsub
            except BaseException as exc:
                with anyio.CancelScope(shield=True):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                if not kept or not isinstance(exc, RedisError | OSError):
                    raise

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for pubsub in idle:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
        await self._redis.aclose()


async def _reply(pubsub: PubSub, kind: str) -> None:
    while True:
        message = await pubsub.get_message(timeout=None)
        if message is not None and message["type"] == kind:
            return


class _Messages:
    """The messages of one subscription, as bytes; rides out a dropped connection for `reconnect_for` seconds."""

    def __init__(self, pubsub: PubSub, *, reconnect_for: float) -> None:
        self._pubsub = pubsub
        self._reconnect_for = reconnect_for
        self.resubscribed = anyio.Event()
        """Set each time the subscription is back after a dropped connection (a fresh Event per drop)."""
        self.resubscriptions = 0
        """How many times the subscription came back: what was published to it meanwhile is lost."""

    def __aiter__(self) -> _Messages:
        return self

    async def __anext__(self) -> bytes:
        failing_since: float | None = None
        delay = 0.01
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)
            except (RedisConnectionError, RedisTimeoutError):
                if self.resubscribed.is_set():
                    self.resubscribed = anyio.Event()
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                if now - failing_since >= self._reconnect_for:
                    raise
                # The next read reconnects, and redis-py subscribes again on connect. Retry briskly: until
                # then this node misses what is published to it, and forwarders take its runs over.
                await anyio.sleep(delay)
                delay = min(delay * 2, 0.1)
                continue
            if message is None:
                continue
            if message["type"] == "subscribe":  # redis-py subscribed again after reconnecting
                self.resubscriptions += 1
                self.resubscribed.set()
            elif message["type"] == "message":
                data: bytes = message["data"]
                return data
