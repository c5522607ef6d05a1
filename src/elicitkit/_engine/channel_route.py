"""The channel route: a question goes to a human channel instead of the client, and the tool waits for the desk.

It records the question (sealed, with where it went and who may answer),
posts it on its channel, waits (with progress keepalives while a request
waits), and finally updates the message with the outcome. A replayed run (a
restart, a takeover) picks up the message its earlier copy posted instead of
posting again, so an answer given there still counts. On shutdown an open
question stays recorded and its message open: its answer replays the run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import replace
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext

from elicitkit._core.journal import reusable_answer
from elicitkit._core.kinds import ACTIONS, Answer, RouteName
from elicitkit._engine.desk import ChannelDesk
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import QuestionRecord, Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.routes import offer_task, wants_progress, while_alive
from elicitkit._engine.run import Run
from elicitkit._errors import ElicitationNotSupported
from elicitkit._mcp import ToolContext
from elicitkit._timeouts import LINK_LIFETIME_MAX
from elicitkit._web.tokens import Link
from elicitkit.channels.base import Channel, ChannelRefused, Closing, Prompt, Responder, Via

__all__ = ["ChannelRoute"]

logger = logging.getLogger("elicitkit")


class ChannelRoute:
    """Out of band: the question goes to a channel, and the tool waits for the desk to deliver its answer."""

    name: RouteName = "channel"
    tracked = False

    def __init__(self, policy: Policy, registry: Registry, records: Records, desk: ChannelDesk) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records
        self.desk = desk

    async def put(
        self, ctx: ToolContext, rctx: ServerRequestContext[Any, Any], run: Run | None, question: Question
    ) -> None:
        assert run is not None  # `Asker.choose` refuses a channel question outside a run
        desk = self.desk
        via = self._destination(run, question)
        channel = desk.channel(via)
        # As long as the question itself may wait (its timeout), not the run's expiry between requests.
        expires = min(question.expires_wall(), time.time() + LINK_LIFETIME_MAX)
        posted = await self._posted_before(run, question, via)
        asked_as = posted[0] if posted is not None else question.id
        if posted is not None and posted[1].expires_at < expires:
            # The message's link expires when the question first asked would have: so does the question now.
            expires = posted[1].expires_at
            question.shorten(anyio.current_time() + expires - time.time())
        token = desk.tokens.mint(Link(asked_as, run.principal, "channel", expires))
        record = posted[1] if posted is not None else self._record(run, question, via, expires)
        await self.records.save_question(run, asked_as, record, expires)
        if run.hosted:
            # The run must stay replayable for as long as the person may answer (a restart, a crash).
            ttl = expires - time.time() + self.policy.run_expiry
            if run.task_record is not None:  # a task's run lives as long as the task, at least
                ttl = max(ttl, run.task_record["created"] + run.task_record["ttl"] - time.time())
            await self.records.keep_run(run, ttl)
        self.registry.track(asked_as, question)
        run.hold(question)
        if posted is not None:
            await self._answered_meanwhile(run, question)
        prompt = desk.prompt_of(token, asked_as, record)
        ref = record.ref
        kept = False
        try:
            await question.reached("stored")
            if ref is None:
                # Posted whole even if the question times out or the call is cancelled meanwhile (the channel's
                # HTTP client bounds it): a message whose reference were lost could never be closed.
                with anyio.CancelScope(shield=True):
                    try:
                        ref = await channel.post(prompt)
                    except ChannelRefused as exc:
                        raise ElicitationNotSupported(
                            f"The {via.channel} channel cannot show this question: {exc}"
                        ) from None
                    await self.records.save_question(run, asked_as, replace(record, ref=ref), expires)
            await question.reached("sent")
            offer_task(run)  # a person elsewhere may take long: the client polls a task instead of waiting
            with anyio.move_on_after(question.expires_at - anyio.current_time()):
                await self._wait(rctx, run, question)
        except anyio.get_cancelled_exc_class():
            # The server is shutting down (not the run ending, nor the question expiring): the question stays
            # open, recorded, and its answer replays the run after the restart.
            kept = self.registry.kept_for_restart(run, question, anyio.current_time())
            raise
        finally:
            self.registry.untrack(asked_as, question)
            if not kept and not run.stale:  # a copy another node took over leaves its records to that node
                with anyio.CancelScope(shield=True):
                    with suppress(Exception):  # first: a click while the message is updated finds it closed
                        await self.records.delete_question(asked_as, run)
                    if ref is not None:
                        await self._close(channel, prompt, ref, question, record)

    def _destination(self, run: Run, question: Question) -> Via:
        via = question.via
        assert via is not None
        if not self.desk.own_pages(via.channel):
            return via
        # The web inbox shows a question to one principal, who alone answers unless approvers say otherwise.
        inbox_of = via.target if via.target is not None else run.principal
        if inbox_of is None:
            raise ElicitationNotSupported(
                "The web inbox shows questions to a principal: authenticate the MCP client, or say whose "
                "inbox with web('alice')"
            )
        return replace(via, target=inbox_of, approvers=via.approvers or frozenset({inbox_of}))

    async def _posted_before(self, run: Run, question: Question, via: Via) -> tuple[str, QuestionRecord] | None:
        """The open message an earlier copy of this run posted for this very question (same step, question and
        destination), which a replay answers through instead of posting again. Any other message the earlier copy
        left at this step is withdrawn first: an answer there would answer a question nobody asks any more."""
        found = None
        for question_id, record in (await self._earlier(run, question.seq)).items():
            reusable = record.digest == question.digest and record.via == via.to_json()
            if found is None and reusable:
                found = question_id, record
            else:
                await self._withdraw(question_id, record, run)
        return found

    async def _earlier(self, run: Run, seq: int) -> dict[str, QuestionRecord]:
        """The channel messages an earlier copy of `run` posted at step `seq` (a replayed run only)."""
        if not run.rebuilt:
            return {}
        stored = await self.records.run_questions(run.id, run.principal)
        return {
            question_id: record
            for question_id, record in stored.items()
            if record.route == "channel" and record.seq == seq and record.ref is not None
        }

    async def _withdraw(self, question_id: str, record: QuestionRecord, run: Run) -> None:
        """Close an earlier copy's message as withdrawn."""
        await self._end_earlier(question_id, record, run, Closing("withdrawn"))

    async def _end_earlier(self, question_id: str, record: QuestionRecord, run: Run, closing: Closing) -> None:
        """Close a message an earlier copy of `run` posted (best effort), its record gone first: a late click
        finds it closed."""
        with suppress(Exception):
            await self.records.delete_question(question_id, run)
        channel = self.desk.channels.get(Via.from_json(record.via).channel)
        if channel is None or record.ref is None:
            return
        token = self.desk.tokens.mint(Link(question_id, run.principal, "channel", record.expires_at))
        await _update(channel, self.desk.prompt_of(token, question_id, record), record.ref, closing)

    async def _answered_meanwhile(self, run: Run, question: Question) -> None:
        """An answer to the earlier copy's message may have been journaled after this replay began (and before it
        registered the question, where the desk would have delivered it): take it from the journal."""
        entry = (await self.records.journal(run.id, run.principal)).get(question.seq)
        print("MEANWHILE", question.seq, entry)
        answer = reusable_answer(entry, question.digest)
        if entry is not None and answer is not None:
            question.resolve(answer, Responder.from_json(entry.value))

    async def settle(self, run: Run, question: Question, answer: Answer) -> None:
        """A replay found this question answered in its journal: close the messages the earlier copy posted for it
        (best effort: the answer is taken whatever becomes of a message)."""
        entry = run.journal.get(question.seq)
        responder = None if entry is None else Responder.from_json(entry.value)
        with anyio.CancelScope(shield=True):
            for question_id, record in (await self._earlier(run, question.seq)).items():
                await self._end_earlier(question_id, record, run, _closing(answer, responder, record))

    def _record(self, run: Run, question: Question, via: Via, expires: float) -> QuestionRecord:
        return QuestionRecord(
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

    async def _wait(self, rctx: ServerRequestContext[Any, Any], run: Run, question: Question) -> None:
        """Wait for the answer; a request that waits meanwhile gets progress keepalives, as with native forms
        (until it stops waiting: it returned a task handle, or an `InputRequiredResult` for another question)."""
        if run.task or run.task_wanted or self.policy.keepalive is None or not wants_progress(rctx):
            await question.wait()
            return

        def waiting() -> bool:
            return not run.task_wanted and (not run.hosted or run.rctx is rctx)

        await while_alive(rctx, self.policy.keepalive, question.wait(), waiting)

    async def _close(
        self, channel: Channel, prompt: Prompt, ref: dict[str, Any], question: Question, record: QuestionRecord
    ) -> None:
        answer = question.answer
        if answer is None:
            expired = anyio.current_time() >= question.expires_at
            closing = Closing("expired" if expired else "withdrawn")
        else:
            closing = _closing(answer, question.responder, record)
        await _update(channel, prompt, ref, closing)


async def _update(channel: Channel, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
    """Have the channel update its message with the outcome; a channel that fails is logged, never raised."""
    try:
        with anyio.fail_after(10):
            await channel.close(prompt, ref, closing)
    except Exception:
        logger.warning("Could not update the %s message of question %s", channel.name, prompt.id, exc_info=True)


def _closing(answer: Answer, responder: Responder | None, record: QuestionRecord) -> Closing:
    action = answer.action if answer.action in ACTIONS else "cancel"
    return Closing(action, responder, _summary(record.schema, answer, record.secret))


def _summary(schema: Mapping[str, Any], answer: Answer, secret: tuple[str, ...]) -> str:
    if answer.action == "decline":
        return answer.reason or ""  # the person wrote it for whoever reads the message
    if answer.action != "accept" or not isinstance(answer.content, Mapping):
        return ""
    titles = {name: prop.get("title") or name for name, prop in schema.get("properties", {}).items()}
    parts = []
    for name, value in answer.content.items():
        shown = "••••••" if name in secret else ", ".join(map(str, value)) if isinstance(value, list) else value
        parts.append(f"{titles.get(name, name)}: {shown}")
    return "; ".join(parts)
