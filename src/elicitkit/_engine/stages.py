"""Stage hooks: replace or watch the engine's own steps (FrontMCP's `.Stage` and `.Did`).

```python
@hitl.stage("generate_id")
def ticket_ids(message: str, mode: Mode) -> str:
    return f"ticket-{next(counter)}"

@hitl.after_stage("lookup_pending")
def audit(event: StageEvent) -> None:
    log.info("answer for %s from %s: %s", event.question_id, event.source, "found" if event.found else "unknown")
```

- `generate_id`, when a question is made. Replace with `fn(message, mode) -> str`
  (its id: 1 to 128 letters, digits, `-` and `_`); watchers learn the id.
- `lookup_pending`, when an answer arrives and its open question is looked
  for. Not replaceable; watchers learn the id asked for, `found` and `source`.
- `validate`, when an accepted answer is checked. Replace with
  `fn(question, content) -> [Problem, ...]`; watchers learn the problems (none: taken).
- `publish`, when an answer goes to the node that holds its run. Not
  replaceable; watchers learn the owner `node` and whether it took them (`delivered`).

A replaced `validate` decides about answers the schema and the tool's type
accept, wherever the answer is taken (a live question, or the stored one of
a hibernated run or of a node that is gone): its problems refuse the answer
as the schema's would (the person is asked again; the model is told what is
wrong). It cannot let through an answer the type cannot hold, since the tool
gets an instance of its type.

A question given its own id (`elicit_url(..., elicitation_id=...)`) is not
generated, so `generate_id` hooks do not see it.

Stage hooks are plain functions, called inside the engine's own steps (a
validation runs where the door rules on an answer): no `async def`. A
replacement that raises fails closed (the question is not asked, or the
answer is refused); a watcher that raises is logged and ignored. With no
stage hook registered, none of this costs more than one attribute read.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar, get_args

from elicitkit._core.kinds import Answer, Mode, is_id, new_id
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.records import QuestionRecord
from elicitkit._errors import ElicitationVetoed, InvalidElicitationContent, Problem

__all__ = ["IdMaker", "StageEvent", "StageName", "Stages", "Validator"]

logger = logging.getLogger("elicitkit")

F = TypeVar("F", bound=Callable[..., Any])

StageName = Literal["generate_id", "lookup_pending", "validate", "publish"]
_REPLACEABLE: frozenset[str] = frozenset({"generate_id", "validate"})

IdMaker = Callable[[str, Mode], str]
"""A `generate_id` replacement: `(message, mode)` to the question's id."""

Validator = Callable[[Any, dict[str, Any]], Sequence[Problem] | None]
"""A `validate` replacement: `(question, content)` to what is wrong with it (None or empty: nothing); the question
is the `QuestionInfo` hooks get (the front builds it: the engine never imports the front)."""


@dataclass(frozen=True, slots=True)
class StageEvent:
    """What a stage watcher is told.

    Attributes:
        stage: the stage that ran.
        question_id: the question's id (`lookup_pending`: the id the answer names).
        principal: the caller the question or answer belongs to, when known.
        run_id: the run, when the question belongs to one elicitkit journals.
        source: where the answer came from (`"client"`, `"retry"`, `"model"`, `"task"`, `"page"`, `"channel"`,
            `"handler"`), for `lookup_pending` and `publish`.
        found: `lookup_pending`: whether an open question took the answer's id.
        problems: `validate`: why the answer was refused (empty: it was taken).
        node: `publish`: the node that holds the run.
        delivered: `publish`: whether that node took the answers (False: this node takes the run over).
    """

    stage: StageName
    question_id: str | None
    principal: str | None = None
    run_id: str | None = None
    source: str | None = None
    found: bool | None = None
    problems: tuple[Problem, ...] = ()
    node: str | None = None
    delivered: bool | None = None


