"""The inbox: the one place where an answer arrives, from wherever it comes.

An answer comes with a 2026-07-28 retry (`inputResponses`), a call of the
fallback tool (the model relays the person), one of elicitkit's pages or
callbacks, or from another node that received it. Each time the inbox:

1. finds the question — in memory when this process holds the run, else from
   its sealed record in the store;
2. validates it (fallback answers; pages validate before they post);
3. journals it (first writer wins; a URL accept only acknowledges: the page
   carries the real answer) and claims the one-time round;
4. delivers it: to the run here, to the owner node, or by taking the run
   over and replaying it from its journal.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CallToolResult, ElicitResult
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._core.codec import decode_state
from elicitkit._core.journal import Entry
from elicitkit._core.kinds import Answer, only_acknowledges
from elicitkit._engine import refusals
from elicitkit._engine.cluster import MISSING, Cluster, Missing, decode_outcome, encode_outcome
from elicitkit._engine.host import RunHost
from elicitkit._engine.journal import Durability, QuestionRecord, RunRecord
from elicitkit._engine.policy import Policy
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Question, Run
from elicitkit._errors import InvalidElicitationContent
from elicitkit._fallback import error_result, parse_send_args
from elicitkit._schema import FormSchema, compile_schema, problems_in
from elicitkit.stores.base import Store

__all__ = ["Inbox", "PageQuestion"]

logger = logging.getLogger("elicitkit")


@dataclass(frozen=True, slots=True)
class PageQuestion:
    """What one of elicitkit's pages needs to show a question: its text and its form."""

    message: str
    schema: FormSchema


