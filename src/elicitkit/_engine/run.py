"""Runs and questions: the in-memory state of tool bodies that wait for people.

A `Run` is one execution of a tool body. On 2026-07-28 it outlives the MCP
request that started it: the body keeps running in its own task while each
request (the first call, then every retry) waits for the run's *next outcome*
— a final result, or the questions to hand back to the client.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.lowlevel
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from elicitkit import _mcp
from elicitkit._core.kinds import Answer, Hosting, Mode, QuestionState, RouteName, Stage, new_id, only_acknowledges
from elicitkit._core.rounds import Round
from elicitkit._engine.wake import Wake
from elicitkit._errors import InvalidElicitationContent
from elicitkit._schema import FormSchema, to_data
from elicitkit.channels.base import Responder, Via

__all__ = ["MAX_ATTEMPTS", "Answer", "Final", "Question", "Run", "Verdict", "call", "new_id"]

# Scheduler turns a request lets pass after a question appears, so that sibling tasks
# of the same body post theirs into the same round; more while new ones keep coming.
_BATCH_TURNS = 3
_BATCH_TURNS_MAX = 20

MAX_ATTEMPTS = 3
"""Answers that break the schema a question takes before `elicit` raises `InvalidElicitationContent`."""


async def call(fn: Callable[[], Any]) -> Any:
    """Call a plain or async function."""
    result = fn()
    if inspect.isawaitable(result):
        awaited: Awaitable[Any] = result
        return await awaited
    return result


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a reply does to its question: answers it, only acknowledges it (a link to elicitkit's page), or
    is refused (`problems`: it broke the schema)."""

    answers: bool
    problems: InvalidElicitationContent | None = None


_ACKNOWLEDGES = Verdict(answers=False)
_ANSWERS = Verdict(answers=True)