class Stages:
    """The stage hooks registered on one `Elicitation`."""

    def __init__(self) -> None:
        self.make_id: IdMaker | None = None
        """The `generate_id` replacement, None for elicitkit's random ids."""
        self.validator: Validator | None = None
        """The `validate` replacement, None for the schema and the tool's type alone."""
        self._watchers: dict[StageName, list[Callable[[StageEvent], Any]]] = {}
        # Read on every question and answer: plain attributes, so no stage hook costs one attribute read.
        self.ids_hooked = False
        """Whether `generate_id` is replaced or watched."""
        self.validation_hooked = False
        """Whether `validate` is replaced or watched."""
        self.lookups_watched = False
        self.publishing_watched = False
        self.describe_record: Callable[[QuestionRecord, str], Any] | None = None
        """How the front shows a stored question to a `validate` replacement (its `QuestionInfo`)."""

    def replace(self, stage: StageName, fn: Callable[..., Any]) -> None:
        _check(stage, fn)
        if stage not in _REPLACEABLE:
            raise ValueError(
                f"the {stage} stage cannot be replaced (watch it with after_stage); replaceable: generate_id, validate"
            )
        if (self.make_id if stage == "generate_id" else self.validator) is not None:
            raise ValueError(f"the {stage} stage is replaced already: one replacement per stage")
        if stage == "generate_id":
            self.make_id = fn
        else:
            self.validator = fn
        self._flag(stage)

    def watch(self, stage: StageName, fn: Callable[[StageEvent], Any]) -> None:
        _check(stage, fn)
        self._watchers.setdefault(stage, []).append(fn)
        self._flag(stage)

    def _flag(self, stage: StageName) -> None:
        if stage == "generate_id":
            self.ids_hooked = True
        elif stage == "validate":
            self.validation_hooked = True
        elif stage == "lookup_pending":
            self.lookups_watched = True
        else:
            self.publishing_watched = True

    def registrar(self, add: Callable[[StageName, Any], None], stage: StageName) -> Callable[[F], F]:
        """A decorator that registers its function with `add` and returns it unchanged."""

        def register(fn: F) -> F:
            add(stage, fn)
            return fn

        return register

    def watched(self, stage: StageName) -> bool:
        return stage in self._watchers

    def tell(self, event: StageEvent) -> None:
        """Tell the stage's watchers, in the order they were registered; one that raises is logged and skipped."""
        for fn in self._watchers.get(event.stage, ()):
            try:
                fn(event)
            except Exception:
                name = getattr(fn, "__qualname__", repr(fn))
                logger.exception("elicitkit: %s stage watcher %s failed; ignored", event.stage, name)

    def lost(self, arrival: Arrival) -> None:
        """No open question takes `arrival`'s answers, found out before the door (an unknown question or run)."""
        if self.lookups_watched:
            for key in arrival.answers:
                self.tell(
                    StageEvent("lookup_pending", key, arrival.principal, arrival.run_id, arrival.source, found=False)
                )

    def published(self, arrival: Arrival, owner: str, delivered: bool) -> None:
        """`arrival` went to the node that holds its run; `delivered`: that node took it."""
        if self.publishing_watched:
            for key in arrival.answers:
                event = StageEvent("publish", key, arrival.principal, arrival.run_id, arrival.source)
                self.tell(replace(event, node=owner, delivered=delivered))

    def new_id(self, message: str, mode: Mode, principal: str | None) -> str:
        """A question's id, made by the replaced `generate_id` (checked; any failure fails closed: the question is
        not asked) or elicitkit's own, and told to the stage's watchers."""
        maker = self.make_id
        try:
            made = new_id() if maker is None else maker(message, mode)
        except ElicitationVetoed:
            raise
        except Exception as exc:
            logger.error("elicitkit: the generate_id stage failed, so the question is not asked", exc_info=exc)
            raise ElicitationVetoed("A policy check failed, so the question was not asked") from exc
        if not is_id(made):
            logger.error("elicitkit: the generate_id stage made %r, not 1 to 128 letters, digits, '-' or '_'", made)
            raise ElicitationVetoed("A policy check failed, so the question was not asked")
        if self.watched("generate_id"):
            self.tell(StageEvent("generate_id", made, principal))
        return made

    def checked(self, record: QuestionRecord, key: str) -> QuestionRecord:
        """`record`, whose answers the `validate` stage rules on too: an answer taken from a stored question (its
        run hibernated, or its node gone) is held to the same rules as one a live question takes."""

        def problems(answer: Answer) -> InvalidElicitationContent | None:
            found = record.problems(answer)
            if answer.action != "accept" or record.content_private:
                return found
            if found is None and self.validator is not None and self.describe_record is not None:
                found = self.validate(self.describe_record(record, key), dict(answer.content or {}))
            if self.watched("validate"):
                problems = () if found is None else tuple(found.problems)
                self.tell(StageEvent("validate", key, record.principal, record.run_id, problems=problems))
            return found

        return _Checked(record, problems)

    def validate(self, question: Any, content: dict[str, Any]) -> InvalidElicitationContent | None:
        """The replaced `validate`'s verdict on content the tool's type holds; a failure refuses the answer."""
        assert self.validator is not None
        try:
            found = self.validator(question, content)
            problems = [] if found is None else list(found)
            if not all(isinstance(p, Problem) for p in problems):
                raise TypeError(f"a validate stage returns Problem objects, not {found!r}")
        except Exception as exc:
            logger.error("elicitkit: the validate stage failed, so the answer is refused", exc_info=exc)
            return InvalidElicitationContent([Problem("", "the answer could not be checked")])
        return InvalidElicitationContent(problems) if problems else None


class _Checked(QuestionRecord):
    """A stored question with the `validate` stage added to its check (the door reads it as any record)."""

    __slots__ = ("_problems",)
    _problems: Callable[[Answer], InvalidElicitationContent | None]

    def __init__(self, record: QuestionRecord, problems: Callable[[Answer], InvalidElicitationContent | None]) -> None:
        for name in QuestionRecord.__dataclass_fields__:
            object.__setattr__(self, name, getattr(record, name))
        object.__setattr__(self, "_problems", problems)

    def problems(self, answer: Answer) -> InvalidElicitationContent | None:
        return self._problems(answer)


def _check(stage: str, fn: Callable[..., Any]) -> None:
    if stage not in get_args(StageName):
        raise ValueError(f"unknown stage {stage!r}: one of {', '.join(get_args(StageName))}")
    if not callable(fn):
        raise TypeError(f"a {stage} stage hook must be callable, not {fn!r}")
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
        raise TypeError(f"a {stage} stage hook is a plain function: it runs inside the engine's own step")
