"""The engine: runs, and the requests that start, resume and finish them.

When a question may need a route that outlives a request (2026-07-28's
`InputRequiredResult`, or the fallback route through the model), the tool
body runs in its own task, hosted by the server's lifespan. Each request —
the first call, every MRTR retry, every `sendElicitationResult` call — waits
for the run's *next outcome*: the final result, or the open questions to hand
back. The body never runs twice. Otherwise (a 2025-11-25 client that shows
forms) the body runs inside its request and asks on the session.

The SDK seals `requestState` and binds it to principal, tool and arguments;
one-time rounds, expiry and the elicitId checks are enforced here.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from typing import Any, Literal

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListToolsResult,
)
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit.clients import ClientOverride
from elicitkit.engine import routes
from elicitkit.engine.run import Answer, Final, Question, Run, new_id
from elicitkit.errors import InvalidElicitationContent
from elicitkit.fallback import (
    FallbackHandler,
    error_result,
    parse_send_args,
    render_pending,
    wall_clock,
    widen_output_schema,
)
from elicitkit.validation import to_data

__all__ = ["STATE_PREFIX", "Engine", "Fallback"]

logger = logging.getLogger("elicitkit")

STATE_PREFIX = "ek1."
Fallback = Literal["llm", "error"] | FallbackHandler
_current_run: ContextVar[Run | None] = ContextVar("elicitkit_run", default=None)


def _state_error(reason: str, message: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message, data={"reason": reason})


class Engine:
    """Runs, open questions and the requests attached to them."""

    def __init__(
        self,
        *,
        run_expiry: float,
        one_pending_per_session: bool,
        fallback: Fallback,
        fallback_tool: str,
        client_overrides: list[ClientOverride],
        keepalive: float | None,
    ) -> None:
        self.run_expiry = run_expiry
        self.one_pending_per_session = one_pending_per_session
        self.fallback = fallback
        self.fallback_tool = fallback_tool
        self.client_overrides = client_overrides
        self.keepalive = keepalive
        self.runs: dict[str, Run] = {}
        self.by_elicit_id: dict[str, Question] = {}
        self._session_questions: dict[object, Question] = {}
        # The lifespan's task group, found through the context its requests inherit (stdio,
        # in-memory clients, HTTP sessions), or else by the identity of the lifespan state.
        self._host_var: ContextVar[anyio.abc.TaskGroup | None] = ContextVar(f"elicitkit_host_{id(self)}", default=None)
        self._hosts: dict[int, list[anyio.abc.TaskGroup]] = {}

    @property
    def pending_questions(self) -> int:
        return sum(len(run.pending) for run in self.runs.values())

    # -- hosting ---------------------------------------------------------------

    @asynccontextmanager
    async def host(self, lifespan_state: Any) -> AsyncIterator[None]:
        """Give suspended runs a task group for as long as the server's lifespan lasts."""
        async with anyio.create_task_group() as tg:
            hosts = self._hosts.setdefault(id(lifespan_state), [])
            hosts.append(tg)
            token = self._host_var.set(tg)
            try:
                yield
            finally:
                # A lifespan may be exited from another context than it was entered in.
                with suppress(ValueError):
                    self._host_var.reset(token)
                hosts.remove(tg)
                if not hosts:
                    del self._hosts[id(lifespan_state)]
                tg.cancel_scope.cancel()

    def _host_for(self, rctx: ServerRequestContext[Any, Any]) -> anyio.abc.TaskGroup | None:
        host = self._host_var.get()
        if host is not None:
            return host
        hosts = self._hosts.get(id(rctx.lifespan_context))
        return hosts[-1] if hosts else None

    def _needs_host(self, rctx: ServerRequestContext[Any, Any]) -> bool:
        if _mcp.is_mrtr(rctx.protocol_version):
            return True
        return self.fallback == "llm" and not routes.native_possible(self, rctx)

    # -- the middleware ----------------------------------------------------------

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/list":
            return self._shape_tools(ctx, await call_next(ctx))
        if ctx.method != "tools/call" or ctx.request_id is None:
            return await call_next(ctx)
        params = ctx.params or {}
        if self.fallback == "llm" and params.get("name") == self.fallback_tool:
            return await self._send_result(ctx, params.get("arguments"))
        state = params.get("requestState")
        if isinstance(state, str) and state.startswith(STATE_PREFIX):
            return await self._resume(ctx, params, state)
        run = Run(id=new_id(), tool=str(params.get("name", "")), principal=_mcp.principal(ctx), mrtr=False)
        run.mrtr = _mcp.is_mrtr(ctx.protocol_version)
        host = self._host_for(ctx) if self._needs_host(ctx) else None
        self.runs[run.id] = run
        if host is None:
            run.inline = True
            token = _current_run.set(run)
            try:
                return await call_next(ctx)
            finally:
                _current_run.reset(token)
                self.runs.pop(run.id, None)
        run.rctx = ctx
        host.start_soon(self._drive, run, ctx, call_next)
        return await self._await_outcome(run, ctx)

    def _shape_tools(self, ctx: ServerRequestContext[Any, Any], result: HandlerResult) -> HandlerResult:
        """Show the fallback tool only to clients that need it, and widen output schemas for them."""
        if isinstance(result, ListToolsResult):
            wire: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        elif isinstance(result, dict) and isinstance(result.get("tools"), list):
            wire = result
        else:
            return result
        tools: list[dict[str, Any]] = wire["tools"]
        if self.fallback != "llm" or routes.native_possible(self, ctx):
            shaped = [t for t in tools if t.get("name") != self.fallback_tool]
        else:
            shaped = [
                {**t, "outputSchema": widen_output_schema(t["outputSchema"])} if t.get("outputSchema") else t
                for t in tools
            ]
        return {**wire, "tools": shaped}

    async def _drive(self, run: Run, rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> None:
        _current_run.set(run)
        try:
            with run.scope:
                try:
                    run.finish(Final(result=await call_next(rctx)))
                except Exception as exc:
                    run.finish(Final(error=exc))
            if run.final is None:
                logger.info(
                    "Run %s of tool %r ended unfinished: no retry came in time, or it was cancelled", run.id, run.tool
                )
                return
            # Nobody is waiting (a timeout ended the body between rounds): keep the result for the next request.
            with anyio.move_on_after(self.run_expiry):
                await run.picked.wait()
        finally:
            if run.final is None:
                # Wake any request still waiting for this run (one that raced its expiry or shutdown).
                run.finish(Final(error=_ended_error()))
            for question in list(run.pending.values()):
                question.resolve(Answer("cancel"))
            self.runs.pop(run.id, None)

    async def _await_outcome(self, run: Run, rctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        run.rctx = rctx
        try:
            outcome = await run.next_outcome()
        except anyio.get_cancelled_exc_class():
            # The caller went away (cancelled or disconnected): so does the run.
            run.scope.cancel()
            raise
        finally:
            run.rctx = None
        if isinstance(outcome, Final):
            run.picked.set()
            if outcome.error is not None:
                raise outcome.error
            result: HandlerResult = outcome.result
            return result
        by_model = [q for q in outcome if q.route == "llm"]
        if by_model:
            # A model handles one question at a time; the others follow in later results.
            question = by_model[0]
            run.suspend(self.run_expiry)
            expires = wall_clock(question.expires_at, anyio.current_time())
            return render_pending(question.id, question.message, question.schema.wire, expires, self.fallback_tool)
        nonce = run.expect_retry(self.run_expiry)
        return InputRequiredResult(
            input_requests={
                q.id: ElicitRequest(params=ElicitRequestFormParams(message=q.message, requested_schema=q.schema.wire))
                for q in outcome
            },
            request_state=f"{STATE_PREFIX}{run.id}.{nonce}",
        )

    async def _resume(
        self, rctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], state: str
    ) -> HandlerResult:
        run_id, _, nonce = state.removeprefix(STATE_PREFIX).partition(".")
        run = self.runs.get(run_id)
        if run is None or run.inline or run.tool != params.get("name") or run.principal != _mcp.principal(rctx):
            raise _state_error(
                "unknown_elicitation", "This elicitation is unknown or has expired; call the tool again to start over"
            )
        if run.scope.cancel_called:
            raise _ended_error()
        answers = _parse_responses(params.get("inputResponses"))
        if not run.take_round(nonce):
            raise _state_error(
                "request_state_reused",
                "This requestState was already used; retry with the requestState of the latest result",
            )
        for key, answer in answers.items():
            question = run.pending.get(key)
            if question is None or question.route != "mrtr":
                logger.debug("Ignoring an answer for %r: not an open question of run %s", key, run.id)
            else:
                question.resolve(answer)
        return await self._await_outcome(run, rctx)

    async def _send_result(self, rctx: ServerRequestContext[Any, Any], arguments: Any) -> HandlerResult:
        """The `sendElicitationResult` system tool: answer an open question by elicitId, then wait like a retry."""
        tool = self.fallback_tool
        args = parse_send_args(arguments, tool)
        if isinstance(args, CallToolResult):
            return args
        question = self.by_elicit_id.get(args.elicit_id)
        run = question.owner if question is not None else None
        if (
            question is None
            or run is None
            or question.answer is not None
            or run.scope.cancel_called
            or question.caller != (_mcp.principal(rctx), _mcp.session_key(rctx))
        ):
            return error_result(
                f"{tool}: no open question has elicitId {args.elicit_id!r}. It may have been answered already, "
                "have expired, or belong to another user; call the original tool again if needed."
            )
        if anyio.current_time() >= question.expires_at:
            return error_result(f"{tool}: the question {args.elicit_id!r} has expired; call the original tool again.")
        if args.action == "accept":
            try:
                to_data(question.schema, args.content)
            except InvalidElicitationContent as exc:
                return error_result(
                    f"{tool}: {exc} The question is still open: ask the user again and call {tool} "
                    "with corrected content."
                )
        run.resume()
        question.resolve(Answer(args.action, args.content))
        return await self._await_outcome(run, rctx)

    # -- asking ------------------------------------------------------------------

    async def ask(self, ctx: Context[Any, Any], question: Question, timeout: float) -> Answer:
        return await routes.ask(self, ctx, _current_run.get(), question, timeout)

    def claim_session(self, rctx: ServerRequestContext[Any, Any], question: Question) -> None:
        key = _mcp.session_key(rctx)
        if key is None:
            return
        question.session = key
        previous = self._session_questions.get(key)
        self._session_questions[key] = question
        if previous is not None:
            previous.resolve(Answer("cancel"))

    def forget(self, question: Question) -> None:
        if question.owner is not None:
            question.owner.pending.pop(question.id, None)
        self.by_elicit_id.pop(question.id, None)
        if question.session is not None and self._session_questions.get(question.session) is question:
            del self._session_questions[question.session]


def _ended_error() -> MCPError:
    return _state_error(
        "elicitation_ended", "This tool call ended before finishing (expired or cancelled); call the tool again"
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
