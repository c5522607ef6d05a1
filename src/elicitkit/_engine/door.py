"""The door: the one way an answer is taken, wherever it arrives.

Every answer — the client's reply to a native request, the server's fallback
handler, a 2026-07-28 retry, the model's `sendElicitationResult`, a
`tasks/update`, one of elicitkit's pages, a human channel — comes in as an
`Arrival` and goes through `Door.take`:

1. **find** its questions: held by a run in this process (`Live`), or, when no
   live node holds the run, from their sealed records (`Recorded`);
2. **rule** on each answer with `_core.replies.rule` (answers, only
   acknowledges, refused with problems, stale, duplicate), validated against
   the type the tool asked with when the question is live;
3. **journal** the answers and **spend** the arrival's one-time claim, in one
   store step (the journal's first write wins; an answer to another wording of
   the question is taken without it);
4. **deliver** them to their questions (a live run resumes at the same `await`)
   — or leave them journaled for the run's replay.

When another node holds the run, the arrival itself travels there (see
`Answers` in `_engine/answers.py`) and goes through that node's door: one
validation, by the node that holds the type.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from elicitkit._core.journal import Entry, Held, held_at
from elicitkit._core.kinds import Answer
from elicitkit._core.once import Claim
from elicitkit._core.replies import Ruling, Source, Standing, accepts, counts_attempt, rule
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import QuestionRecord, Records
from elicitkit._engine.run import Run
from elicitkit._errors import InvalidElicitationContent
from elicitkit.channels.base import Responder

__all__ = ["Arrival", "Door", "Live", "Recorded", "Taken"]

logger = logging.getLogger("elicitkit")

Refusal = Literal["unknown", "ended", "reused"]
"""Why a retry reaches no run: not this caller's (or gone), ending, or its round was used already."""


@dataclass(frozen=True, slots=True)
class Arrival:
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
            "answers": {key: [a.action, a.content] for key, a in self.answers.items()},
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
            answers={str(key): Answer(str(action), content) for key, (action, content) in wire["answers"].items()},
            claim=None if claim is None else Claim(str(claim[0]), round=bool(claim[1])),
            run_id=wire.get("run"),
            tool=wire.get("tool"),
            by=Responder.from_json(wire.get("by")),
        )

    @property
    def question_id(self) -> str:
        """The one question a page, a channel or the model answers."""
        return next(iter(self.answers))


@dataclass(slots=True)
class Taken:
    """What the door made of an arrival."""

    rulings: dict[str, Ruling] = field(default_factory=dict)
    problems: dict[str, InvalidElicitationContent] = field(default_factory=dict)
    exhausted: bool = False
    """A refusal used up a question's last attempt: its `elicit` raises `InvalidElicitationContent`."""
    refusal: Refusal | None = None

    @property
    def ruling(self) -> Ruling:
        """The ruling on the one answer of a single-answer arrival (a stale one when there was none)."""
        return next(iter(self.rulings.values()), Ruling.STALE)

    def has(self, ruling: Ruling) -> bool:
        return ruling in self.rulings.values()


@dataclass(frozen=True, slots=True)
class _Asked:
    """One question as the door sees it, live or recorded: what was asked, and where it stands."""

    id: str
    seq: int
    digest: str
    mode: str
    observable: bool
    follows_schema: bool
    secret_fields: tuple[str, ...]
    closes_record: bool
    """Its stored record goes once it is answered (a form on a route that stores its questions)."""
    standing: Standing
    question: Question | None = None
    record: QuestionRecord | None = None

    def problems(self, answer: Answer) -> InvalidElicitationContent | None:
        if self.question is not None:
            return self.question.problems(answer)
        assert self.record is not None
        return self.record.problems(answer.action, answer.content)


class Live:
    """The questions of a run this process holds (`run` None: a question asked outside a run elicitkit saw)."""

    def __init__(self, run: Run | None, questions: Mapping[str, Question]) -> None:
        self.run = run
        self.questions = questions

    @property
    def run_id(self) -> str | None:
        return None if self.run is None else self.run.id

    @property
    def principal(self) -> str | None:
        return None if self.run is None else self.run.principal

    @property
    def journaled(self) -> bool:
        return self.run is not None and self.run.hosted

    def find(self, key: str, source: Source) -> _Asked | None:
        question = self.questions.get(key)
        if question is None or not accepts(source, question.route, question.observable):
            return None
        return _Asked(
            id=question.id,
            seq=question.seq,
            digest=question.digest,
            mode=question.mode,
            observable=question.observable,
            follows_schema=not question.asked.content_private,
            secret_fields=question.secret_fields,
            closes_record=question.route in ("mrtr", "llm") and question.mode == "form",
            standing="open" if question.is_open else "answered",
            question=question,
        )

    def held(self, asked: _Asked) -> Held:
        return Held.EMPTY  # not read up front: the journal's write says whether the position was free


class Recorded:
    """The questions of a run no live node holds, from their records; their answers wait in the journal."""

    def __init__(
        self,
        run_id: str,
        principal: str | None,
        records: Mapping[str, QuestionRecord],
        journal: Mapping[int, Entry],
        *,
        hosted: bool = True,
    ) -> None:
        self.run_id: str | None = run_id
        self.principal = principal
        self.records = records
        self.journal = journal
        self.journaled = hosted
        self.run: Run | None = None

    def find(self, key: str, source: Source) -> _Asked | None:
        record = self.records.get(key)
        if record is None or not accepts(source, record.route, record.observable):
            return None
        return _Asked(
            id=key,
            seq=record.seq,
            digest=record.digest,
            mode=record.mode,
            observable=record.observable,
            follows_schema=not record.content_private,
            secret_fields=record.secret,
            closes_record=record.route in ("mrtr", "llm") and record.mode == "form",
            standing="open",
            record=record,
        )

    def held(self, asked: _Asked) -> Held:
        return held_at(self.journal.get(asked.seq), asked.digest) if self.journaled else Held.EMPTY


