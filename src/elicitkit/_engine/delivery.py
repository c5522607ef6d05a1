"""How answers reach runs: MRTR retries and `sendElicitationResult` calls, on any node.

Each delivery: (1) checks the request and claims the one-time round in the
store, (2) journals the answers, then (3) resumes the run here when it is
here, (4) forwards to the owner when another live node holds it, or (5) takes
the run over and replays it from its journal.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ElicitResult
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._engine.cluster import decode_outcome
from elicitkit._engine.journal import Entry, RunRecord
from elicitkit._engine.run import Answer, Run
from elicitkit._errors import InvalidElicitationContent
from elicitkit._fallback import error_result, parse_send_args
from elicitkit._schema.compile import compile_schema
from elicitkit._schema.validate import check_content, to_data

if TYPE_CHECKING:
    from elicitkit._engine.engine import Engine

__all__ = ["STATE_PREFIX", "complete", "ended_error", "resume", "send_result", "state_error"]

logger = logging.getLogger("elicitkit")

STATE_PREFIX = "ek1."


def state_error(reason: str, message: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data={"reason": reason})


def ended_error() -> MCPError:
    return state_error(
        "elicitation_ended", "This tool call ended before finishing (expired or cancelled); call the tool again"
    )


def _unknown() -> MCPError:
    return state_error(
        "unknown_elicitation", "This elicitation is unknown or has expired; call the tool again to start over"
    )


def _reused() -> MCPError:
    return state_error(
        "request_state_reused", "This requestState was already used; retry with the requestState of the latest result"
    )


def _parse_responses(raw: Any) -> dict[str, Answer]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise state_error("invalid_input_responses", "inputResponses must be an object keyed by input request")
    answers: dict[str, Answer] = {}
    for key, value in raw.items():
        try:
            result = ElicitResult.model_validate(value)
        except ValidationError:
            raise state_error(
                "invalid_input_responses", f"inputResponses[{key!r}] is not a valid elicitation result"
            ) from None
        answers[str(key)] = Answer(result.action, result.content)
    return answers


async def resume(
    engine: Engine, rctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], state: str, call_next: CallNext
) -> HandlerResult:
    """A 2026-07-28 retry carrying one of our `requestState`s."""
    run_id, _, nonce = state.removeprefix(STATE_PREFIX).partition(".")
    principal = _mcp.principal(rctx)
    answers = _parse_responses(params.get("inputResponses"))
    run = engine.runs.get(run_id)
    if run is not None:
        if run.inline or run.tool != params.get("name") or run.principal != principal:
            raise _unknown()
        if run.scope.cancel_called:
            raise ended_error()
        if not run.is_round(nonce):
            raise _reused()
        # Journal first, claim the round last: a failure in between leaves the retry usable,
        # and journal entries are first-writer-wins, so a repeat cannot change an answer.
        accepted = []
        for key, answer in answers.items():
            question = run.pending.get(key)
            if question is None or question.route != "mrtr":
                logger.debug("Ignoring an answer for %r: not an open question of run %s", key, run.id)
                continue
            if not (question.observable and answer.action == "accept"):
                answer = await _journaled(engine, run_id, principal, question.seq, question.digest, answer)
            accepted.append((question, answer))
        if not await engine.durability.claim_round(run_id, nonce, engine.run_expiry) or not run.take_round(nonce):
            raise _reused()
        for question, answer in accepted:
            if question.observable and answer.action == "accept":
                question.acknowledged = True  # the person is on our page; the page completes the question
            else:
                question.resolve(answer)
        return await engine.await_outcome(run, rctx)
    found = await engine.durability.load_run(run_id, principal)
    if found is None or found[1].tool != params.get("name"):
        raise _unknown()
    questions = await engine.durability.run_questions(run_id, principal)
    delivered: dict[str, list[Any]] = {}
    for key, answer in answers.items():
        record = questions.get(key)
        if record is not None and record.route == "mrtr":
            if not (record.mode == "url" and answer.action == "accept"):
                entry = Entry("answer", record.digest, answer.action, answer.content)
                await engine.durability.record(run_id, principal, record.seq, entry)
            delivered[key] = [answer.action, answer.content]
    if not await engine.durability.claim_round(run_id, nonce, engine.run_expiry):
        raise _reused()
    return await _elsewhere(engine, rctx, call_next, run_id, principal, found, {"op": "answers", "answers": delivered})


async def send_result(
    engine: Engine, rctx: ServerRequestContext[Any, Any], arguments: Any, call_next: CallNext
) -> HandlerResult:
    """The `sendElicitationResult` system tool: answer an open question by elicitId, then wait like a retry."""
    tool = engine.fallback_tool
    args = parse_send_args(arguments, tool)
    if isinstance(args, CallToolResult):
        return args
    principal = _mcp.principal(rctx)
    caller = (principal, _mcp.session_key(rctx))
    not_open = error_result(
        f"{tool}: no open question has elicitId {args.elicit_id!r}. It may have been answered already, "
        "have expired, or belong to another user; call the original tool again if needed."
    )
    question = engine.by_elicit_id.get(args.elicit_id)
    if question is not None:
        run = question.owner
        if run is None or run.scope.cancel_called or question.caller != caller:
            return not_open
        if question.observable and args.action == "accept":
            # The model says the person went to the link: wait (bounded) for our page to complete it,
            # or, when the page already has, hand over what the run did next.
            question.acknowledged = True
            run.resume()
            return await engine.await_outcome(run, rctx)
        if question.answer is not None:
            return not_open
        if args.action == "accept":
            try:
                to_data(question.schema, args.content)
            except InvalidElicitationContent as exc:
                return _still_open(tool, exc)
        answer = await _journaled(
            engine, run.id, principal, question.seq, question.digest, Answer(args.action, args.content)
        )
        if not await engine.durability.claim_round(run.id, args.elicit_id, engine.run_expiry):
            return not_open
        run.resume()
        question.resolve(answer)
        return await engine.await_outcome(run, rctx)
    record = await engine.durability.load_question(args.elicit_id, principal)
    if record is None or record.route != "llm":
        return not_open
    # For a link, "accept" only says the person went to the page; the page itself carries the answer.
    acknowledged = record.mode == "url" and args.action == "accept"
    run = engine.runs.get(record.run_id)
    if acknowledged and run is not None and not run.inline and run.principal == principal:
        # The page finished before the model called back, so the run has moved on: hand over its next outcome.
        if run.scope.cancel_called:
            return not_open
        run.resume()
        return await engine.await_outcome(run, rctx)
    if args.action == "accept" and not acknowledged:
        problems = check_content(compile_schema(record.schema), args.content)
        if problems:
            return _still_open(tool, InvalidElicitationContent(problems))
    found = await engine.durability.load_run(record.run_id, principal)
    if found is None:
        return not_open
    if not acknowledged:
        entry = Entry("answer", record.digest, args.action, args.content)
        await engine.durability.record(record.run_id, principal, record.seq, entry)
    if not await engine.durability.claim_round(record.run_id, args.elicit_id, engine.run_expiry):
        return not_open
    payload = {"op": "answers", "answers": {args.elicit_id: [args.action, args.content]}}
    return await _elsewhere(engine, rctx, call_next, record.run_id, principal, found, payload)


async def _journaled(
    engine: Engine, run_id: str, principal: str | None, seq: int, digest: str, answer: Answer
) -> Answer:
    """Journal `answer` and return the answer the journal holds (the first one written wins)."""
    if await engine.durability.record(run_id, principal, seq, Entry("answer", digest, answer.action, answer.content)):
        return answer
    existing = (await engine.durability.journal(run_id, principal)).get(seq)
    if existing is None or existing.kind != "answer" or existing.digest != digest:
        return answer
    return existing.answer()


async def complete(engine: Engine, question_id: str, principal: str | None, answer: Answer) -> bool:
    """An answer from one of elicitkit's pages or callbacks; False when no open question matches."""
    question = engine.url_questions.get(question_id)
    if question is not None:
        run = question.owner
        if question.answer is not None or question.caller[0] != principal:
            return False
        if run is not None and run.hosted:
            entry = Entry("answer", question.digest, answer.action, answer.content)
            if not question.secret_fields or not engine.durability.plain:
                await engine.durability.record(run.id, run.principal, question.seq, entry)
        question.resolve(answer)
        return True
    record = await engine.durability.load_question(question_id, principal)
    if record is None or record.mode != "url":
        return False
    if record.seq in await engine.store.journal(record.run_id):
        return False  # already answered (the run has moved past this question)
    if not await engine.durability.claim_round(record.run_id, f"page:{question_id}", engine.run_expiry):
        return False
    entry = Entry("answer", record.digest, answer.action, answer.content)
    if not record.secret or not engine.durability.plain:
        await engine.durability.record(record.run_id, principal, record.seq, entry)
    found = await engine.durability.load_run(record.run_id, principal)
    if found is not None and found[0] != engine.node and await engine.store.is_alive(found[0]):
        payload = {"op": "complete", "question": question_id, "answer": [answer.action, answer.content]}
        await engine.cluster.forward(
            found[0], record.run_id, principal, payload, engine.forward_timeout, 5.0, check_every=engine.lease / 3
        )
    return True


