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
from typing import Protocol

from elicitkit._core.journal import Entry, Held, held_at
from elicitkit._core.kinds import Answer, Mode, RouteName
from elicitkit._core.once import fingerprint
from elicitkit._core.replies import Ruling, Source, Standing, accepts, counts_attempt, rule
from elicitkit._engine.arrival import Arrival, Taken
from elicitkit._engine.deadlines import cancel_scope
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import QuestionRecord, Records
from elicitkit._engine.run import Run
from elicitkit._engine.stages import StageEvent, Stages
from elicitkit._errors import InvalidElicitationContent
from elicitkit.channels.base import Responder

__all__ = ["Door", "Live", "Recorded"]

logger = logging.getLogger("elicitkit")


class Asked(Protocol):
    """What the door reads of a question, live (`Question`) or recorded (`QuestionRecord`)."""

    @property
    def seq(self) -> int: ...

    @property
    def digest(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def observable(self) -> bool: ...

    @property
    def content_private(self) -> bool: ...

    @property
    def secret_fields(self) -> tuple[str, ...]: ...

    @property
    def route(self) -> RouteName | None: ...

    @property
    def is_open(self) -> bool: ...

    def problems(self, answer: Answer) -> InvalidElicitationContent | None: ...


class Live:
    """The questions of a run this process holds (`run` None: a question asked outside a run elicitkit saw)."""

    __slots__ = ("journaled", "principal", "questions", "run", "run_id")

    def __init__(self, run: Run | None, questions: Mapping[str, Question]) -> None:
        self.run = run
        self.questions = questions
        self.run_id = None if run is None else run.id
        self.principal = None if run is None else run.principal
        self.journaled = run is not None and run.hosted

    def find(self, key: str) -> Question | None:
        return self.questions.get(key)

    @staticmethod
    def held(question: Asked) -> Held:
        return Held.EMPTY  # not read up front: the journal's write says whether the position was free

    @staticmethod
    def id_of(key: str, question: Asked) -> str:
        assert isinstance(question, Question)
        return question.id


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

    def find(self, key: str) -> QuestionRecord | None:
        return self.records.get(key)

    def held(self, question: Asked) -> Held:
        return held_at(self.journal.get(question.seq), question.digest) if self.journaled else Held.EMPTY

    @staticmethod
    def id_of(key: str, question: Asked) -> str:
        return key


_Found = dict[str, tuple[Asked, Answer]]


def _closes_record(question: Asked) -> bool:
    """Its stored record goes once it is answered: a 2026-07-28 form (a retry names its run; the model's answer
    names only its question, whose record then stays, to tell a resent answer from a new one)."""
    return question.route == "mrtr" and question.mode == "form"


class Door:
    """Takes answers: rules on them, journals them with their claim, and delivers them."""

    def __init__(self, policy: Policy, records: Records, stages: Stages) -> None:
        self.policy = policy
        self.records = records
        self.stages = stages

    async def take(self, target: Live | Recorded, arrival: Arrival) -> Taken:
        """The one operation that takes answers (see the module docstring)."""
        taken = Taken()
        run, claim, source = target.run, arrival.claim, arrival.source
        if claim is not None and claim.round and run is not None and not run.is_round(claim.text):
            await self._spent_before(target, arrival, taken)
            return taken
        rulings = taken.rulings
        found: _Found = {}
        watching, checking = self.stages.lookups_watched, self.stages.validation_hooked
        for key, answer in arrival.answers.items():
            question = target.find(key)
            if checking and isinstance(question, QuestionRecord):
                question = self.stages.checked(question, key)
            if watching:
                found_it = question is not None
                self.stages.tell(
                    StageEvent("lookup_pending", key, arrival.principal, target.run_id, source, found=found_it)
                )
            if question is None or not accepts(source, question.route, question.observable):
                rulings[key] = Ruling.STALE
                continue
            ruling = _ruling(question, target.held(question), answer, source)
            if ruling is Ruling.REFUSED:
                wrong = question.problems(answer)  # (a live question remembers what it found)
                assert wrong is not None
                taken.problems[key] = wrong
            rulings[key] = ruling
            found[key] = (question, answer)
        if not found and claim is not None and not claim.round:
            # No open question took it: perhaps this very answer was taken before (a resend), which stands.
            await self._spent_before(target, arrival, taken)
            return taken
        gone: frozenset[str] | set[str] | None = _NONE_GONE
        if target.journaled:
            # Written and delivered together: a request cancelled (its connection dropped) while the store writes
            # would leave the round spent in the store and the answer never delivered, and a resend of the same
            # retry, taken as the first, would wait for the run forever.
            with cancel_scope(shield=True):
                gone = await self._write(target, arrival, taken, found)
        if gone is None:
            return taken
        for key, (asked, answer) in found.items():
            if isinstance(asked, Question):
                ruling, exhausted = _delivered(
                    asked, rulings[key], answer, arrival.by, source, taken.problems.get(key), asked.id in gone
                )
                rulings[key] = ruling
                taken.exhausted = taken.exhausted or exhausted
        return taken

    async def reply(self, source: Source, run: Run | None, question: Question, answer: Answer) -> Ruling:
        """`take` for the one question whose route's own request brought `answer` (the client's reply to a native
        request, the fallback handler's): the same rule and delivery, without the bookkeeping of an arrival when
        nothing is journaled (a run that only this request's task holds: see `reply_here`)."""
        if run is not None and run.hosted:
            arrival = Arrival(source, run.principal, {question.id: answer})
            return (await self.take(Live(run, {question.id: question}), arrival)).ruling
        return self.reply_here(source, question, answer)

    def reply_here(self, source: Source, question: Question, answer: Answer) -> Ruling:
        """`reply` for a question of no journaled run: nothing to write, so nothing to await."""
        if self.stages.lookups_watched:
            principal = question.caller[0]
            self.stages.tell(StageEvent("lookup_pending", question.id, principal, None, source, found=True))
        ruling = _ruling(question, Held.EMPTY, answer, source)
        problems = question.problems(answer) if ruling is Ruling.REFUSED else None
        return _delivered(question, ruling, answer, None, source, problems)[0]

    async def _write(
        self, target: Live | Recorded, arrival: Arrival, taken: Taken, found: _Found
    ) -> frozenset[str] | set[str] | None:
        """Journal what is answered and spend the claim, in one store step.

        Only a journaled run's answers may be taken on more than one node, so only they come here: a question of
        any other run is held by the process that asked it, and its own state is its once. Returns the ids of
        questions whose stored records went with the step; None when the claim was spent already (every ruling
        is then a duplicate) or a retry's round is not the run's any more.
        """
        assert target.run_id is not None
        answering = [key for key in found if taken.rulings[key] is Ruling.ANSWERS]
        claim = arrival.claim
        answers_print = fingerprint(arrival.answers)
        # A retry spends its round whatever its answers say; any other claim only with an answer it takes.
        spends = claim is not None and (claim.round or bool(answering))
        entries: dict[int, Entry] = {}
        answered: list[str] = []
        by = None if arrival.by is None else arrival.by.to_json()
        for key in answering:
            question, answer = found[key]
            if self.records.keeps(question.secret_fields):
                entries[question.seq] = Entry.of_answer(question.digest, answer, by)
                if spends and _closes_record(question):
                    answered.append(target.id_of(key, question))
        if not spends and not entries:
            return _NONE_GONE
        written = await self.records.take(
            target.run_id,
            target.principal,
            claim if spends else None,
            self.policy.run_expiry,
            entries,
            answered,
            answers_print,
        )
        if written is None:
            for key, ruling in taken.rulings.items():
                if ruling is not Ruling.STALE:
                    taken.rulings[key] = Ruling.DUPLICATE
            await self._spent_before(target, arrival, taken)
            return None
        run = target.run
        if run is not None and self.records.closes_answered:
            run.records_gone(answered)  # they went with the step
        if claim is not None and claim.round and run is not None and not run.take_round(claim.text, answers_print):
            taken.refusal = "reused"
            return None
        if len(written) < len(entries):
            unwritten = [key for key in answering if found[key][0].seq in entries.keys() - written]
            await self._reconcile(target, taken, found, unwritten)
        return set(answered) if self.records.closes_answered else _NONE_GONE

    async def _spent_before(self, target: Live | Recorded, arrival: Arrival, taken: Taken) -> None:
        """The arrival's claim was spent already: by these very answers (a resend: `resent`, answered as the first
        was), or by others (a retry's used round: refused as reused; any other claim: its rulings are duplicates)."""
        claim = arrival.claim
        assert claim is not None
        spent = None if target.run_id is None else await self.records.spent_with(target.run_id, claim)
        if spent is not None and spent == fingerprint(arrival.answers):
            taken.resent = True
            for key, ruling in taken.rulings.items():
                if ruling is not Ruling.STALE:
                    taken.rulings[key] = Ruling.DUPLICATE
        elif claim.round:
            taken.refusal = "reused"

    async def _reconcile(self, target: Live | Recorded, taken: Taken, found: _Found, keys: list[str]) -> None:
        """Answers whose position the journal held already: the first writer's answer stands."""
        assert target.run_id is not None
        journal = await self.records.journal(target.run_id, target.principal)
        for key in keys:
            question, _ = found[key]
            entry = journal.get(question.seq)
            held = held_at(entry, question.digest)
            if held is Held.SAME and entry is not None:
                taken.rulings[key] = Ruling.DUPLICATE
                if isinstance(question, Question):  # it still waits: it gets the answer that came first
                    question.resolve(entry.answer(), Responder.from_json(entry.value))
            elif held is Held.MOVED_ON:
                taken.rulings[key] = Ruling.STALE
            elif held is Held.REWORDED:
                # A replay asked it anew in other words; the position keeps the first wording's answer.
                logger.info("Question %s was reworded since its position was journaled; taking its answer", key)


def _ruling(question: Asked, held: Held, answer: Answer, source: Source) -> Ruling:
    """`rule`, read off a question live or recorded."""
    standing: Standing = "open" if question.is_open else "answered"
    observable, follows_schema = question.observable, not question.content_private
    return rule(standing, held, question.mode, observable, follows_schema, answer, source, question.problems)


def _delivered(
    question: Question,
    ruling: Ruling,
    answer: Answer,
    by: Responder | None,
    source: Source,
    problems: InvalidElicitationContent | None,
    record_gone: bool = False,
) -> tuple[Ruling, bool]:
    """Apply a ruling to a live question: (the ruling as it stands after, whether a refusal used the last attempt)."""
    if ruling is Ruling.ANSWERS:
        if not question.resolve(answer, by, record_gone=record_gone):
            return Ruling.DUPLICATE, False  # another answer got there first, in this process
    elif ruling is Ruling.ACKNOWLEDGES:
        question.acknowledge()
    elif ruling is Ruling.REFUSED and counts_attempt(source):
        assert problems is not None
        return ruling, question.refuse(problems)
    return ruling, False


_NONE_GONE: frozenset[str] = frozenset()
