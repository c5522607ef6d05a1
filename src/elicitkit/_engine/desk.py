"""The desk every human channel's replies come to (web inbox, Slack, Discord, Teams), on any node.

It opens the question from the sealed token the channel's message carried,
checks the approvers, validates the answer, takes it once (for a hosted run,
the journal's first write is the once), and delivers it to the run here or on
the node that holds it. An answer for a hosted run whose node died stays
journaled: the run's next request replays it. `channel_route` puts questions
out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from elicitkit._core.journal import Entry
from elicitkit._core.kinds import ACTIONS, Answer
from elicitkit._engine.cluster import Cluster, encode_outcome
from elicitkit._engine.inbox import Inbox, PageQuestion
from elicitkit._engine.journal import Durability, QuestionRecord
from elicitkit._engine.policy import Policy
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Question
from elicitkit._errors import ElicitationNotSupported
from elicitkit._schema import compile_schema, problems_in
from elicitkit._web.app import PageIdentity
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from elicitkit.channels.base import Channel, Prompt, Responder, Verdict, Via
from elicitkit.stores.base import Store

__all__ = ["ChannelDesk", "PageQuestions"]

logger = logging.getLogger("elicitkit")

_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."
_ANSWERED = "Thanks, your answer was recorded."


class ChannelDesk:
    """Where every channel's replies arrive (the `Desk` channels are bound to)."""

    def __init__(
        self,
        policy: Policy,
        registry: Registry,
        durability: Durability,
        store: Store,
        cluster: Cluster,
        tokens: LinkTokens,
    ) -> None:
        self.policy = policy
        self.registry = registry
        self.durability = durability
        self.store = store
        self.cluster = cluster
        self.tokens = tokens
        self.channels: dict[str, Channel] = {}
        self.base_url: Callable[[], str] = lambda: ""
        self.page_identity: PageIdentity | None = None
        """Who opens one of elicitkit's pages (the web inbox's people)."""

    def add(self, channel: Channel) -> None:
        if channel.name in self.channels:
            raise ValueError(f"A channel named {channel.name!r} is already added")
        channel.bind(self, self.base_url)
        self.channels[channel.name] = channel

    def own_pages(self, name: str) -> bool:
        """Whether the channel named `name` is one of elicitkit's own pages (the web inbox): it shows a question to
        one principal, and may carry secret fields."""
        return bool(getattr(self.channels.get(name), "own_pages", False))

    def channel(self, via: Via) -> Channel:
        found = self.channels.get(via.channel)
        if found is None:
            known = ", ".join(sorted(self.channels)) or "none"
            raise ElicitationNotSupported(
                f"No channel named {via.channel!r} was added to this Elicitation (added: {known}); "
                f"pass channels=[...] to Elicitation(...)"
            )
        return found

    # -- what channels call ----------------------------------------------------------

    async def prompt(self, token: str) -> Prompt | None:
        opened = await self._open(token)
        if opened is None:
            return None
        link, record, _ = opened
        return self.prompt_of(token, link.question_id, record)

    async def reply(self, token: str, responder: Responder, action: str, content: Mapping[str, Any] | None) -> Verdict:
        opened = await self._open(token)
        if opened is None:
            return Verdict("closed", _CLOSED)
        link, record, question = opened
        via = Via.from_json(record.via)
        if not via.allows(responder):
            return _not_approver(responder)
        if action not in ACTIONS:
            return Verdict("invalid", f"Unknown action {action!r}.", {"": "unknown action"})
        answer = Answer(action, dict(content) if action == "accept" and content is not None else None)
        if record.secret and action == "accept" and answer.content is not None and not self.own_pages(via.channel):
            # Only elicitkit's own pages (the web inbox is one) may carry secrets; chats get `secure_link`.
            return Verdict("invalid", "This question has secret fields: answer it on the secure page.", {})
        problems = problems_in(compile_schema(record.schema), answer.action, answer.content)
        if problems is not None:
            detail = {p.path: p.message for p in problems.problems}
            return Verdict("invalid", f"That answer is not valid: {problems}", detail)
        if not await self.take(link.question_id, record, question, answer, responder):
            return Verdict("closed", _CLOSED)
        return Verdict("answered", _ANSWERED)

    async def secure_link(self, token: str, responder: Responder) -> Verdict:
        opened = await self._open(token)
        if opened is None:
            return Verdict("closed", _CLOSED)
        link, record, _ = opened
        if not Via.from_json(record.via).allows(responder):
            return _not_approver(responder)
        by = (responder.channel, responder.id, responder.name)
        form = self.tokens.mint(Link(link.question_id, record.principal, "form", link.expires_at, by=by))
        return Verdict("answered", f"{self.base_url()}/elicit/f/{form}")

    # -- what elicitkit's pages call, for channel questions with secret fields --------

    async def page_question(self, question_id: str, principal: str | None) -> PageQuestion | None:
        record = await self._record(question_id, principal)
        if record is None:
            return None
        return PageQuestion(record.message, replace(compile_schema(record.schema), secret_fields=record.secret))

    async def page_answer(
        self, question_id: str, principal: str | None, answer: Answer, by: tuple[str, str, str | None] | None
    ) -> bool | None:
        """None when `question_id` is not a channel question (the pages then ask the inbox)."""
        record = await self._record(question_id, principal)
        if record is None:
            return None
        question = self.registry.channel_questions.get(question_id)
        responder = None if by is None else Responder(*by)
        return await self.take(question_id, record, question, answer, responder)

    # -- taking and delivering -------------------------------------------------------

    async def take(
        self,
        question_id: str,
        record: QuestionRecord,
        question: Question | None,
        answer: Answer,
        responder: Responder | None,
    ) -> bool:
        """Take `answer` once (across every node), record it, deliver it; False when the question was closed or
        its run cannot be reached (then nobody waits for it any more)."""
        if question is not None and question.answer is not None:
            return False
        by = None if responder is None else [responder.channel, responder.id, responder.name]
        journaled = record.hosted and self.durability.keeps(record.secret)
        if journaled:
            # The journal's first write wins: it is the once, and a store failure here takes nothing. It says who
            # answered, for the message's outcome when a replay finds the answer there.
            entry = Entry.of_answer(record.digest, answer, by)
            if not await self.durability.record(record.run_id, record.principal, record.seq, entry):
                held = (await self.durability.journal(record.run_id, record.principal)).get(record.seq)
                if held is None or held.kind != "answer" or held.digest == record.digest:
                    return False  # answered already
                # The step holds an answer to an earlier wording of the question (a replay asks anew): this
                # answer is taken once without the journal, as a reworded question's is everywhere else.
                journaled = False
        if not journaled and not await self.store.use_once(
            f"channel:{question_id}", time.time() + self.policy.run_expiry
        ):
            return False
        if question is None:
            question = self.registry.channel_questions.get(question_id)  # a replay may have picked it up since
        if question is not None:
            self.deliver(question, answer, by)
            return True
        owner = record.node
        if record.hosted:
            found = await self.durability.load_run(record.run_id, record.principal)
            owner = found[0] if found is not None else owner
        payload = {"op": "channel", "question": question_id, "answer": [answer.action, answer.content], "by": by}
        if owner is not None and owner != self.policy.node and await self.cluster.alive(owner):
            delivered = await self.cluster.forward(
                owner, record.run_id, record.principal, payload, self.policy.forward_timeout, 5.0
            )
            if delivered is not None:
                return True
        if journaled:
            return True  # the run's next request (a retry, a task poll) replays it with this answer
        logger.warning("Question %s was answered, but the run that asked it is gone", question_id)
        return False

    def deliver(self, question: Question, answer: Answer, by: list[Any] | None) -> None:
        if by is not None:
            question.responder = Responder(str(by[0]), str(by[1]), by[2])
        question.resolve(answer)

    def forwarded(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        question = self.registry.channel_questions.get(str(payload.get("question")))
        if question is None:
            return None
        action, content = payload["answer"]
        self.deliver(question, Answer(action, content), payload.get("by"))
        return encode_outcome(None)

    # -- reading questions -----------------------------------------------------------

    async def _open(self, token: str) -> tuple[Link, QuestionRecord, Question | None] | None:
        """The token's link, the open question's record, and the question itself when this process holds it."""
        try:
            link = self.tokens.read(token, "channel")
        except InvalidLink:
            return None
        record = await self._record(link.question_id, link.principal)
        if record is None:
            return None
        return link, record, self.registry.channel_questions.get(link.question_id)

    async def _record(self, question_id: str, principal: str | None) -> QuestionRecord | None:
        record = await self.durability.load_question(question_id, principal)
        if record is None or record.route != "channel" or record.via is None:
            return None
        if record.hosted:
            held = (await self.durability.journal(record.run_id, principal)).get(record.seq)
            if held is not None and (held.kind != "answer" or held.digest == record.digest):
                return None  # answered already: the run has moved on
        return record

    def prompt_of(self, token: str, question_id: str, record: QuestionRecord) -> Prompt:
        return Prompt(
            id=question_id,
            token=token,
            message=record.message,
            schema=record.schema,
            target=Via.from_json(record.via).target,  # the route named the web inbox's principal already
            expires_at=record.expires_at,
            tool=record.tool,
            secret_fields=record.secret,
        )


class PageQuestions:
    """What elicitkit's pages reach: channel questions with secret fields first, then the inbox's link questions."""

    def __init__(self, desk: ChannelDesk, inbox: Inbox) -> None:
        self.desk = desk
        self.inbox = inbox

    async def page_question(self, question_id: str, principal: str | None) -> PageQuestion | None:
        found = await self.desk.page_question(question_id, principal)
        return found if found is not None else await self.inbox.page_question(question_id, principal)

    async def page_answer(
        self, question_id: str, principal: str | None, answer: Answer, by: tuple[str, str, str | None] | None = None
    ) -> bool:
        taken = await self.desk.page_answer(question_id, principal, answer, by)
        return taken if taken is not None else await self.inbox.page_answer(question_id, principal, answer)

    async def use_link(self, question_id: str, expires_at: float) -> bool:
        return await self.inbox.use_link(question_id, expires_at)


def _not_approver(responder: Responder) -> Verdict:
    return Verdict("not_approver", f"Sorry {responder.label}, you are not one of the approvers of this question.")