def _still_open(tool: str, exc: InvalidElicitationContent) -> CallToolResult:
    return error_result(
        f"{tool}: {exc} The question is still open: ask the user again and call {tool} with corrected content."
    )


async def _elsewhere(
    engine: Engine,
    rctx: ServerRequestContext[Any, Any],
    call_next: CallNext,
    run_id: str,
    principal: str | None,
    found: tuple[str, RunRecord],
    payload: dict[str, Any],
) -> HandlerResult:
    """The run is not held here: its owner resumes it, or this node replays it from the journal."""
    owner, record = found
    for _ in range(3):
        if owner != engine.node:  # forwarding finds out fast when nobody listens, then checks the heartbeat
            outcome = await engine.cluster.forward(
                owner,
                run_id,
                principal,
                payload,
                engine.forward_timeout,
                engine.run_expiry,
                check_every=engine.lease / 3,
            )
            if outcome is not None:
                return decode_outcome(outcome)
        if owner == engine.node or await engine.store.claim_run(run_id, owner, engine.node):
            return await replay(engine, rctx, call_next, run_id, principal, record)
        found_again = await engine.durability.load_run(run_id, principal)
        if found_again is None:
            raise _unknown()
        owner, record = found_again
    raise MCPError(code=INVALID_PARAMS, message="This elicitation is being taken over by another node; retry shortly")


async def replay(
    engine: Engine,
    rctx: ServerRequestContext[Any, Any],
    call_next: CallNext,
    run_id: str,
    principal: str | None,
    record: RunRecord,
) -> HandlerResult:
    """Run the tool body again; every journaled `elicit` and `step` returns at once."""
    host = engine.host_for(rctx)
    if host is None:
        raise ended_error()
    run = Run(id=run_id, tool=record.tool, principal=principal, mrtr=record.mrtr, hosted=True)
    run.journal = await engine.durability.journal(run_id, principal)
    run.arguments = record.arguments
    engine.runs[run_id] = run
    logger.info("Replaying run %s of tool %r from %d journal entries", run_id, record.tool, len(run.journal))
    params = {"name": record.tool, "arguments": record.arguments}
    if rctx.params and "_meta" in rctx.params:
        params["_meta"] = rctx.params["_meta"]
    body_ctx = replace(rctx, params=params)
    run.rctx = rctx
    host.start_soon(engine.drive, run, body_ctx, call_next)
    return await engine.await_outcome(run, rctx)
