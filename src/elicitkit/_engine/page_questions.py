"""What elicitkit's pages ask of the engine: the open question behind a link, the link's one browser, and the
answer a page (or a channel's callback) sends, which is taken like every other arrival, through `Answers.take`
and the door of the node that holds its run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from elicitkit._core.journal import Held, held_at
from elicitkit._core.kinds import Answer
from elicitkit._core.once import Claim
from elicitkit._core.replies import Ruling
from elicitkit._engine.answers import Answers
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.records import Records
from elicitkit._engine.registry import Registry
from elicitkit._errors import InvalidElicitationContent
from elicitkit._schema import FormSchema
from elicitkit.channels.base import Responder

__all__ = ["PageQuestion", "PageQuestions", "PageReply"]


@dataclass(frozen=True, slots=True)
class PageQuestion:
    """What one of elicitkit's pages needs to show a question: its text and its form."""

    message: str
    schema: FormSchema


@dataclass(frozen=True, slots=True)
class PageReply:
    """What became of an answer sent from one of elicitkit's pages."""

    status: Literal["answered", "refused", "closed"]
    problems: InvalidElicitationContent | None = None
    """For `refused`: what is wrong, by field."""


class PageQuestions:
    """The questions as the pages see them (`_web.app.Questions`)."""

    def __init__(self, answers: Answers, registry: Registry, records: Records) -> None:
        self.answers = answers
        self.registry = registry
        self.records = records

    async def page_question(self, question_id: str, principal: str | None) -> PageQuestion | None:
        """The open question behind a page link, or None when it was answered, has expired or is someone else's."""
        question = self.registry.answerable.get(question_id)
        if question is not None:
            if not question.is_open or question.caller[0] != principal:
                return None
            return PageQuestion(question.message, question.schema)
        record = await self.records.load_question(question_id, principal)
        if record is None or not (record.observable or record.route == "channel"):
            return None
        if record.hosted:
            entry = (await self.records.journal(record.run_id, principal)).get(record.seq)
            if held_at(entry, record.digest) in (Held.SAME, Held.MOVED_ON):
                return None  # answered already: the run has moved on
        return PageQuestion(record.message, record.form())

    async def bind_link(self, question_id: str, expires_at: float, by: Responder | None = None) -> bool:
        """A browser opened the question's page link (`by`: the approver a channel handed it to): True only for
        the first browser, on any node."""
        return await self.records.bind_link(question_id, None if by is None else (by.channel, by.id), expires_at)

    async def page_answer(
        self, question_id: str, principal: str | None, answer: Answer, by: Responder | None = None
    ) -> PageReply:
        """An answer from one of elicitkit's pages or callbacks (`by`: the approver a channel sent there)."""
        claim = Claim.of_question("page", question_id)
        taken = await self.answers.take(Arrival("page", principal, {question_id: answer}, claim, by=by))
        if taken.answered:
            return PageReply("answered")
        if taken.ruling is Ruling.REFUSED:
            return PageReply("refused", taken.problems[question_id])
        return PageReply("closed")