_Found = dict[str, tuple[_Asked, Answer]]


class Door:
    """Takes answers: rules on them, journals them with their claim, and delivers them."""

    def __init__(self, policy: Policy, records: Records) -> None:
        self.policy = policy
        self.records = records

    async def take(self, target: Live | Recorded, arrival: Arrival) -> Taken:
        """The one operation that takes answers (see the module docstring)."""
        taken = Taken()
        run, claim = target.run, arrival.claim
        if claim is not None and claim.round and run is not None and not run.is_round(claim.text):
            taken.refusal = "reused"
            return taken
        found = self._rule(target, arrival, taken)
        gone = await self._write(target, arrival, taken, found)
        if gone is None:
            return taken
        for key, (asked, answer) in found.items():
            if asked.question is not None:
                self._deliver(asked.question, taken, key, answer, arrival, record_gone=asked.id in gone)
        return taken

    def _rule(self, target: Live | Recorded, arrival: Arrival, taken: Taken) -> _Found:
        found: _Found = {}
        for key, answer in arrival.answers.items():
            asked = target.find(key, arrival.source)
            if asked is None:
                taken.rulings[key] = Ruling.STALE
                continue

            def problems(asked: _Asked = asked, answer: Answer = answer, key: str = key) -> object | None:
                wrong = asked.problems(answer)
                if wrong is not None:
                    taken.problems[key] = wrong
                return wrong

            taken.rulings[key] = rule(
                asked.standing,
                target.held(asked),
                mode="url" if asked.mode == "url" else "form",
                observable=asked.observable,
                follows_schema=asked.follows_schema,
                action=answer.action,
                source=arrival.source,
                problems=problems,
            )
            found[key] = (asked, answer)
        return found

    async def _write(self, target: Live | Recorded, arrival: Arrival, taken: Taken, found: _Found) -> set[str] | None:
        """Journal what is answered and spend the claim, in one store step.

        Only a journaled run's answers may be taken on more than one node; a question of any other run is held
        by the process that asked it, and its own state is its once. Returns the ids of questions whose stored
        records went with the step; None when the claim was spent already (every ruling is then a duplicate)
        or a retry's round is not the run's any more.
        """
        if not target.journaled:
            return set()
        assert target.run_id is not None
        answering = [key for key in found if taken.rulings[key] is Ruling.ANSWERS]
        claim = arrival.claim
        # A retry spends its round whatever its answers say; any other claim only with an answer it takes.
        spends = claim is not None and (claim.round or bool(answering))
        entries: dict[int, Entry] = {}
        answered: list[str] = []
        by = None if arrival.by is None else arrival.by.to_json()
        for key in answering:
            asked, answer = found[key]
            if self.records.keeps(asked.secret_fields):
                entries[asked.seq] = Entry.of_answer(asked.digest, answer, by)
                if asked.closes_record and spends:
                    answered.append(asked.id)
        if not spends and not entries:
            return set()
        written = await self.records.take(
            target.run_id, target.principal, claim if spends else None, self.policy.run_expiry, entries, answered
        )
        if written is None:
            for key, ruling in taken.rulings.items():
                if ruling is not Ruling.STALE:
                    taken.rulings[key] = Ruling.DUPLICATE
            if claim is not None and claim.round:
                taken.refusal = "reused"
            return None
        run = target.run
        if claim is not None and claim.round and run is not None and not run.take_round(claim.text):
            taken.refusal = "reused"
            return None
        unwritten = [key for key in answering if found[key][0].seq in entries and found[key][0].seq not in written]
        if unwritten:
            await self._reconcile(target, taken, found, unwritten)
        return set(answered) if self.records.closes_answered else set()

    async def _reconcile(self, target: Live | Recorded, taken: Taken, found: _Found, keys: list[str]) -> None:
        """Answers whose position the journal held already: the first writer's answer stands."""
        assert target.run_id is not None
        journal = await self.records.journal(target.run_id, target.principal)
        for key in keys:
            asked, _ = found[key]
            entry = journal.get(asked.seq)
            held = held_at(entry, asked.digest)
            if held is Held.SAME and entry is not None:
                taken.rulings[key] = Ruling.DUPLICATE
                if asked.question is not None:  # it still waits: it gets the answer that came first
                    asked.question.resolve(entry.answer(), Responder.from_json(entry.value))
            elif held is Held.MOVED_ON:
                taken.rulings[key] = Ruling.STALE
            elif held is Held.REWORDED:
                # A replay asked it anew in other words; the position keeps the first wording's answer.
                logger.info("Question %s was reworded since its position was journaled; taking its answer", asked.id)

    @staticmethod
    def _deliver(
        question: Question, taken: Taken, key: str, answer: Answer, arrival: Arrival, *, record_gone: bool
    ) -> None:
        ruling = taken.rulings[key]
        if ruling is Ruling.ANSWERS:
            if not question.resolve(answer, arrival.by, record_gone=record_gone):
                taken.rulings[key] = Ruling.DUPLICATE  # another answer got there first, in this process
        elif ruling is Ruling.ACKNOWLEDGES:
            question.acknowledge()
        elif ruling is Ruling.REFUSED and counts_attempt(arrival.source) and question.refuse(taken.problems[key]):
            taken.exhausted = True
