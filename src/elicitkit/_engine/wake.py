"""A one-shot wake-up for one waiter, small enough to keep one per waiting run and question.

`anyio.Event` on asyncio wraps an `asyncio.Event`, whose waiter deque alone
takes 760 bytes; 10,000 suspended runs each waiting on two of them carry 15 MB
of empty deques. A `Wake` awaits a bare future instead (about 100 bytes, made
only while someone waits), and falls back to `anyio.Event` on other backends.
Cancellation works as for any await: the waiting task's cancel scope cancels it.
"""

from __future__ import annotations

import asyncio

import anyio

__all__ = ["Wake"]


class Wake:
    """Set once; `wait` returns once it is set (at once if it already is). One waiter at a time."""

    __slots__ = ("_is_set", "_waiter")

    def __init__(self) -> None:
        self._is_set = False
        self._waiter: asyncio.Future[None] | anyio.Event | None = None

    def is_set(self) -> bool:
        return self._is_set

    def set(self) -> None:
        self._is_set = True
        waiter = self._waiter
        if isinstance(waiter, asyncio.Future):
            if not waiter.done():  # a cancelled wait leaves a cancelled future behind
                waiter.set_result(None)
        elif waiter is not None:
            waiter.set()

    async def wait(self) -> None:
        if self._is_set:
            return
        try:
            waiter: asyncio.Future[None] | anyio.Event = asyncio.get_running_loop().create_future()
        except RuntimeError:  # not on asyncio
            waiter = anyio.Event()
        self._waiter = waiter
        try:
            await (waiter if isinstance(waiter, asyncio.Future) else waiter.wait())
        finally:
            self._waiter = None
