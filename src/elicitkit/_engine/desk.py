"""Questions asked on human channels (web inbox, Slack, Discord, Teams): the route out and the desk replies come to.

`ChannelRoute` records the question (sealed, with where it went and who may
answer), posts it on its channel, waits, and finally updates the message with
the outcome. `ChannelDesk` takes replies from any channel on any node: it
opens the question from the sealed token the message carried, checks the
approvers, validates the answer, takes it once, journals it (hosted runs), and
delivers it to the run here or on the node that holds it. An answer for a
hosted run whose node died stays journaled: the run's next request replays it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import replace
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context

from elicitkit._core.journal import Entry
from elicitkit._core.kinds import ACTIONS, Answer, RouteName
from elicitkit._engine.cluster import Cluster, encode_outcome
from elicitkit._engine.inbox import Inbox, PageQuestion
from elicitkit._engine.journal import Durability, QuestionRecord, RunRecord
from elicitkit._engine.policy import Policy
from elicitkit._engine.registry import Registry
from elicitkit._engine.routes import offer_task
from elicitkit._engine.run import Question, Run
from elicitkit._errors import ElicitationNotSupported
from elicitkit._schema import compile_schema, problems_in
from elicitkit._web.app import PageIdentity
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from elicitkit.channels.base import Channel, ChannelRefused, Closing, Prompt, Responder, Verdict, Via
from elicitkit.stores.base import Store

__all__ = ["ChannelDesk", "ChannelRoute", "PageQuestions"]

logger = logging.getLogger("elicitkit")

_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."
_ANSWERED = "Thanks, your answer was recorded."


def _summary(schema: Mapping[str, Any], answer: Answer, secret: tuple[str, ...]) -> str:
    if answer.action != "accept" or not isinstance(answer.content, Mapping):
        return ""
    titles = {name: prop.get("title") or name for name, prop in schema.get("properties", {}).items()}
    parts = []
    for name, value in answer.content.items():
        shown = "••••••" if name in secret else ", ".join(map(str, value)) if isinstance(value, list) else value
        parts.append(f"{titles.get(name, name)}: {shown}")
    return "; ".join(parts)


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
        return self._prompt(token, link.question_id, record)

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
        """Take `answer` once (across every node), journal it, deliver it; False when the question was closed."""
        if question is not None and question.answer is not None:
            return False
        if not await self.store.use_once(f"channel:{question_id}", time.time() + self.policy.run_expiry):
            return False
        if record.hosted and self.durability.keeps(record.secret):
            entry = Entry.of_answer(record.digest, answer)
            await self.durability.record(record.run_id, record.principal, record.seq, entry)
        by = None if responder is None else [responder.channel, responder.id, responder.name]
        if question is not None:
            self.deliver(question, answer, by)
            return True
        owner = record.node
        if record.hosted:
            found = await self.durability.load_run(record.run_id, record.principal)
            owner = found[0] if found is not None else owner
        payload = {"op": "channel", "question": question_id, "answer": [answer.action, answer.content], "by": by}
        if owner is not None and owner != self.policy.node and await self.store.is_alive(owner):
            delivered = await self.cluster.forward(
                owner, record.run_id, record.principal, payload, self.policy.forward_timeout, 5.0
            )
            if delivered is not None:
                return True
        if not record.hosted:
            logger.warning("Question %s was answered, but the node that asked it is gone", question_id)
        return True  # a hosted run's answer is journaled: its next request replays it

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
        if record.hosted and record.seq in await self.store.journal(record.run_id):
            return None  # answered already: the run has moved on
        return record

    def _prompt(self, token: str, question_id: str, record: QuestionRecord) -> Prompt:
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


class ChannelRoute:
    """Out of band: the question goes to a channel, and the tool waits for the desk to deliver its answer."""

    name: RouteName = "channel"
    tracked = False

    def __init__(self, policy: Policy, desk: ChannelDesk) -> None:
        self.policy = policy
        self.desk = desk

    async def put(
        self, ctx: Context[Any, Any], rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        via = question.via
        assert via is not None
        assert run is not None  # `Asker.choose` refuses a channel question outside a run
        if self.desk.own_pages(via.channel):
            # The web inbox shows a question to one principal, who alone answers unless approvers say otherwise.
            inbox_of = via.target if via.target is not None else run.principal
            if inbox_of is None:
                raise ElicitationNotSupported(
                    "The web inbox shows questions to a principal: authenticate the MCP client, or say whose "
                    "inbox with web('alice')"
                )
            via = replace(via, target=inbox_of, approvers=via.approvers or frozenset({inbox_of}))
        desk = self.desk
        channel = desk.channel(via)
        expires = self.policy.wall_expiry(question) if run.hosted else question.expires_wall()
        token = desk.tokens.mint(Link(question.id, run.principal, "channel", expires))
        record = QuestionRecord(
            run_id=run.id,
            seq=question.seq,
            digest=question.digest,
            message=question.message,
            schema=question.schema.wire,
            route="channel",
            principal=run.principal,
            secret=question.secret_fields,
            via=via.to_json(),
            node=self.policy.node,
            tool=run.tool,
            hosted=run.hosted,
            expires_at=expires,
        )
        await desk.durability.save_question(question.id, record, expires)
        if run.hosted:
            # The run must stay replayable for as long as the person may answer (a restart, a crash).
            run_record = RunRecord(run.tool, run.arguments, run.mrtr)
            await desk.durability.save_run(
                run.id, run.principal, run_record, expires - time.time() + self.policy.run_expiry
            )
        desk.registry.channel_questions[question.id] = question
        run.pending[question.id] = question
        prompt = desk._prompt(token, question.id, record)
        ref: dict[str, Any] | None = None
        kept = False
        try:
            await question.reached("stored")
            try:
                ref = await channel.post(prompt)
            except ChannelRefused as exc:
                raise ElicitationNotSupported(f"The {via.channel} channel cannot show this question: {exc}") from None
            await desk.durability.save_question(question.id, replace(record, ref=ref), expires)
            await question.reached("sent")
            offer_task(run)  # a person elsewhere may take long: the client polls a task instead of waiting
            await question.wait()
        except anyio.get_cancelled_exc_class():
            # The server is shutting down (not the run ending, nor the question expiring): the question stays
            # open, recorded, and its answer replays the run after the restart.
            kept = run.hosted and not run.scope.cancel_called and anyio.current_time() < question.expires_at
            raise
        finally:
            desk.registry.channel_questions.pop(question.id, None)
            if not kept:
                with anyio.CancelScope(shield=True):
                    if ref is not None:
                        await self._close(channel, prompt, ref, question, record)
                    with suppress(Exception):
                        await desk.store.delete_question(question.id)

    async def _close(
        self, channel: Channel, prompt: Prompt, ref: dict[str, Any], question: Question, record: QuestionRecord
    ) -> None:
        answer = question.answer
        if answer is None:
            expired = anyio.current_time() >= question.expires_at
            closing = Closing("expired" if expired else "withdrawn")
        else:
            action = answer.action if answer.action in ACTIONS else "cancel"
            summary = _summary(record.schema, answer, record.secret)
            closing = Closing(action, question.responder, summary)
        try:
            with anyio.fail_after(10):
                await channel.close(prompt, ref, closing)
        except Exception:
            logger.warning("Could not update the %s message of question %s", channel.name, question.id, exc_info=True)


def _not_approver(responder: Responder) -> Verdict:
    return Verdict("not_approver", f"Sorry {responder.label}, you are not one of the approvers of this question.")
