"""A question: what was asked (`Asked`, frozen) and where it stands (`Question`, changed only by its transitions).

A question is drafted by the front (`elicit`, the helpers, URL mode), may be
reworded by a `before_ask` hook, is *placed* in its run (its position in the
journal and the digest that pins its answer), is *put* on a route, and then
moves only forward: open → acknowledged (the person went to elicitkit's page)
→ answered (an answer, a cancellation, or out of attempts). Nothing outside
this module sets a question's fields.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, Protocol

from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from elicitkit import _mcp
from elicitkit._core.journal import digest_of
from elicitkit._core.kinds import EXPIRES_AT_META, Answer, Mode, QuestionState, RouteName, Stage
from elicitkit._engine.deadlines import Cancellable, now
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
Validate = Callable[[Any, "InvalidElicitationContent | None"], "InvalidElicitationContent | None"]
"""Rules on accepted content after the schema and the type: (content, what they found) to the final verdict."""


class Asker(Protocol):
    """What a question knows of the run that asks it: its id, and where to say it is closed."""

    @property
    def id(self) -> str: ...

    def closed(self, question: Question) -> None: ...


class Asked(NamedTuple):
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
    """One elicitation on its way to a person and back.

    Its attributes are read-only to everyone else (plain attributes, because they are read on every hot path):
    what was asked (`id`, `message`, `schema`, `mode`, `url`, `observable`, `secret_fields`, `via`,
    `content_private`), where it was placed (`run_id`, `seq`, `digest`), how it was put (`route`, `caller`,
    `expires_at`) and where it stands (`state`, `answer`, `failure`, `responder`, `replayed`, `record_gone`).
    Only the transitions below change them.
    """

    __slots__ = (
        "_answered",
        "_asked",
        "_checked",
        "_last_problems",
        "_reached",
        "_refusals",
        "_run",
        "_scope",
        "_validate",
        "_watcher",
        "answer",
        "caller",
        "content_private",
        "digest",
        "expires_at",
        "failure",
        "id",
        "message",
        "mode",
        "observable",
        "record_gone",
        "replayed",
        "responder",
        "route",
        "run_id",
        "schema",
        "secret_fields",
        "seq",
        "state",
        "url",
        "via",
    )

    def __init__(self, asked: Asked, expires_at: float) -> None:
        self._asked = asked
        # What was asked that no rewrite changes, read on every hot path: plain attributes, never assigned again.
        self.id = asked.id
        self.mode = asked.mode
        self.url = asked.url
        self.observable = asked.observable
        self.secret_fields = asked.secret_fields
        self.via = asked.via
        self.content_private = asked.content_private
        self.message = asked.message
        self.schema = asked.schema
        self.expires_at = expires_at
        self._run: Asker | None = None
        self.run_id: str | None = None
        self.seq = 0
        self.digest = ""
        self.route: RouteName | None = None
        self.caller: tuple[str | None, object] = (None, None)
        self.state = QuestionState.OPEN
        self.answer: Answer | None = None
        self.failure: InvalidElicitationContent | None = None
        self._refusals = 0
        self._last_problems = ""
        self.responder: Responder | None = None
        self.replayed = False
        self.record_gone = False
        self._scope: Cancellable | None = None
        self._watcher: Watcher | None = None
        self._reached: tuple[Stage, ...] = ()
        self._checked: tuple[Any, Any] | None = None
        self._validate: Validate | None = None
        self._answered: Wake | None = None

    # -- what was asked ----------------------------------------------------------------

    @property
    def asked(self) -> Asked:
        return self._asked

    # -- where it stands ---------------------------------------------------------------

    @property
    def acknowledged(self) -> bool:
        """The client accepted a link to elicitkit's page; the page will carry the answer."""
        return self.state is QuestionState.ACKNOWLEDGED

    @property
    def is_open(self) -> bool:
        return self.answer is None

    def expires_wall(self) -> float:
        """`expires_at` in seconds since the epoch, for stores and wire formats."""
        return time.time() + (self.expires_at - now())

    @property
    def wire_message(self) -> str:
        """The message as sent: after a refused answer, it says what was wrong."""
        if self._refusals and self.failure is None:
            return f"{self.message}\n\n(The last answer was refused: {self._last_problems}. Please answer again.)"
        return self.message

    def wire_params(self, version: str | None = None) -> ElicitRequestFormParams | ElicitRequestURLParams:
        """How the question goes on the wire: in `elicitation/create`, an `InputRequiredResult` or a task
        (2025-11-25 URL questions carry their `elicitationId`), with its deadline in `_meta` when it has one."""
        meta: Any = {EXPIRES_AT_META: int(self.expires_wall() * 1000)} if math.isfinite(self.expires_at) else None
        if self.mode == "url":
            assert self.url is not None
            if version is not None and not _mcp.is_mrtr(version):
                return ElicitRequestURLParams(
                    mode="url", message=self.wire_message, url=self.url, elicitation_id=self.id, _meta=meta
                )
            return ElicitRequestURLParams(mode="url", message=self.wire_message, url=self.url, _meta=meta)
        requested = self.schema.requested(version)
        return ElicitRequestFormParams(message=self.wire_message, requested_schema=requested, _meta=meta)

    def problems(self, answer: Answer) -> InvalidElicitationContent | None:
        """Why an accept's content cannot be taken, checked against the type the tool asked with (its own
        validators included). What it finds is kept for that content: the typed answer is built once."""
        checked = self._checked
        if checked is not None and checked[0] is answer.content:
            return checked[1] if isinstance(checked[1], InvalidElicitationContent) else None
        try:
            found: Any = to_data(self.schema, answer.content)
        except InvalidElicitationContent as problems:
            found = problems
        validate = self._validate
        if validate is not None:
            verdict = validate(answer.content, found if isinstance(found, InvalidElicitationContent) else None)
            if verdict is not None:
                found = verdict
        self._checked = (answer.content, found)
        return found if isinstance(found, InvalidElicitationContent) else None

    def data_of(self, content: Any) -> Any:
        """The typed answer for accepted `content`: the one `problems` built, else built now (a journaled answer)."""
        checked = self._checked
        if checked is not None and checked[0] is content and not isinstance(checked[1], InvalidElicitationContent):
            return checked[1]
        return to_data(self.schema, content)

    # -- transitions -------------------------------------------------------------------

    def reword(self, message: str | None = None, schema: FormSchema | None = None) -> None:
        """A `before_ask` hook asks this instead (only before the question is placed)."""
        if self._run is not None or self.route is not None:
            raise RuntimeError("a question can only be reworded before it is asked")
        changes: dict[str, Any] = {}
        if message is not None:
            changes["message"] = message
        if schema is not None:
            changes["schema"] = schema
        self._asked = self._asked._replace(**changes)
        self.message, self.schema = self._asked.message, self._asked.schema

    def retime(self, expires_at: float) -> None:
        """A `before_ask` hook gives the person another time (only before the question is placed)."""
        if self._run is not None or self.route is not None:
            raise RuntimeError("a question's timeout can only be changed before it is asked")
        self.expires_at = expires_at

    def place(self, run: Asker, seq: int) -> None:
        """The question is its run's `seq`-th step (0: a run that is not journaled)."""
        self._run, self.run_id = run, run.id
        if seq:
            self.seq = seq
            self.digest = digest_of(self.message, self.schema.wire, self.schema.canonical())

    def from_journal(self, answer: Answer, route: RouteName | None) -> None:
        """A replay found its answer in the journal: it is not asked again."""
        self.replayed = True
        self.route = route
        self.answer = answer
        self.state = QuestionState.ANSWERED

    def put(self, route: RouteName, caller: tuple[str | None, object]) -> None:
        """The question goes to the person on `route`, asked by `caller`."""
        self.route = route
        self.caller = caller

    def shorten(self, expires_at: float) -> None:
        """Wait no later than `expires_at` (a replay adopting a message whose link expires sooner)."""
        self.expires_at = min(self.expires_at, expires_at)

    @property
    def withdrawing(self) -> Cancellable | None:
        """The wait for the request in flight that an answer from elsewhere withdraws (None: none)."""
        return self._scope

    def withdrawable(self, scope: Cancellable | None) -> None:
        """While `scope` is set, an answer from elsewhere (or a cancellation) withdraws the request in flight."""
        self._scope = scope

    def watch(self, watcher: Watcher | None) -> None:
        self._watcher = watcher

    def validate_with(self, validate: Validate | None) -> None:
        """Have `validate` rule on every accepted answer after the schema and the type (the `validate` stage)."""
        self._validate = validate

    @property
    def watched(self) -> bool:
        """Whether anyone hears of the stages it reaches (else `reached` has nothing to do)."""
        return self._watcher is not None

    async def reached(self, stage: Stage) -> None:
        """The route got the question to `stage`; the watcher hears of each stage once."""
        if self._watcher is not None and stage not in self._reached:
            self._reached = (*self._reached, stage)
            pending = self._watcher(self, stage)
            if pending is not None:
                await pending

    def acknowledge(self) -> None:
        if self.state is QuestionState.OPEN:
            self.state = QuestionState.ACKNOWLEDGED

    def refuse(self, problems: InvalidElicitationContent) -> bool:
        """Count a reply that broke the schema; True when that was the last attempt (then `elicit` raises)."""
        self._refusals += 1
        self._last_problems = "; ".join(str(p) for p in problems.problems)
        if self._refusals < MAX_ATTEMPTS:
            return False
        self.failure = problems
        self.resolve(Answer("accept"))
        return True

    def cancel(self) -> bool:
        return self.resolve(Answer("cancel"))

    def resolve(self, answer: Answer, by: Responder | None = None, *, record_gone: bool = False) -> bool:
        """Deliver `answer` (from `by` on a channel); False when the question already had one."""
        if self.answer is not None:
            return False
        self.answer = answer
        self.responder = by
        self.record_gone = record_gone
        self.state = QuestionState.ANSWERED
        if self._run is not None:
            self._run.closed(self)
        if self._answered is not None:
            self._answered.set()
        if self._scope is not None:
            self._scope.cancel()
        return True

    async def wait(self) -> None:
        """Wait for `resolve` (the routes whose answer arrives from outside the asking task)."""
        if self.answer is None:
            self._answered = Wake()
            await self._answered.wait()
