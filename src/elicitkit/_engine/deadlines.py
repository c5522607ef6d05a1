"""One timer for the deadlines of every waiting question (and every run waiting for its next round) of a process.

A question's wait ends at its deadline, or earlier when an answer from
elsewhere withdraws the request in flight. Given its deadline, each wait would
set a timer of its own on the event loop, made and cancelled once per
question, though most are answered long before their timeout. Instead the
deadlines of all waiting questions sit in one heap, watched by one loop timer
set for the earliest: when it fires it ends the waits whose time has come, in
the order of their deadlines, exactly as their own timers would have, and sets
itself for the next. Questions that share a server's timeout come in the order
of their deadlines, so a new one rarely moves the timer. One answered
meanwhile ends nothing from then on and leaves the heap at once from its top,
or else with the next sweep (when ended entries come to outnumber waiting
ones): the heap never holds more than twice what waits, and nothing once all
have ended.

`bounded(deadline)` gives a wait its `Bound` and entry, `discard(entry)` takes
the entry back when the wait ends. A `Bound` ends its task's wait as
`asyncio.timeout()` does, with one `Task.cancel()` it takes back on the way
out, and no cancel scope: an anyio cancel scope costs a question some 450
bytecode instructions to enter and leave, and every checkpoint and scope exit
inside it one more scope to walk. A hosted run puts its own cancel scope on the
same heap while it waits for its next request (`Run.suspend`), which most runs
leave long before it expires. `cancel_scope()` makes a scope the same direct
way. The timer is asyncio's (one heap per running loop); on other backends each
wait is a cancel scope that keeps its own deadline. `now()` is the clock those
deadlines are on, read without anyio's per-call backend lookup.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import math
import weakref
from heapq import heapify, heappop, heappush
from types import TracebackType
from typing import Any, Protocol

import anyio

__all__ = ["Bound", "Cancellable", "Deadlines", "Entry", "Waiting", "bounded", "cancel_scope", "discard", "here", "now"]

Entry = list[Any]
"""`[deadline, order, wait, deadlines]` in the heap: a list, so that ending its wait can clear it (None) where it
stands; `order` keeps equal deadlines in the order they came and spares comparing waits."""


class Cancellable(Protocol):
    """What a deadline ends: a `Bound`, or a cancel scope."""

    def cancel(self, reason: str | None = None) -> Any: ...


_REASON = "deadline exceeded"  # what anyio says when a scope's own deadline cancels it


class Deadlines:
    """The deadlines of the questions waiting on one event loop, and the one timer that ends their waits."""

    __slots__ = ("_armed", "_finished", "_heap", "_loop", "_order", "scope_type")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # the loop holds its timer, which holds this: no cycle through the loop
        self._heap: list[Entry] = []
        self._finished = 0
        """Entries in the heap whose wait has ended, left where they stand until the top or a sweep reaches them."""
        self._armed = math.inf
        """When the earliest timer this has set will fire (`inf`: none is set)."""
        self._order = itertools.count()
        self.scope_type = type(anyio.CancelScope())
        """The loop's own cancel scope class: made directly, a scope skips anyio's backend lookup (and a second
        `__init__`) that `anyio.CancelScope()` costs each time."""

    def __len__(self) -> int:
        """Entries the heap holds (waiting, and ended ones not yet swept)."""
        return len(self._heap)

    @property
    def waiting(self) -> int:
        return len(self._heap) - self._finished

    def add(self, deadline: float, scope: Cancellable) -> Entry | None:
        """Cancel `scope` at `deadline` (loop time) unless `discard` comes first; None: there is nothing to discard
        (no limit, or the deadline has passed and the scope is cancelled now, as entering it with one would)."""
        if deadline == math.inf:
            return None
        loop = self._loop()
        assert loop is not None  # called from a task on it
        if loop.time() >= deadline:
            scope.cancel(_REASON)
            return None
        entry: Entry = [deadline, next(self._order), scope, self]
        heappush(self._heap, entry)
        if deadline < self._armed:
            # An earlier deadline than any the timer waits for. (A later timer set before stays: it finds nothing
            # to do, or what is due by then; cancelling it would cost what one timer per question did.)
            self._arm(loop, deadline)
        return entry

    def discard(self, entry: Entry) -> None:
        """The wait `entry` bounds has ended: its deadline no longer cancels anything, and it leaves the heap."""
        if entry[2] is None:
            return  # its deadline came first
        entry[2] = None
        heap = self._heap
        if heap[0] is entry:
            heappop(heap)
            self._drop_finished_top()
            return
        self._finished += 1
        if self._finished * 2 > len(heap):
            self._heap = [e for e in heap if e[2] is not None]
            heapify(self._heap)
            self._finished = 0

    def _drop_finished_top(self) -> None:
        heap = self._heap
        while heap and heap[0][2] is None:
            heappop(heap)
            self._finished -= 1

    def _fire(self, when: float) -> None:
        if when == self._armed:
            self._armed = math.inf
        loop = self._loop()
        if loop is None:
            return
        heap = self._heap
        try:
            now = loop.time()  # a timer may run a hair early (the loop's clock resolution): then it is set again
            while heap and heap[0][0] <= now:
                entry = heappop(heap)
                scope = entry[2]
                if scope is None:
                    self._finished -= 1
                    continue
                entry[2] = None
                scope.cancel(_REASON)
        finally:
            self._drop_finished_top()
            if heap and heap[0][0] < self._armed:
                self._arm(loop, heap[0][0])

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        self._armed = when
        # In a context of its own: the asking task's would keep its run (and all it holds) alive until then.
        loop.call_at(when, self._fire, when, context=contextvars.Context())


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Deadlines] = weakref.WeakKeyDictionary()
_last: list[Deadlines] = []  # the one used last, found without hashing its loop


class Bound:
    """One task's wait, ended by its deadline (on the loop's one timer) or by `cancel()`: `with bound:` around
    the wait, entered at once by the task that made it, as `bounded` hands it out.

    It ends the wait as `asyncio.timeout()` does: one `Task.cancel()`, which it takes back on the way out
    (`Task.uncancel()`) and swallows there when no other cancellation came meanwhile. Anything else cancelling
    the task (its call cancelled, an anyio cancel scope around it) goes on out; anyio's scopes tell such a
    cancellation from their own. It cancels the task only while the task waits inside it (from the loop's
    timer, or from whatever answers from elsewhere): a cancellation the task asked of itself would be delivered
    at its next wait, wherever that is, so from the task itself `cancel()` only says the wait is to end."""

    __slots__ = ("_cancelling", "_fired", "_task", "cancel_called", "cancelled_caught")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self._task: asyncio.Task[Any] | None = task
        self._cancelling = 0
        self._fired = False
        self.cancel_called = False
        self.cancelled_caught = False
        """Whether the wait ended by this bound's cancellation (as a cancel scope's `cancelled_caught`)."""

    def __enter__(self) -> Bound:
        assert self._task is not None, "a Bound is entered once, by the task that made it"
        self._cancelling = self._task.cancelling()
        return self

    def cancel(self, reason: str | None = None) -> None:
        if self.cancel_called:
            return
        self.cancel_called = True
        task = self._task
        if task is not None and task is not asyncio.current_task():
            self._fired = True
            task.cancel(reason)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        task, self._task = self._task, None
        if not self._fired:
            return False
        assert task is not None
        # Some other cancellation came too (the call's, a scope's around this): that one goes on out.
        if task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            self.cancelled_caught = True
            return True
        return False


Waiting = Bound | anyio.CancelScope
"""What `bounded` hands out: a `Bound` on asyncio, a cancel scope elsewhere (or for a deadline already past)."""


def bounded(deadline: float) -> tuple[Waiting, Entry | None]:
    """The current task's wait until `deadline` (to enter now), with its entry on the running loop's timer, for
    `discard` once the wait ends (None: no entry, for no limit, or off asyncio where the scope keeps its own)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return anyio.CancelScope(deadline=deadline), None
    deadlines = here(loop)
    assert deadlines is not None
    task = asyncio.current_task(loop)
    assert task is not None  # a task on the loop asks
    bound = Bound(task)
    entry = deadlines.add(deadline, bound)
    if entry is None and bound.cancel_called:
        # The deadline has passed: a cancel scope cancelled before it is entered ends the wait at its first await.
        scope = deadlines.scope_type()
        scope.cancel(_REASON)
        return scope, None
    return bound, entry


def cancel_scope(*, shield: bool = False) -> anyio.CancelScope:
    """`anyio.CancelScope(shield=shield)`, made directly on asyncio: `anyio.CancelScope()` finds the backend first
    and runs `__init__` twice (its own class's, then the backend's), on every run and every journaled answer."""
    deadlines = here()
    if deadlines is None:
        return anyio.CancelScope(shield=shield)
    return deadlines.scope_type(shield=shield)


def discard(entry: Entry | None) -> None:
    """The wait `entry` bounds has ended (None: nothing to discard)."""
    if entry is not None:
        entry[3].discard(entry)


def now() -> float:
    """The event loop's clock, which deadlines are on: `anyio.current_time()`, which on asyncio is the running
    loop's `time()`, read here without finding the backend first (microseconds on every question)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return anyio.current_time()
    return loop.time()


def here(loop: asyncio.AbstractEventLoop | None = None) -> Deadlines | None:
    """The running event loop's deadlines (`loop`, when the caller has it already); None off asyncio, where each
    scope keeps its own deadline."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
    if _last and _last[0]._loop() is loop:
        return _last[0]
    found = _by_loop.get(loop)
    if found is None:
        found = _by_loop[loop] = Deadlines(loop)
    _last[:] = [found]
    return found