class Inbox:
    def __init__(
        self,
        policy: Policy,
        registry: Registry,
        durability: Durability,
        store: Store,
        cluster: Cluster,
        host: RunHost,
    ) -> None:
        self.policy = policy
        self.registry = registry
        self.durability = durability
        self.store = store
        self.cluster = cluster
        self.host = host

    # -- from the MCP client ---------------------------------------------------------

    async def retry(
        self, rctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], call_next: CallNext
    ) -> HandlerResult:
        """A 2026-07-28 retry carrying one of our `requestState`s."""
        decoded = decode_state(str(params.get("requestState")))
        if decoded is None:
            raise refusals.unknown()
        run_id, nonce = decoded
        principal = _mcp.principal(rctx)
        answers = _parse_responses(params.get("inputResponses"))
        run = self.registry.runs.get(run_id)
        if run is not None:
            self.registry.unpark(run)  # not to hibernate while its answers are journaled
            if not run.hosted or run.tool != params.get("name") or run.principal != principal:
                raise refusals.unknown()
            if run.ending:
                raise refusals.ended()
            if not run.is_round(nonce):
                raise refusals.reused()
            accepted = []
            for key, answer in answers.items():
                question = run.pending.get(key)
                if question is None or question.route != "mrtr":
                    logger.debug("Ignoring an answer for %r: not an open question of run %s", key, run.id)
                    continue
                accepted.append((question, answer, question.judge(answer)))
            # Journal the answers and spend the round together (journal entries are first-writer-wins, so a
            # repeat cannot change an answer); the answered questions' records go with them where the store can.
            answering = [(q, a) for q, a, verdict in accepted if verdict.answers]
            entries = {q.seq: _entry(q.digest, a) for q, a in answering}
            answered = [q.id for q, _ in answering]
            written = await self._take(run_id, principal, nonce, entries, answered)
            if written is None or not run.take_round(nonce):
                raise refusals.reused()
            for question, answer, verdict in accepted:
                if verdict.answers:
                    answer = await self._journaled(run, question, answer, written)
                question.take(answer, verdict)
            return await self.host.await_outcome(run, rctx)
        found = await self.durability.load_run(run_id, principal)
        if found is None or found[1].tool != params.get("name"):
            raise refusals.unknown()
        questions = await self.durability.run_questions(run_id, principal)
        delivered: dict[str, list[Any]] = {}
        journaled: dict[int, Entry] = {}
        closing = []
        for key, answer in answers.items():
            record = questions.get(key)
            if record is not None and record.route == "mrtr":
                entry = _record_entry(record, answer)
                if entry is not None:
                    journaled[record.seq] = entry
                    closing.append(key)
                delivered[key] = [answer.action, answer.content]
        if await self._take(run_id, principal, nonce, journaled, closing) is None:
            raise refusals.reused()
        payload = {"op": "answers", "answers": delivered, "closed": self._closed(closing)}
        return await self._elsewhere(rctx, call_next, run_id, principal, found, payload)

    async def fallback_answer(
        self, rctx: ServerRequestContext[Any, Any], arguments: Any, call_next: CallNext
    ) -> HandlerResult:
        """The fallback system tool: answer an open question by elicitId, then wait like a retry."""
        tool = self.policy.fallback_tool
        args = parse_send_args(arguments, tool)
        if isinstance(args, CallToolResult):
            return args
        principal = _mcp.principal(rctx)
        caller = (principal, _mcp.session_key(rctx))
        answer = Answer(args.action, args.content)
        not_open = error_result(
            f"{tool}: no open question has elicitId {args.elicit_id!r}. It may have been answered already, "
            "have expired, or belong to another user; call the original tool again if needed."
        )
        question = self.registry.by_elicit_id.get(args.elicit_id)
        if question is not None:
            run = question.owner
            if run is None or run.ending or question.caller != caller:
                return not_open
            self.registry.unpark(run)
            if only_acknowledges(question.observable, answer.action):
                # The model says the person went to the link: wait (bounded) for our page to complete it,
                # or, when the page already has, hand over what the run did next.
                question.acknowledge()
                run.resume()
                return await self.host.await_outcome(run, rctx)
            if question.answer is not None:
                return not_open
            problems = question.judge(answer).problems
            if problems is not None:
                if not question.refuse(problems):
                    return _still_open(tool, problems)
                # Out of attempts: the body goes on, and its `elicit` raises InvalidElicitationContent.
                run.resume()
                return await self.host.await_outcome(run, rctx)
            entries = {question.seq: _entry(question.digest, answer)}
            written = await self._take(run.id, principal, args.elicit_id, entries, [question.id])
            if written is None:
                return not_open
            answer = await self._journaled(run, question, answer, written)
            run.resume()
            question.resolve(answer)
            return await self.host.await_outcome(run, rctx)
        record = await self.durability.load_question(args.elicit_id, principal)
        if record is None or record.route != "llm":
            return not_open
        acknowledges = only_acknowledges(record.observable, answer.action)
        run = self.registry.hosted_run(record.run_id)
        if acknowledges and run is not None and run.principal == principal:
            # The page finished before the model called back, so the run has moved on: hand over its next outcome.
            if run.ending:
                return not_open
            run.resume()
            return await self.host.await_outcome(run, rctx)
        if not acknowledges:
            problems = problems_in(compile_schema(record.schema), answer.action, answer.content)
            if problems is not None:
                return _still_open(tool, problems)
        found = await self.durability.load_run(record.run_id, principal)
        if found is None:
            return not_open
        entry = _record_entry(record, answer)
        entries = {} if entry is None else {record.seq: entry}
        answered = [] if entry is None else [args.elicit_id]
        if await self._take(record.run_id, principal, args.elicit_id, entries, answered) is None:
            return not_open
        payload = {
            "op": "answers",
            "answers": {args.elicit_id: [answer.action, answer.content]},
            "closed": self._closed(answered),
        }
        return await self._elsewhere(rctx, call_next, record.run_id, principal, found, payload)

    # -- from elicitkit's pages ------------------------------------------------------

    async def page_question(self, question_id: str, principal: str | None) -> PageQuestion | None:
        """The open link question behind a page, or None when it was answered, has expired or is someone else's."""
        question = self.registry.url_questions.get(question_id)
        if question is not None:
            if question.answer is not None or question.caller[0] != principal:
                return None
            return PageQuestion(question.message, question.schema)
        record = await self.durability.load_question(question_id, principal)
        if record is None or record.mode != "url" or record.seq in await self.store.journal(record.run_id):
            return None
        return PageQuestion(record.message, replace(compile_schema(record.schema), secret_fields=record.secret))

    async def page_answer(self, question_id: str, principal: str | None, answer: Answer) -> bool:
        """An answer from one of elicitkit's pages or callbacks; False when no open question matches."""
        question = self.registry.url_questions.get(question_id)
        if question is not None:
            run = question.owner
            if question.answer is not None or question.caller[0] != principal:
                return False
            if run is not None and run.hosted and self.durability.keeps(question.secret_fields):
                await self.durability.record(run.id, run.principal, question.seq, _entry(question.digest, answer))
            question.resolve(answer)
            return True
        record = await self.durability.load_question(question_id, principal)
        if record is None or record.mode != "url":
            return False
        if record.seq in await self.store.journal(record.run_id):
            return False  # already answered (the run has moved past this question)
        if not await self._claim(record.run_id, f"page:{question_id}"):
            return False
        if self.durability.keeps(record.secret):
            await self.durability.record(record.run_id, principal, record.seq, _entry(record.digest, answer))
        found = await self.durability.load_run(record.run_id, principal)
        if found is not None and found[0] != self.policy.node and await self.cluster.alive(found[0]):
            payload = {"op": "complete", "question": question_id, "answer": [answer.action, answer.content]}
            await self.cluster.forward(
                found[0],
                record.run_id,
                principal,
                payload,
                self.policy.forward_timeout,
                5.0,
                check_every=self.policy.lease / 3,
            )
        return True

    async def use_link(self, question_id: str, expires_at: float) -> bool:
        """Spend a page link (once, across every node); False when it was already used."""
        return await self.store.use_once(f"link:{question_id}", expires_at)

    # -- from other nodes ------------------------------------------------------------

    def principal_of(self, run_id: str) -> str | Missing | None:
        run = self.registry.hosted_run(run_id)
        return MISSING if run is None else run.principal

    async def forwarded(self, run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Answers another node received for a run held here; the run's next outcome, or None when not held."""
        run = self.registry.hosted_run(run_id)
        if run is None or run.ending or payload.get("op") not in ("answers", "complete"):
            return None
        self.registry.unpark(run)
        if payload["op"] == "complete":
            question = run.pending.get(str(payload.get("question")))
            if question is not None:
                action, content = payload["answer"]
                question.resolve(Answer(action, content))
            return encode_outcome(None)
        closed = set(payload.get("closed", ()))
        for key, (action, content) in payload.get("answers", {}).items():
            question = run.pending.get(key)
            if question is not None:
                question.record_closed = key in closed  # the receiving node forgot its record already
                question.take(Answer(action, content))
        run.round.close()
        run.resume()
        try:
            return encode_outcome(await self.host.await_outcome(run, None))
        except Exception as exc:
            return encode_outcome(error=exc)

    # -- the steps -------------------------------------------------------------------

    async def _claim(self, run_id: str, nonce: str) -> bool:
        return await self.durability.claim_round(run_id, nonce, self.policy.run_expiry)

    async def _take(
        self, run_id: str, principal: str | None, claim: str, entries: dict[int, Entry], answered: list[str]
    ) -> set[int] | None:
        return await self.durability.take_round(run_id, principal, claim, self.policy.run_expiry, entries, answered)

    async def _journaled(self, run: Run, question: Question, answer: Answer, written: set[int]) -> Answer:
        """The answer the journal holds for `question` (the first one written wins), once a round was taken; the
        question's record is marked closed when the round took it away."""
        question.record_closed = self.durability.closes_answered
        if question.seq in written:
            return answer
        existing = (await self.durability.journal(run.id, run.principal)).get(question.seq)
        if existing is None or existing.kind != "answer" or existing.digest != question.digest:
            return answer
        return existing.answer()

    def _closed(self, answered: list[str]) -> list[str]:
        """The answered questions whose records the round took away (so the owner does not delete them again)."""
        return answered if self.durability.closes_answered else []

    async def _elsewhere(
        self,
        rctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
        run_id: str,
        principal: str | None,
        found: tuple[str, RunRecord],
        payload: dict[str, Any],
    ) -> HandlerResult:
        """The run is not held here: its owner resumes it, or this node replays it from the journal."""
        owner, record = found
        node = self.policy.node
        for _ in range(3):
            if owner != node:  # forwarding finds out fast when nobody listens, then checks the heartbeat
                outcome = await self.cluster.forward(
                    owner,
                    run_id,
                    principal,
                    payload,
                    self.policy.forward_timeout,
                    self.policy.run_expiry,
                    check_every=self.policy.lease / 3,
                )
                if outcome is not None:
                    return decode_outcome(outcome)
            if owner == node or await self.store.claim_run(run_id, owner, node):
                return await self.host.replay(rctx, call_next, run_id, principal, record)
            found_again = await self.durability.load_run(run_id, principal)
            if found_again is None:
                raise refusals.unknown()
            owner, record = found_again
        raise refusals.taking_over()


def _entry(digest: str, answer: Answer) -> Entry:
    return Entry.of_answer(digest, answer)


def _record_entry(record: QuestionRecord, answer: Answer) -> Entry | None:
    """The journal entry for an answer to a question this process does not hold, when it answers it.

    A link's accept only acknowledges, and an answer that breaks the schema is never journaled; both
    still travel to the owner, which applies them to the question (and counts the attempt).
    """
    if only_acknowledges(record.observable, answer.action):
        return None
    if problems_in(compile_schema(record.schema), answer.action, answer.content) is not None:
        return None
    return _entry(record.digest, answer)


def _still_open(tool: str, exc: InvalidElicitationContent) -> CallToolResult:
    return error_result(
        f"{tool}: {exc} The question is still open: ask the user again and call {tool} with corrected content."
    )


def _parse_responses(raw: Any) -> dict[str, Answer]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise refusals.invalid_responses("inputResponses must be an object keyed by input request")
    answers: dict[str, Answer] = {}
    for key, value in raw.items():
        try:
            result = ElicitResult.model_validate(value)
        except ValidationError:
            raise refusals.invalid_responses(f"inputResponses[{key!r}] is not a valid elicitation result") from None
        answers[str(key)] = Answer(result.action, result.content)
    return answers
