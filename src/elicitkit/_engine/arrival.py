"""What arrives at the door, and what the door made of it.

An `Arrival` is answers that came together from one source (a retry, the model, a page, a channel, ...),
with the one-time claim they spend; a `Taken` is the door's rulings on them. Both travel between nodes
(`to_wire`, `from_wire`) when the node that received the answers does not hold their run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from elicitkit._core.kinds import Answer
from elicitkit._core.once import Claim
from elicitkit._core.replies import Ruling, Source
from elicitkit._errors import InvalidElicitationContent, Problem
from elicitkit.channels.base import Responder

__all__ = ["Arrival", "Refusal", "Taken"]

Refusal = Literal["unknown", "ended", "reused"]
"""Why a retry reaches no run: not this caller's (or gone), ending, or its round was used already."""


class Arrival(NamedTuple):
    """Answers that arrived together, as their source hands them over."""

    source: Source
    principal: str | None
    answers: Mapping[str, Answer]
    """By question id (a retry's and a task update's input-request keys are question ids)."""
    claim: Claim | None = None
    """What this arrival spends once, across every node (None: the journal's first write is the once)."""
    run_id: str | None = None
    """Known up front for a retry or a task update; else found from the question."""
    tool: str | None = None
    """A retry names the tool it calls again: it must be its run's."""
    session: object = None
    """The model must answer on the session its question was asked on."""
    by: Responder | None = None
    """Who answered, on a channel."""

    def to_wire(self) -> dict[str, Any]:
        """The arrival as it travels to the node that holds its run (sealed by the cluster)."""
        return {
            "source": self.source,
            "principal": self.principal,
            "answers": {key: _answer_wire(a) for key, a in self.answers.items()},
            "claim": None if self.claim is None else [self.claim.text, self.claim.round],
            "run": self.run_id,
            "tool": self.tool,
            "by": None if self.by is None else self.by.to_json(),
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Arrival:
        claim = wire.get("claim")
        return cls(
            source=wire["source"],
            principal=wire["principal"],
            answers={
                str(key): Answer(str(a[0]), a[1], a[2] if len(a) > 2 else None, a[3] if len(a) > 3 else None)
                for key, a in wire["answers"].items()
            },
            claim=None if claim is None else Claim(str(claim[0]), round=bool(claim[1])),
            run_id=wire.get("run"),
            tool=wire.get("tool"),
            by=Responder.from_json(wire.get("by")),
        )

    @property
    def question_id(self) -> str:
        """The one question a page, a channel or the model answers."""
        return next(iter(self.answers))


class Taken:
    """What the door made of an arrival."""

    __slots__ = ("exhausted", "problems", "refusal", "resent", "rulings")

    def __init__(
        self,
        rulings: dict[str, Ruling] | None = None,
        problems: dict[str, InvalidElicitationContent] | None = None,
    ) -> None:
        self.rulings: dict[str, Ruling] = {} if rulings is None else rulings
        self.problems: dict[str, InvalidElicitationContent] = {} if problems is None else problems
        self.exhausted = False
        """A refusal used up a question's last attempt: its `elicit` raises `InvalidElicitationContent`."""
        self.refusal: Refusal | None = None
        self.resent = False
        """The very arrival that spent this claim came again (a dropped connection, a doubled retry): nothing
        changes, and it is answered as the first was."""

    def __repr__(self) -> str:
        return (
            f"Taken(rulings={self.rulings!r}, refusal={self.refusal!r}, exhausted={self.exhausted!r}, "
            f"resent={self.resent!r})"
        )

    def to_wire(self) -> dict[str, Any]:
        """What a page's or a channel's answer came to, as the node that took it tells the node that received it."""
        problems = {key: [[p.path, p.message] for p in exc.problems] for key, exc in self.problems.items()}
        rulings = {key: ruling.value for key, ruling in self.rulings.items()}
        return {"taken": rulings, "problems": problems, "resent": self.resent}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> Taken:
        rulings = {str(key): Ruling(value) for key, value in wire.get("taken", {}).items()}
        problems = {
            str(key): InvalidElicitationContent([Problem(_path(path), str(message)) for path, message in listed])
            for key, listed in wire.get("problems", {}).items()
        }
        taken = cls(rulings, problems)
        taken.resent = bool(wire.get("resent"))
        return taken

    @property
    def ruling(self) -> Ruling:
        """The ruling on the one answer of a single-answer arrival (a stale one when there was none)."""
        return next(iter(self.rulings.values()), Ruling.STALE)

    @property
    def answered(self) -> bool:
        """The one answer of a single-answer arrival stands: taken now, or by this very arrival before."""
        return self.resent or self.ruling is Ruling.ANSWERS

    def has(self, ruling: Ruling) -> bool:
        return ruling in self.rulings.values()


def _path(wire: Any) -> str | list[str | int]:
    """A problem's path as another node sent it: a list of names and indexes (a string: one field's name)."""
    if isinstance(wire, list):
        return [part if isinstance(part, int) and not isinstance(part, bool) else str(part) for part in wire]
    return str(wire)


def _answer_wire(answer: Answer) -> list[Any]:
    """`[action, content, meta]`, and the reason when a decline has one."""
    wire = [answer.action, answer.content, answer.meta]
    return wire if answer.reason is None else [*wire, answer.reason]
