"""The engine: where a tool body's question meets the protocol era of its request.

Handshake era (2025-11-25): the body runs inside its request and each question
is an `elicitation/create` request on the session.

2026-07-28: the body runs in its own task, hosted by the server's lifespan.
The request that started it waits for the run's next outcome: the final
result, or an `InputRequiredResult` listing every open question, keyed by
question id, with a `requestState` naming the run and a one-time round nonce.
The retry delivers the answers, resumes the body at the same `await`, and
waits for the next outcome. The body never runs twice. The SDK seals
`requestState` and binds it to principal, tool and arguments; one-time use
and expiry are enforced here.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit.engine.run import Answer, Final, Question, Run, new_id
from elicitkit.errors import (
    ElicitationClientError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
)

__all__ = ["STATE_PREFIX", "Engine"]

logger = logging.getLogger("elicitkit")

STATE_PREFIX = "ek1."
_current_run: ContextVar[Run | None] = ContextVar("elicitkit_run", default=None)


def _state_error(reason: str, message: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data={"reason": reason})


class Engine:
    """Runs, open questions and the routes between them and the wire."""

    def __init__(self, *, run_expiry: float, one_pending_per_session: bool) -> None:
        self.run_expiry = run_expiry
        self.one_pending_per_session = one_pending_per_session
        self.runs: dict[str, Run] = {}
        self._hosts: dict[int, list[anyio.abc.TaskGroup]] = {}
        self._session_questions: dict[object, Question] = {}

    @property
    def pending_questions(self) -> int:
        return sum(len(run.pending) for run in self.runs.values())

    # -- hosting -------------------------------------------------------------

    @asynccontextmanager
    async def host(self, lifespan_state: Any) -> AsyncIterator[None]:
        """Give suspended runs a task group for as long as the server's lifespan lasts."""
        async with anyio.create_task_group() as tg:
            hosts = self._hosts.setdefault(id(lifespan_state), [])
            hosts.append(tg)
            try:
                yield
            finally:
                hosts.remove(tg)
                if not hosts:
                    del self._hosts[id(lifespan_state)]
                tg.cancel_scope.cancel()

    def _host_for(self, rctx: ServerRequestContext[Any, Any]) -> anyio.abc.TaskGroup | None:
        hosts = self._hosts.get(id(rctx.lifespan_context))
        return hosts[-1] if hosts else None

    # -- the tools/call middleware --------------------------------------------

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        rctx = ctx
        if rctx.method != "tools/call" or rctx.request_id is None:
            return await call_next(rctx)
        params = rctx.params or {}
        state = params.get("requestState")
        if isinstance(state, str) and state.startswith(STATE_PREFIX):
            return await self._resume(rctx, params, state)
        run = Run(id=new_id(), tool=str(params.get("name", "")), principal=_mcp.principal(rctx), mrtr=False)
        run.mrtr = _mcp.is_mrtr(rctx.protocol_version)
        host = self._host_for(rctx) if run.mrtr else None
        self.runs[run.id] = run
        if host is None:
            run.inline = True
            token = _current_run.set(run)
            try:
                return await call_next(rctx)
            finally:
                _current_run.reset(token)
                self._drop(run)
        host.start_soon(self._drive, run, rctx, call_next)
        return await self._await_outcome(run)

    async def _drive(self, run: Run, rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> None:
        _current_run.set(run)
        try:
            with run.scope:
                try:
                    run.finish(Final(result=await call_next(rctx)))
                except Exception as exc:
                    run.finish(Final(error=exc))
            if run.final is None:
                logger.info("Run %s of tool %r ended unfinished: no retry came, or it was cancelled", run.id, run.tool)
                return
            # Nobody is waiting (a timeout ended the body between rounds): keep the result for the retry.
            with anyio.move_on_after(self.run_expiry):
                await run.picked.wait()
        finally:
            for question in list(run.pending.values()):
                question.resolve(Answer("cancel"))
            self._drop(run)

    async def _await_outcome(self, run: Run) -> HandlerResult:
        try:
            outcome = await run.next_outcome()
        except anyio.get_cancelled_exc_class():
            # The caller went away (cancelled or disconnected): so does the run.
            run.scope.cancel()
            raise
        if isinstance(outcome, Final):
            run.picked.set()
            if outcome.error is not None:
                raise outcome.error
            result: HandlerResult = outcome.result
            return result
        nonce = run.expect_retry(self.run_expiry)
        return InputRequiredResult(
            input_requests={q.id: _render(q) for q in outcome},
            request_state=f"{STATE_PREFIX}{run.id}.{nonce}",
        )

    async def _resume(
        self, rctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], state: str
    ) -> HandlerResult:
        run_id, _, nonce = state.removeprefix(STATE_PREFIX).partition(".")
        run = self.runs.get(run_id)
        if run is None or run.inline or run.tool != params.get("name") or run.principal != _mcp.principal(rctx):
            raise _state_error(
                "unknown_elicitation",
                "This elicitation is unknown or has expired; call the tool again to start over",
            )
        answers = _parse_responses(params.get("inputResponses"))
        if not run.take_round(nonce):
            raise _state_error(
                "request_state_reused",
                "This requestState was already used; retry with the requestState of the latest result",
            )
        for key, answer in answers.items():
            question = run.pending.get(key)
            if question is None:
                logger.debug("Ignoring an answer for %r: not an open question of run %s", key, run.id)
            else:
                question.resolve(answer)
        return await self._await_outcome(run)

    def _drop(self, run: Run) -> None:
        self.runs.pop(run.id, None)

    # -- asking ----------------------------------------------------------------

    async def ask(self, rctx: ServerRequestContext[Any, Any], question: Question, timeout: float) -> Answer:
        """Put `question` to the person on the route this request allows; wait until `question.expires_at`.

        Raises:
            ElicitationTimeout: no answer in time (the message quotes `timeout`).
            ElicitationNotSupported: this request cannot carry an elicitation.
            ElicitationClientError: the client answered with an error.
            InvalidElicitationContent: the client's reply was not an elicitation result.
        """
        run = _current_run.get()
        question.owner = run
        mrtr = _mcp.is_mrtr(rctx.protocol_version)
        if mrtr and (run is None or run.inline):
            raise ElicitationNotSupported(
                "On MCP 2026-07-28 a question can only be asked from a tool called through the server "
                "that Elicitation(server) is attached to, while the server's lifespan is running"
            )
        if self.one_pending_per_session:
            self._claim_session(rctx, question)
        try:
            # One scope per question: its deadline is the timeout, and cancelling it withdraws the question.
            with anyio.CancelScope(deadline=question.expires_at) as scope:
                if mrtr:
                    assert run is not None
                    run.ask(question)
                    await question.wait()
                else:
                    question.scope = scope
                    if run is not None:
                        run.pending[question.id] = question
                    await self._ask_native(rctx, question)
        finally:
            question.scope = None
            if run is not None:
                run.pending.pop(question.id, None)
            if question.session is not None and self._session_questions.get(question.session) is question:
                del self._session_questions[question.session]
        if question.answer is None:
            raise ElicitationTimeout(timeout)
        return question.answer

    def _claim_session(self, rctx: ServerRequestContext[Any, Any], question: Question) -> None:
        key = _mcp.session_key(rctx)
        if key is None:
            return
        question.session = key
        previous = self._session_questions.get(key)
        self._session_questions[key] = question
        if previous is not None:
            previous.resolve(Answer("cancel"))

    async def _ask_native(self, rctx: ServerRequestContext[Any, Any], question: Question) -> None:
        try:
            result = await rctx.session.elicit_form(
                question.message, question.schema.wire, related_request_id=rctx.request_id
            )
        except MCPError as exc:
            raise ElicitationClientError(exc.error.code, exc.error.message) from None
        except ValidationError:
            raise InvalidElicitationContent(
                [Problem("", "the client's reply is not a valid elicitation result")]
            ) from None
        question.scope = None
        question.resolve(Answer(result.action, result.content))


def _render(question: Question) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(message=question.message, requested_schema=question.schema.wire)
    )


def _parse_responses(raw: Any) -> dict[str, Answer]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _state_error("invalid_input_responses", "inputResponses must be an object keyed by input request")
    answers: dict[str, Answer] = {}
    for key, value in raw.items():
        try:
            result = ElicitResult.model_validate(value)
        except ValidationError:
            raise _state_error(
                "invalid_input_responses", f"inputResponses[{key!r}] is not a valid elicitation result"
            ) from None
        answers[str(key)] = Answer(result.action, result.content)
    return answers
