"""Runs: the in-memory state of tool bodies that wait for people.

A `Run` is one execution of a tool body. On 2026-07-28 it outlives the MCP
request that started it: the body keeps running in its own task while each
request (the first call, then every retry) waits for the run's *next outcome*
— a final result, or the questions to hand back to the client. A run's fields
change only through its own methods (its transitions).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.lowlevel

from elicitkit._core.journal import Entry
from elicitkit._core.kinds import Hosting
from elicitkit._core.rounds import Round
from elicitkit._engine import deadlines
from elicitkit._engine.question import Question
from elicitkit._engine.wake import Wake

__all__ = ["Final", "Run", "call"]

# Scheduler turns a request lets pass after a question appears, so that sibling tasks
# of the same body post theirs into the same round; more while new ones keep coming.
_BATCH_TURNS = 3
_BATCH_TURNS_MAX = 20


async def call(fn: Callable[[], Any]) -> Any:
    """Call a plain or async function."""
    result = fn()
    if inspect.isawaitable(result):
        awaited: Awaitable[Any] = result
        return await awaited
    return result


@dataclass(frozen=True, slots=True)
class Final:
    """How a run's body ended: a handler result, or the exception it raised."""

    result: Any = None
    error: BaseException | None = None


class Run:
    """One execution of a tool body and its open questions."""

    __slots__ = (
        "_attached",
        "_changed",
        "_expiry",
        "_picked",
        "_scope",
        "_waiting",
        "arguments",
        "final",
        "hibernated",
        "hosted",
        "hosting",
        "id",
        "journal",
        "last_retry",
        "mrtr",
        "next_seq",
        "pending",
        "picked",
        "principal",
        "question_records",
        "rctx",
        "rebuilt",
        "record",
        "round",
        "route_memo",
        "stale",
        "stored",
        "stored_until",
        "task",
        "task_lock",
        "task_record",
        "task_wanted",
        "tool",
    )

    def __init__(
        self,
        id: str,
        tool: str,
        principal: str | None,
        *,
        mrtr: bool,
        hosting: Hosting = Hosting.INLINE,
        arguments: dict[str, Any] | None = None,
        journal: dict[int, Entry] | None = None,
    ) -> None:
        self.id = id
        self.tool = tool
        self.principal = principal
        self.mrtr = mrtr
        self.hosting = hosting
        self.hosted = hosting is Hosting.HOSTED
        """The body runs in its own task and is journaled (so it can be resumed or replayed elsewhere)."""
        self.arguments: dict[str, Any] = arguments if arguments is not None else {}
        self.journal: dict[int, Entry] = journal if journal is not None else {}
        """Entries recorded before this body started (a replay); consulted by `elicit` and `step`."""
        self.rebuilt = journal is not None
        """This copy replays a run an earlier copy began (a restart, a takeover)."""
        self.stored = self.rebuilt
        """Its record is in the store (written once something outside its request may look for it)."""
        self.stored_until = 0.0
        """When the record this node last wrote expires (epoch seconds; 0: not known to be written)."""
        self.record: bytes | None = None
        """Its record as first sealed: what it holds never changes, so renewing it writes the same bytes."""
        self.question_records: set[str] | None = None
        """Ids of the question records this copy wrote and has not seen go (None: it wrote none)."""
        self.pending: dict[str, Question] = {}
        self.final: Final | None = None
        self.round = Round()
        """The one-time nonce the next retry must echo."""
        self.last_retry: tuple[str, bytes] | None = None
        """The round nonce the latest retry spent, and the fingerprint of its answers (a resend matches both)."""
        self._scope: anyio.CancelScope | None = None
        """Made when first needed (`scope`): a hosted body runs in it; an inline run's body needs none."""
        self._expiry: deadlines.Entry | None = None
        """Its entry on the loop's deadline timer while it waits for its next request (`suspend`)."""
        self.rctx: Any = None
        """The request currently waiting for this run's next outcome (its context), if any."""
        self.route_memo: tuple[Any, ...] | None = None
        """An inline run's last choice of route for its questions, with what it was chosen for (`Asker.choose`)."""
        self.picked = False
        """True once a request has taken the final outcome."""
        self.stale = False
        """Another node took this run over; this copy stops and leaves the records alone."""
        self.hibernated = False
        """Evicted while it waited (`max_suspended`): its body stops, its records stay, and the answer replays it."""
        self.next_seq = 0
        self.task = False
        """The run is an MCP task: clients poll it (`tasks/get`) instead of waiting for its outcome."""
        self.task_record: dict[str, Any] | None = None
        """The task's record as this node last wrote it (status and outcome), guarded by `task_lock`."""
        self.task_lock: anyio.Lock | None = None
        self.task_wanted = False
        """The body asked on a human channel and the waiting client takes tasks: hand it a task now."""
        self._picked: anyio.Event | None = None
        self._attached: anyio.Event | None = None
        self._waiting: tuple[Any, ...] = ()
        # Created only while someone waits: 10,000 suspended runs should not carry idle events. More than one
        # request may wait at once (a resent retry while the first is still in flight): each has its own.
        self._changed: list[Wake] = []

    def wrote_record(self, question_id: str) -> None:
        """A question record of this run is (about to be) in the store."""
        if self.question_records is None:
            self.question_records = set()
        self.question_records.add(question_id)

    def records_gone(self, question_ids: Iterable[str]) -> None:
        """These question records are known to be deleted."""
        if self.question_records:
            self.question_records.difference_update(question_ids)

    @property
    def may_have_question_records(self) -> bool:
        """Whether the store may hold question records of this run: some this copy wrote and did not see go, or
        any an earlier copy wrote (a replay)."""
        return self.rebuilt or bool(self.question_records)

    @property
    def scope(self) -> anyio.CancelScope:
        """The scope a hosted body runs in; cancelling it stops the body (hibernation, a takeover, expiry, a task's
        cancel). Made on first use: a 2025-11-25 call's inline run (most runs) never enters one, and a cancel scope
        and its two sets are some 650 bytes for each call waiting on a person."""
        scope = self._scope
        if scope is None:
            scope = self._scope = deadlines.cancel_scope()
        return scope

    @property
    def ending(self) -> bool:
        """Cancelled or expired: no new answer may enter."""
        scope = self._scope
        return scope is not None and scope.cancel_called

    # -- the body's side -------------------------------------------------------------------

    def advance(self) -> int:
        """The journal position of the body's next `elicit` or `step`."""
        self.next_seq += 1
        return self.next_seq

    def ask(self, question: Question) -> None:
        """An open question that rides the run's next outcome (the client or the model answers it)."""
        self.pending[question.id] = question
        self._notify()

    def hold(self, question: Question) -> None:
        """An open question answered elsewhere (a native request in flight, a channel)."""
        self.pending[question.id] = question

    def closed(self, question: Question) -> None:
        """`question` has its answer (its own `resolve` says so)."""
        if self.pending.get(question.id) is question:
            del self.pending[question.id]

    def finish(self, final: Final) -> None:
        self.final = final
        self.resume()  # the body has ended: nothing left for its clock to stop
        self._notify()

    def want_task(self) -> None:
        if not self.task:
            self.task_wanted = True
            self._notify()

    def _notify(self) -> None:
        if self._changed:
            waiting, self._changed = self._changed, []
            for wake in waiting:
                wake.set()

    # -- what the store and other nodes say --------------------------------------------------

    def mark_stored(self, until: float = 0.0) -> None:
        """Its record is in the store (until `until`, epoch seconds; 0: unknown): from now on its end deletes it."""
        self.stored = True
        self.stored_until = max(self.stored_until, until)

    def hibernate(self) -> None:
        """Its body stops; its records stay for the answer's request to replay it."""
        self.hibernated = True
        self.scope.cancel()

    def taken_over(self) -> None:
        """Another node owns the run now: this copy stops and leaves the records to it."""
        self.stale = True
        self.scope.cancel()

    def become_task(self, record: dict[str, Any]) -> None:
        """The run is the task `record` describes; this node writes its record from now on (under `task_lock`)."""
        self.task = True
        self.task_record = record
        self.task_lock = anyio.Lock()

    def record_task(self, record: dict[str, Any]) -> None:
        self.task_record = record

    # -- the requests that wait for it -------------------------------------------------------

    @contextmanager
    def awaited_by(self, rctx: Any) -> Iterator[None]:
        """`rctx` waits for the run's next outcome (None: a request forwarded from another node); several may."""
        if rctx is None:
            previous, self.rctx = self.rctx, None
            try:
                yield
            finally:
                self.rctx = previous
            return
        self.attach(rctx)
        try:
            yield
        finally:
            self.detach(rctx)

    def mark_picked(self) -> None:
        self.picked = True
        if self._picked is not None:
            self._picked.set()

    async def wait_picked(self) -> None:
        if not self.picked:
            if self._picked is None:  # one event for every waiter (two `tasks/result` for one task)
                self._picked = anyio.Event()
            await self._picked.wait()

    def attach(self, rctx: Any) -> None:
        """A request now waits for this run (a 2025-11-25 `tasks/result`): questions for the client go on it."""
        self._waiting = (*self._waiting, rctx)
        self.rctx = rctx
        if self._attached is not None:
            self._attached.set()
            self._attached = None

    def detach(self, rctx: Any) -> None:
        """That request stops waiting; questions go on another one still waiting, if any."""
        self._waiting = tuple(waiting for waiting in self._waiting if waiting is not rctx)
        if self.rctx is rctx:
            self.rctx = self._waiting[-1] if self._waiting else None

    async def attached(self) -> Any:
        """The request waiting for this run, once there is one."""
        while self.rctx is None:
            if self._attached is None:
                self._attached = anyio.Event()
            await self._attached.wait()
        return self.rctx

    def client_questions(self) -> list[Question]:
        """The open questions the client itself answers (not those on channels, nor links it already opened)."""
        return [q for q in self.pending.values() if not q.acknowledged and q.via is None]

    async def next_outcome(self) -> Final | list[Question] | Literal["task"]:
        """Wait until the body finishes or has questions waiting (batching concurrent ones), or should be a task."""
        while True:
            if self.final is not None:
                return self.final
            if self.task_wanted and not self.task:
                return "task"
            if self.client_questions():
                seen, turns = len(self.pending), 0
                while self.final is None and turns < _BATCH_TURNS_MAX:
                    await anyio.lowlevel.checkpoint()
                    turns += 1
                    if turns >= _BATCH_TURNS and len(self.pending) == seen:
                        break
                    seen = len(self.pending)
                if self.final is not None:
                    return self.final
                askable = self.client_questions()
                if askable:
                    return askable
            wake = Wake()
            self._changed.append(wake)
            try:
                await wake.wait()
            finally:
                if wake in self._changed:
                    self._changed.remove(wake)

    @property
    def awaiting_pages(self) -> bool:
        """Questions whose person is on elicitkit's page right now (the client already acknowledged them)."""
        return any(q.acknowledged for q in self.pending.values())

    # -- the clock and the rounds ------------------------------------------------------------

    def suspend(self, expiry: float) -> None:
        """No request is attached any more: start the clock for the next one to come.

        On the loop's one deadline timer, as questions' deadlines are: most runs are picked up long before they
        expire, and a timer of the scope's own, made and cancelled each round, would stay in the loop's heap of
        timers until it was due (`run_expiry` later), one more per round for every loop turn to step over."""
        self.resume()
        if self.final is not None:
            return  # the body has ended (its scope with it): as a deadline set on an exited scope, nothing to stop
        timer = deadlines.here()
        if timer is None:  # off asyncio: the scope's own deadline
            self.scope.deadline = anyio.current_time() + expiry
        else:
            self._expiry = timer.add(deadlines.now() + expiry, self.scope)

    def resume(self) -> None:
        """A request is attached again (or the body ended): the clock stops."""
        if self._expiry is not None:
            deadlines.discard(self._expiry)
            self._expiry = None
        elif self._scope is not None and self._scope.deadline != math.inf:
            self._scope.deadline = math.inf

    def expect_retry(self, expiry: float) -> str:
        """Hand out a fresh one-time round nonce and start the expiry clock."""
        nonce = self.round.open()
        self.suspend(expiry)
        return nonce

    def is_round(self, nonce: str) -> bool:
        """Whether `nonce` is the current round's, without using it."""
        return not self.ending and self.round.matches(nonce)

    def take_round(self, nonce: str, answers: bytes) -> bool:
        """Consume the round nonce with `answers` (their fingerprint); False when it is not the current one
        (reused or stale) or the run is ending."""
        if self.ending or not self.round.take(nonce):
            return False
        self.last_retry = (nonce, answers)
        self.resume()
        return True
