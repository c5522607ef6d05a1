"""The bookkeeping of forwarded messages: where a sender's replies arrive, and what an owner handled and replied.

A broker delivers at most once, so a reply can be lost (the sender's listener was reconnecting). The sender then
sends its message again, and the owner, which handles each message once, says again what it replied: it keeps
its replies for a while (`KEEP_REPLIES_FOR`), within a count and a weight, oldest forgotten first.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator

import anyio

from elicitkit._crypto import SealerLike
from elicitkit._engine.messages import Message, Refusal, unpack

__all__ = ["KEEP_REPLIES_FOR", "Inbox", "Replied", "unpacked"]

SEEN_MESSAGES = 10_000
"""Forwarded messages an owner remembers having replied to (a sender may send one again)..."""
KEEP_REPLIES_FOR = 60.0
"""...and for how long, at most, with the reply: a sender sends again once its listener is back, seconds after it
lost its subscription (a Redis blip, a failover)."""
KEPT_BYTES = 8 * 1024 * 1024
"""The most the replies kept may weigh: past it, the oldest are forgotten first."""


class Inbox:
    """The replies to one message this node forwarded, as its listener routes them here."""

    __slots__ = ("_arrived", "_items")

    def __init__(self) -> None:
        self._items: deque[Message] = deque()
        self._arrived = anyio.Event()

    def put(self, message: Message) -> None:
        self._items.append(message)
        self._arrived.set()

    def __aiter__(self) -> Inbox:
        return self

    async def __anext__(self) -> Message:
        while not self._items:
            await self._arrived.wait()
            if not self._items:
                self._arrived = anyio.Event()
        return self._items.popleft()


async def unpacked(sealer: SealerLike, channel: str, raws: AsyncIterator[bytes]) -> AsyncIterator[Message | Refusal]:
    async for raw in raws:
        yield unpack(sealer, channel, raw)


class Replied:
    """The messages this owner is handling, and those it handled with what it replied, for a while: a sender that
    missed a reply sends its message again, and hears the same reply."""

    __slots__ = ("_bytes", "_handling", "_replied")

    def __init__(self) -> None:
        self._handling: set[str] = set()
        self._replied: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        """By message id, oldest first: when, and what."""
        self._bytes = 0

    def handled(self, mid: str) -> bool:
        """Whether message `mid` is being handled here, or was (and its reply is still kept)."""
        return mid in self._handling or mid in self._replied

    def reply(self, mid: str) -> bytes | None:
        """What was replied to `mid` (None: nothing yet, or no longer kept)."""
        kept = self._replied.get(mid)
        return None if kept is None else kept[1]

    def start(self, mid: str) -> None:
        self._handling.add(mid)

    def finish(self, mid: str, reply: bytes | None) -> None:
        """Message `mid` is handled: `reply` is what its sender was told (None: nothing, it failed)."""
        self._handling.discard(mid)
        if reply is None:
            return
        self._replied[mid] = (time.monotonic(), reply)
        self._bytes += len(reply)
        replied, too_old = self._replied, time.monotonic() - KEEP_REPLIES_FOR
        while replied and (
            len(replied) > SEEN_MESSAGES or self._bytes > KEPT_BYTES or next(iter(replied.values()))[0] < too_old
        ):  # (a reply heavier than all allowed is not kept at all)
            _, (_, forgotten) = replied.popitem(last=False)
            self._bytes -= len(forgotten)