@dataclass(eq=False, slots=True)
class Question:
    """One elicitation waiting for its answer."""

    id: str
    message: str
    schema: FormSchema
    expires_at: float
    owner: Run | None = None
    seq: int = 0
    """Position in the run's journal."""
    digest: str = ""
    """Digest of the question asked (message and schema), pinning its journaled answer."""
    mode: Mode = "form"
    url: str | None = None
    observable: bool = False
    """A URL question elicitkit's own page or callback completes (the client's accept only acknowledges it)."""
    state: QuestionState = QuestionState.OPEN
    secret_fields: tuple[str, ...] = ()
    content_private: bool = False
    """Its answer is a third party's callback (`url_flow`): the audit trail records the parameters' names only."""
    route: RouteName | None = None
    """Set when the question is put (None before, and when answered from the journal)."""
    caller: tuple[str | None, object] = (None, None)
    """(principal, session) of the request that asked it; only the same caller may answer by elicitId."""
    session: object = None
    answer: Answer | None = None
    failure: InvalidElicitationContent | None = None
    """Set when every attempt broke the schema: `elicit` raises it."""
    refusals: int = 0
    """Answers refused so far for breaking the schema."""
    last_problems: str = ""
    scope: anyio.CancelScope | None = None
    """Set while a native request is in flight, so the question can be withdrawn."""
    replayed: bool = False
    """Answered from the run's journal (a replay): not asked again."""
    record_closed: bool = False
    """Its stored record went with the round that answered it: nothing to delete when it closes."""
    via: Via | None = None
    """The human channel the question goes to instead of the client (None: the client, as it allows)."""
    responder: Responder | None = None
    """Who answered on a channel."""
    task: bool = False
    """Asked with `task=True`: on 2026-07-28 its call becomes a task the client polls (where it takes tasks)."""
    watcher: Callable[[Question, Stage], Awaitable[None] | None] | None = None
    """Told once per stage the question reaches on its route (the front's hooks and audit); it returns
    something to await only when there is (an async hook)."""
    _reached: tuple[Stage, ...] = ()
    _checked: tuple[Any, Any] | None = None
    """The accepted content `judge` found valid and the typed answer built from it, so it is built once."""
    _answered: Wake | None = None

    async def reached(self, stage: Stage) -> None:
        """The route got the question to `stage`; the watcher hears of each stage once."""
        if self.watcher is not None and stage not in self._reached:
            self._reached = (*self._reached, stage)
            pending = self.watcher(self, stage)
            if pending is not None:
                await pending

    async def wait(self) -> None:
        """Wait for `resolve` (the 2026-07-28 route, where the answer arrives with a retry)."""
        if self.answer is None:
            self._answered = Wake()
            await self._answered.wait()

    @property
    def acknowledged(self) -> bool:
        """The client accepted a link to elicitkit's page; the page will carry the answer."""
        return self.state is QuestionState.ACKNOWLEDGED

    def acknowledge(self) -> None:
        if self.state is QuestionState.OPEN:
            self.state = QuestionState.ACKNOWLEDGED

    def expires_wall(self) -> float:
        """`expires_at` (an event-loop deadline) in seconds since the epoch, for stores and wire formats."""
        return time.time() + (self.expires_at - anyio.current_time())

    @property
    def wire_message(self) -> str:
        """The message as sent: after a refused answer, it says what was wrong."""
        if self.refusals and self.failure is None:
            return f"{self.message}\n\n(The last answer was refused: {self.last_problems}. Please answer again.)"
        return self.message

    def wire_params(self, version: str | None = None) -> ElicitRequestFormParams | ElicitRequestURLParams:
        """How the question goes on the wire: in an `InputRequiredResult` or a task (2025-11-25 URL questions
        carry their `elicitationId`)."""
        if self.mode == "url":
            assert self.url is not None
            if version is not None and not _mcp.is_mrtr(version):
                return ElicitRequestURLParams(
                    mode="url", message=self.wire_message, url=self.url, elicitation_id=self.id
                )
            return ElicitRequestURLParams(mode="url", message=self.wire_message, url=self.url)
        return ElicitRequestFormParams(message=self.wire_message, requested_schema=self.schema.requested(version))

    def judge(self, answer: Answer) -> Verdict:
        """The one rule for every route: a link's accept only acknowledges; an accept must fit the schema."""
        if only_acknowledges(self.observable, answer.action):
            return _ACKNOWLEDGES
        if self.mode == "url" or answer.action != "accept":
            return _ANSWERS  # a link's reply carries no content (elicitkit's pages check theirs before posting)
        try:
            data = to_data(self.schema, answer.content)
        except InvalidElicitationContent as problems:
            return Verdict(answers=False, problems=problems)
        self._checked = (answer.content, data)
        return _ANSWERS

    def data_of(self, content: Any) -> Any:
        """The typed answer for accepted `content`: the one `judge` built, else built now (a journaled answer)."""
        checked = self._checked
        if checked is not None and checked[0] is content:
            return checked[1]
        return to_data(self.schema, content)

    def take(self, answer: Answer, verdict: Verdict | None = None) -> bool:
        """Apply a reply by its verdict; True when the question is closed (answered, or out of attempts)."""
        verdict = verdict or self.judge(answer)
        if verdict.answers:
            self.resolve(answer)
            return True
        if verdict.problems is None:
            self.acknowledge()
            return False
        return self.refuse(verdict.problems)

    def refuse(self, problems: InvalidElicitationContent) -> bool:
        """Count a reply that broke the schema; True when that was the last attempt (then `elicit` raises)."""
        self.refusals += 1
        self.last_problems = "; ".join(str(p) for p in problems.problems)
        if self.refusals < MAX_ATTEMPTS:
            return False
        self.failure = problems
        self.resolve(Answer("accept"))
        return True

    def resolve_cancelled(self) -> bool:
        return self.resolve(Answer("cancel"))

    def resolve(self, answer: Answer) -> bool:
        """Deliver `answer`; False when the question already had one."""
        if self.answer is not None:
            return False
        self.answer = answer
        self.state = QuestionState.ANSWERED
        if self.owner is not None:
            self.owner.pending.pop(self.id, None)
        if self._answered is not None:
            self._answered.set()
        if self.scope is not None:
            self.scope.cancel()
        return True


@dataclass(frozen=True, slots=True)
class Final:
    """How a run's body ended: a handler result, or the exception it raised."""

    result: Any = None
    error: BaseException | None = None


