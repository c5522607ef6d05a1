"""A question: what was asked (`Asked`, frozen) and where it stands (`Question`, changed only by its transitions).

A question is drafted by the front (`elicit`, the helpers, URL mode), may be
reworded by a `before_ask` hook, is *placed* in its run (its position in the
journal and the digest that pins its answer), is *put* on a route, and then
moves only forward: open → acknowledged (the person went to elicitkit's page)
→ answered (an answer, a cancellation, or out of attempts). Nothing outside
this module sets a question's fields.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import anyio
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from elicitkit import _mcp
from elicitkit._core.journal import digest_of
from elicitkit._core.kinds import Answer, Mode, QuestionState, RouteName, Stage
from elicitkit._engine.wake import Wake
from elicitkit._errors import InvalidElicitationContent
from elicitkit._schema import FormSchema, to_data
from elicitkit.channels.base import Responder, Via

__all__ = ["MAX_ATTEMPTS", "Asked", "Asker", "Question", "Watcher"]

MAX_ATTEMPTS = 3
"""Answers that break the schema a question takes before `elicit` raises `InvalidElicitationContent`."""

Watcher = Callable[["Question", Stage], Awaitable[None] | None]
"""Told once per stage a question reaches on its route (the front's hooks and audit); it returns something to
await only when there is (an async hook)."""


class Asker(Protocol):
    """What a question knows of the run that asks it: its id, and where to say it is closed."""

    @property
    def id(self) -> str: ...

    def closed(self, question: Question) -> None: ...


@dataclass(frozen=True, slots=True)
class Asked:
    """What was asked: the question's identity and content, the same wherever and however often it is shown."""

    id: str
    message: str
    schema: FormSchema
    mode: Mode = "form"
    url: str | None = None
    observable: bool = False
    """A link to elicitkit's own page or callback, which completes it (the client's accept only acknowledges)."""
    secret_fields: tuple[str, ...] = ()
    content_private: bool = False
    """Its answer is a third party's callback (`url_flow`): free parameters, whose names only are audited."""
    via: Via | None = None
    """The human channel it goes to instead of the client (None: the client, as it allows)."""
    task: bool = False
    """Asked with `task=True`: on 2026-07-28 its call becomes a task the client polls (where it takes tasks)."""


class Question:
    """One elicitation on its way to a person and back."""

    __slots__ = (
        "_answer",
        "_answered",
        "_asked",
        "_caller",
        "_checked",
        "_digest",
        "_expires_at",
        "_failure",
        "_last_problems",
        "_reached",
        "_record_gone",
        "_refusals",
        "_replayed",
        "_responder",
        "_route",
        "_run",
        "_run_id",
        "_scope",
        "_seq",
        "_state",
        "_watcher",
    )

    def __init__(self, asked: Asked, expires_at: float) -> None:
        self._asked = asked
        self._expires_at = expires_at
        self._run: Asker | None = None
        self._run_id: str | None = None
        self._seq = 0
        self._digest = ""
        self._route: RouteName | None = None
        self._caller: tuple[str | None, object] = (None, None)
        self._state = QuestionState.OPEN
        self._answer: Answer | None = None
        self._failure: InvalidElicitationContent | None = None
        self._refusals = 0
        self._last_problems = ""
        self._responder: Responder | None = None
        self._replayed = False
        self._record_gone = False
        self._scope: anyio.CancelScope | None = None
        self._watcher: Watcher | None = None
        self._reached: tuple[Stage, ...] = ()
        self._checked: tuple[Any, Any] | None = None
        self._answered: Wake | None = None

    # -- what was asked ----------------------------------------------------------------

    @property
    def asked(self) -> Asked:
        return self._asked

    @property
    def id(self) -> str:
        return self._asked.id

    @property
    def message(self) -> str:
        return self._asked.message

    @property
    def schema(self) -> FormSchema:
        return self._asked.schema

    @property
    def mode(self) -> Mode:
        return self._asked.mode

    @property
    def url(self) -> str | None:
        return self._asked.url

    @property
    def observable(self) -> bool:
        return self._asked.observable

    @property
    def secret_fields(self) -> tuple[str, ...]:
        return self._asked.secret_fields

    @property
    def via(self) -> Via | None:
        return self._asked.via

    @property
    def expires_at(self) -> float:
        """The event-loop deadline of the answer."""
        return self._expires_at

    @property
    def run_id(self) -> str | None:
        """The run that asks it (None outside a tool call elicitkit saw)."""
        return self._run_id

    @property
    def seq(self) -> int:
        """Its position in the run's journal (0 for a run that is not journaled)."""
        return self._seq

    @property
    def digest(self) -> str:
        """The digest of what was asked (message and schema), which pins its journaled answer."""
        return self._digest

    @property
    def route(self) -> RouteName | None:
        """The route it was put on (None before; for an answer from the journal, the route it would take)."""
        return self._route

    @property
    def caller(self) -> tuple[str | None, object]:
        """(principal, session) of the request that asked it: who may answer it by its id."""
        return self._caller

    # -- where it stands ---------------------------------------------------------------

    @property
    def state(self) -> QuestionState:
        return self._state

    @property
    def answer(self) -> Answer | None:
        return self._answer

    @property
    def failure(self) -> InvalidElicitationContent | None:
        """Every attempt broke the schema: `elicit` raises this."""
        return self._failure

    @property
    def responder(self) -> Responder | None:
        """Who answered on a channel."""
        return self._responder

    @property
    def replayed(self) -> bool:
        """Answered from the run's journal while the run was replayed: not asked again."""
        return self._replayed

    @property
    def record_gone(self) -> bool:
        """Its stored record went with the round that answered it: nothing to delete when it closes."""
        return self._record_gone

    @property
    def acknowledged(self) -> bool:
        """The client accepted a link to elicitkit's page; the page will carry the answer."""
        return self._state is QuestionState.ACKNOWLEDGED

    @property
    def is_open(self) -> bool:
        return self._state is not QuestionState.ANSWERED

    def expires_wall(self) -> float:
        """`expires_at` in seconds since the epoch, for stores and wire formats."""
        return time.time() + (self._expires_at - anyio.current_time())

    @property
    def wire_message(self) -> str:
        """The message as sent: after a refused answer, it says what was wrong."""
        if self._refusals and self._failure is None:
            return f"{self.message}\n\n(The last answer was refused: {self._last_problems}. Please answer again.)"
        return self.message

    def wire_params(self, version: str | None = None) -> ElicitRequestFormParams | ElicitRequestURLParams:
        """How the question goes on the wire in an `InputRequiredResult` or a task (2025-11-25 URL questions
        carry their `elicitationId`)."""
        if self.mode == "url":
            assert self.url is not None
            if version is not None and not _mcp.is_mrtr(version):
                return ElicitRequestURLParams(
                    mode="url", message=self.wire_message, url=self.url, elicitation_id=self.id
                )
            return ElicitRequestURLParams(mode="url", message=self.wire_message, url=self.url)
        return ElicitRequestFormParams(message=self.wire_message, requested_schema=self.schema.requested(version))

    def problems(self, answer: Answer) -> InvalidElicitationContent | None:
        """Why an accept's content cannot be taken, checked against the type the tool asked with (its own
        validators included); the typed answer is kept, so it is built once."""
        try:
            data = to_data(self.schema, answer.content)
        except InvalidElicitationContent as problems:
            return problems
        self._checked = (answer.content, data)
        return None

    def data_of(self, content: Any) -> Any:
        """The typed answer for accepted `content`: the one `problems` built, else built now (a journaled answer)."""
        checked = self._checked
        if checked is not None and checked[0] is content:
            return checked[1]
        return to_data(self.schema, content)

    # -- transitions -------------------------------------------------------------------

    def reword(self, message: str | None = None, schema: FormSchema | None = None) -> None:
        """A `before_ask` hook asks this instead (only before the question is placed)."""
        if self._run is not None or self._route is not None:
            raise RuntimeError("a question can only be reworded before it is asked")
        changes: dict[str, Any] = {}
        if message is not None:
            changes["message"] = message
        if schema is not None:
            changes["schema"] = schema
        self._asked = replace(self._asked, **changes)

    def place(self, run: Asker, seq: int) -> None:
        """The question is its run's `seq`-th step (0: a run that is not journaled)."""
        self._run, self._run_id = run, run.id
        if seq:
            self._seq = seq
            self._digest = digest_of(self.message, self.schema.wire)

    def from_journal(self, answer: Answer, route: RouteName | None) -> None:
        """A replay found its answer in the journal: it is not asked again."""
        self._replayed = True
        self._route = route
        self._answer = answer
        self._state = QuestionState.ANSWERED

    def put(self, route: RouteName, caller: tuple[str | None, object]) -> None:
        """The question goes to the person on `route`, asked by `caller`."""
        self._route = route
        self._caller = caller

    def shorten(self, expires_at: float) -> None:
        """Wait no later than `expires_at` (a replay adopting a message whose link expires sooner)."""
        self._expires_at = min(self._expires_at, expires_at)

    @property
    def withdrawing(self) -> anyio.CancelScope | None:
        """The scope of the request in flight that an answer from elsewhere withdraws (None: none)."""
        return self._scope

    def withdrawable(self, scope: anyio.CancelScope | None) -> None:
        """While `scope` is set, an answer from elsewhere (or a cancellation) withdraws the request in flight."""
        self._scope = scope

    def watch(self, watcher: Watcher | None) -> None:
        self._watcher = watcher

    async def reached(self, stage: Stage) -> None:
        """The route got the question to `stage`; the watcher hears of each stage once."""
        if self._watcher is not None and stage not in self._reached:
            self._reached = (*self._reached, stage)
            pending = self._watcher(self, stage)
            if pending is not None:
                await pending

    def acknowledge(self) -> None:
        if self._state is QuestionState.OPEN:
            self._state = QuestionState.ACKNOWLEDGED

    def refuse(self, problems: InvalidElicitationContent) -> bool:
        """Count a reply that broke the schema; True when that was the last attempt (then `elicit` raises)."""
        self._refusals += 1
        self._last_problems = "; ".join(str(p) for p in problems.problems)
        if self._refusals < MAX_ATTEMPTS:
            return False
        self._failure = problems
        self.resolve(Answer("accept"))
        return True

    def cancel(self) -> bool:
        return self.resolve(Answer("cancel"))

    def resolve(self, answer: Answer, by: Responder | None = None, *, record_gone: bool = False) -> bool:
        """Deliver `answer` (from `by` on a channel); False when the question already had one."""
        if self._answer is not None:
            return False
        self._answer = answer
        self._responder = by
        self._record_gone = record_gone
        self._state = QuestionState.ANSWERED
        if self._run is not None:
            self._run.closed(self)
        if self._answered is not None:
            self._answered.set()
        if self._scope is not None:
            self._scope.cancel()
        return True

    async def wait(self) -> None:
        """Wait for `resolve` (the routes whose answer arrives from outside the asking task)."""
        if self._answer is None:
            self._answered = Wake()
            await self._answered.wait()
