"""The desk every human channel's replies come to (web inbox, Slack, Discord, Teams), on any node.

It opens the question from the sealed token the channel's message carried,
checks the approvers, and hands the answer to the door of the node that holds
its run (`Answers.take`), which validates it against the type the tool asked
with, takes it once and delivers it. An answer for a hosted run whose node
died stays journaled: the run's next request replays it. `channel_route` puts
questions out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from elicitkit._core.journal import Held, held_at
from elicitkit._core.kinds import ACTIONS, Answer, decline_reason
from elicitkit._core.once import Claim
from elicitkit._core.replies import Ruling
from elicitkit._engine.answers import Answers
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.cluster import Cluster
from elicitkit._engine.records import QuestionRecord, Records
from elicitkit._errors import ElicitationNotSupported
from elicitkit._web.app import PageIdentity
from elicitkit._web.tokens import InvalidLink, Link, LinkTokens
from elicitkit.channels.base import Channel, Prompt, Responder, Verdict, Via

__all__ = ["ChannelDesk"]

_CLOSED = "This question is closed: it was already answered, withdrawn, or it expired."
_ANSWERED = "Thanks, your answer was recorded."


class ChannelDesk:
    """Where every channel's replies arrive (the `Desk` channels are bound to), and what elicitkit's own pages
    channels (the web inbox) reach besides: the inbox index, its change feed, the link tokens, who opens a page."""

    def __init__(self, records: Records, cluster: Cluster, answers: Answers, tokens: LinkTokens) -> None:
        self.records = records
        self.cluster = cluster
        self.answers = answers
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
        link, record = opened
        return self.prompt_of(token, link.question_id, record)

    async def reply(
        self,
        token: str,
        responder: Responder,
        action: str,
        content: Mapping[str, Any] | None,
        *,
        reason: str | None = None,
    ) -> Verdict:
        opened = await self._open(token)
        if opened is None:
            return Verdict("closed", _CLOSED)
        link, record = opened
        via = Via.from_json(record.via)
        if not via.allows(responder):
            return _not_approver(responder)
        if action not in ACTIONS:
            return Verdict("invalid", f"Unknown action {action!r}.", {"": "unknown action"})
        try:
            why = decline_reason(reason) if action == "decline" else None
        except ValueError as exc:
            return Verdict("invalid", str(exc), {"reason": str(exc)})
        answer = Answer(action, dict(content) if action == "accept" and content is not None else None, reason=why)
        if record.secret and action == "accept" and answer.content is not None and not self.own_pages(via.channel):
            # Only elicitkit's own pages (the web inbox is one) may carry secrets; chats get `secure_link`.
            return Verdict("invalid", "This question has secret fields: answer it on the secure page.", {})
        claim = Claim.of_question("channel", link.question_id)
        arrival = Arrival("channel", record.principal, {link.question_id: answer}, claim, by=responder)
        taken = await self.answers.take(arrival)
        if taken.ruling is Ruling.REFUSED:
            problems = taken.problems[link.question_id]
            detail: dict[str, str] = {}
            for p in problems.problems:  # by field name, as `Verdict.problems` promises: all of a field's problems
                detail[p.field] = f"{detail[p.field]}; {p.message}" if p.field in detail else p.message
            return Verdict("invalid", f"That answer is not valid: {problems}", detail)
        if not taken.answered:
            return Verdict("closed", _CLOSED)
        return Verdict("answered", _ANSWERED)

    async def secure_link(self, token: str, responder: Responder) -> Verdict:
        opened = await self._open(token)
        if opened is None:
            return Verdict("closed", _CLOSED)
        link, record = opened
        if not Via.from_json(record.via).allows(responder):
            return _not_approver(responder)
        by = (responder.channel, responder.id, responder.name)
        form = self.tokens.mint(Link(link.question_id, record.principal, "form", link.expires_at, by=by))
        return Verdict("answered", f"{self.base_url()}/elicit/f/{form}")

    # -- what elicitkit's own pages channels reach (the web inbox) ---------------------

    async def file_in_inbox(self, principal: str, entry_id: str, value: dict[str, Any], expires_at: float) -> None:
        await self.records.file_in_inbox(principal, entry_id, value, expires_at)

    async def inbox(self, principal: str) -> dict[str, dict[str, Any] | None]:
        return await self.records.inbox(principal)

    async def unfile(self, principal: str, entry_id: str) -> None:
        await self.records.unfile(principal, entry_id)

    def inbox_changes(self, principal: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """A message each time `principal`'s inbox changes, on any node, for as long as the context is open."""
        return self.cluster.broker.listen(self._inbox_channel(principal))

    async def inbox_changed(self, principal: str) -> None:
        await self.cluster.broker.publish(self._inbox_channel(principal), b"changed")

    def _inbox_channel(self, principal: str) -> str:
        return f"{self.cluster.prefix}:inbox:{Records.inbox_of(principal)}"

    # -- reading questions -----------------------------------------------------------

    async def _open(self, token: str) -> tuple[Link, QuestionRecord] | None:
        """The token's link and the open question's record."""
        try:
            link = self.tokens.read(token, "channel")
        except InvalidLink:
            return None
        record = await self.records.load_question(link.question_id, link.principal)
        if record is None or record.route != "channel" or record.via is None:
            return None
        if record.hosted:
            held = held_at((await self.records.journal(record.run_id, link.principal)).get(record.seq), record.digest)
            if held in (Held.SAME, Held.MOVED_ON):
                return None  # answered already: the run has moved on
        return link, record

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


def _not_approver(responder: Responder) -> Verdict:
    return Verdict("not_approver", f"Sorry {responder.label}, you are not one of the approvers of this question.")