@dataclass(eq=False, slots=True)
class Run:
    """One execution of a tool body and its open questions."""

    id: str
    tool: str
    principal: str | None
    mrtr: bool
    pending: dict[str, Question] = field(default_factory=dict)
    final: Final | None = None
    hosting: Hosting = Hosting.INLINE
    round: Round = field(default_factory=Round)
    """The one-time nonce the next retry must echo."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    rctx: Any = None
    """The request currently waiting for this run's next outcome (its context), if any."""
    picked: bool = False
    """True once a request has taken the final outcome."""
    _picked: anyio.Event | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    rebuilt: bool = False
    """This copy replays a run an earlier copy began (a restart, a takeover)."""
    stale: bool = False
    """Another node took this run over; this copy stops and leaves the records alone."""
    stored: bool = False
    """Its record is in the store (written once something outside this request may look for it)."""
    hibernated: bool = False
    """Evicted while it waited (`max_suspended`): its body stops, its records stay, and the answer replays it."""
    journal: dict[int, Any] = field(default_factory=dict)
    """Entries recorded before this body started (a replay); consulted by `elicit` and `step`."""
    next_seq: int = 0
    task: bool = False
    """The run is an MCP task: clients poll it (`tasks/get`) instead of waiting for its outcome."""
    task_record: dict[str, Any] | None = None
    """The task's record as this node last wrote it (a task's status and outcome), guarded by `task_lock`."""
    task_lock: anyio.Lock | None = None
    _attached: anyio.Event | None = None
    _waiting: tuple[Any, ...] = ()
    """The requests waiting for this task (`tasks/result`), the latest last."""
    task_wanted: bool = False
    """The body asked on a human channel and the waiting client takes tasks: hand it a task now."""
    # Created only while someone waits: 10,000 suspended runs should not carry idle events.
    _changed: Wake | None = None

    @property
    def hosted(self) -> bool:
        """The body runs in its own task and is journaled (so it can be resumed or replayed elsewhere)."""
        return self.hosting is Hosting.HOSTED

    @property
    def ending(self) -> bool:
        """Cancelled or expired: no new answer may enter."""
        return self.scope.cancel_called

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

    def advance(self) -> int:
        """The journal position of the body's next `elicit` or `step`."""
        self.next_seq += 1
        return self.next_seq

    def ask(self, question: Question) -> None:
        self.pending[question.id] = question
        self._notify()

    def finish(self, final: Final) -> None:
        self.final = final
        self._notify()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def want_task(self) -> None:
        if not self.task:
            self.task_wanted = True
            self._notify()

    def client_questions(self) -> list[Question]:
        """The open questions the client itself answers (not those on channels, nor links it already opened)."""
        return self._askable()

    async def next_outcome(self) -> Final | list[Question] | Literal["task"]:
        """Wait until the body finishes or has questions waiting (batching concurrent ones), or should be a task."""
        while True:
            if self.final is not None:
                return self.final
            if self.task_wanted and not self.task:
                return "task"
            if self._askable():
                seen, turns = len(self.pending), 0
                while self.final is None and turns < _BATCH_TURNS_MAX:
                    await anyio.lowlevel.checkpoint()
                    turns += 1
                    if turns >= _BATCH_TURNS and len(self.pending) == seen:
                        break
                    seen = len(self.pending)
                if self.final is not None:
                    return self.final
                askable = self._askable()
                if askable:
                    return askable
            self._changed = Wake()
            await self._changed.wait()

    def _askable(self) -> list[Question]:
        """The questions the next outcome hands to the client (a channel's go elsewhere)."""
        return [q for q in self.pending.values() if not q.acknowledged and q.via is None]

    @property
    def awaiting_pages(self) -> bool:
        """Questions whose person is on elicitkit's page right now (the client already acknowledged them)."""
        return any(q.acknowledged for q in self.pending.values())

    def suspend(self, expiry: float) -> None:
        """No request is attached any more: start the clock for the next one to come."""
        self.scope.deadline = anyio.current_time() + expiry

    def resume(self) -> None:
        self.scope.deadline = math.inf

    def expect_retry(self, expiry: float) -> str:
        """Hand out a fresh one-time round nonce and start the expiry clock."""
        nonce = self.round.open()
        self.suspend(expiry)
        return nonce

    def is_round(self, nonce: str) -> bool:
        """Whether `nonce` is the current round's, without using it."""
        return not self.ending and self.round.matches(nonce)

    def take_round(self, nonce: str) -> bool:
        """Consume the round nonce; False when it is not the current one (reused or stale) or the run is ending."""
        if self.ending or not self.round.take(nonce):
            return False
        self.resume()
        return True
