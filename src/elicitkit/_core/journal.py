"""Journal entries, and the one rule for what an entry at a question's position means.

An answer is pinned to a digest of the question asked (message and schema): a
replayed body that asks the same question at the same position gets the
journaled answer back; a reworded or reshaped question is asked again, and its
answer is taken without the journal (the position keeps the first wording's).
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from elicitkit._core.jsontext import canonical, compact
from elicitkit._core.kinds import Answer

__all__ = ["Entry", "Held", "canonical_schema", "digest_of", "held_at", "reusable_answer", "reusable_step"]


def canonical_schema(schema: dict[str, Any]) -> str:
    """A schema as the digest reads it (keys sorted, no spaces): the same text for the same schema."""
    return canonical(schema)


def digest_of(message: str, schema: dict[str, Any], canonical: str | None = None) -> str:
    """The digest of a question: `canonical` is `canonical_schema(schema)` when the caller has it already.

    The text digested is `{"m":<message>,"s":<schema>}` as canonical JSON; it is built from the parts so a
    schema asked with many times is serialised once.
    """
    schema_text = canonical_schema(schema) if canonical is None else canonical
    text = '{"m":' + compact(message) + ',"s":' + schema_text + "}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry: an answer (`kind="answer"`) or a step result (`kind="step"`)."""

    kind: Literal["answer", "step"]
    digest: str
    """The question's digest for an answer, the step's name for a step."""
    action: str = ""
    content: Any = None
    value: Any = None
    """A step's result; for an answer given on a human channel, who gave it ([channel, user id, name])."""
    reason: str | None = None
    """Why the person declined, when they said."""

    meta: Any = None
    """For an answer, the `_meta` of the client's reply (None when it carried none)."""

    @classmethod
    def of_answer(cls, digest: str, answer: Answer, by: list[Any] | None = None) -> Entry:
        return cls("answer", digest, answer.action, answer.content, value=by, reason=answer.reason, meta=answer.meta)

    def answer(self) -> Answer:
        return Answer(self.action, self.content, self.meta, reason=self.reason)


class Held(enum.Enum):
    """What a run's journal holds at the position of a question with a given digest."""

    EMPTY = "empty"
    """Nothing: an answer to the question may be journaled there."""
    SAME = "same"
    """The answer to this very question: it stands (the first one written wins)."""
    REWORDED = "reworded"
    """An answer to another wording of it (a replay asked anew): a new answer is taken without the journal."""
    MOVED_ON = "moved_on"
    """A step: the run has gone past this question."""


def held_at(entry: Entry | None, digest: str) -> Held:
    """The one rule for a journal entry found at a question's position."""
    if entry is None:
        return Held.EMPTY
    if entry.kind != "answer":
        return Held.MOVED_ON
    return Held.SAME if entry.digest == digest else Held.REWORDED


def reusable_answer(entry: Entry | None, digest: str) -> Answer | None:
    """The journaled answer to the question with `digest`, or None when it must be asked (again)."""
    if entry is not None and held_at(entry, digest) is Held.SAME:
        return entry.answer()
    return None


def reusable_step(entry: Entry | None, name: str) -> bool:
    """Whether `entry` is the journaled result of the step called `name`."""
    return entry is not None and entry.kind == "step" and entry.digest == name
