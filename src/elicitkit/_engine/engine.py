"""The engine: runs, and the requests that start, resume and finish them.

When a question may need a route that outlives a request (2026-07-28's
`InputRequiredResult`, or the fallback route through the model), the tool
body runs in its own task, hosted by the server's lifespan, and is journaled.
Each request — the first call, every MRTR retry, every `sendElicitationResult`
call, on this node or forwarded from another — waits for the run's *next
outcome*: the final result, or the open questions to hand back. The body
never runs twice; only a node that takes over a dead owner's run replays it,
and replay returns every journaled answer and step at once.

Otherwise (a 2025-11-25 client that shows forms) the body runs inside its
request, asks on the session, and nothing is stored.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from typing import Any, Literal

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    ElicitRequest,
    InputRequiredResult,
)

from elicitkit import _mcp
from elicitkit._clients import ClientOverride
from elicitkit._engine import delivery, routes
from elicitkit._engine.cluster import MISSING, Cluster, Missing, encode_outcome
from elicitkit._engine.journal import Durability, Entry, RunRecord, SealerLike
from elicitkit._engine.run import Answer, Final, Question, Run, call, new_id
from elicitkit._errors import StoreUnavailable, TamperedRecord
from elicitkit._fallback import FallbackHandler, render_pending, shape_tools
from elicitkit.stores.base import Broker, Store
from elicitkit.stores.guarded import guarded

__all__ = ["Engine", "Fallback"]

logger = logging.getLogger("elicitkit")

Fallback = Literal["llm", "error"] | FallbackHandler
_current_run: ContextVar[Run | None] = ContextVar("elicitkit_run", default=None)
_SWEEP_EVERY = 60.0


class Engine:
    """Runs, open questions, their durable records, and the requests attached to them."""

    def __init__(
        self,
        *,
        run_expiry: float,
        one_pending_per_session: bool,
        fallback: Fallback,
        fallback_tool: str,
        client_overrides: list[ClientOverride],
        keepalive: float | None,
        store: Store,
        broker: Broker,
        sealer: SealerLike,
        node: str,
        shared: bool,
        forward_timeout: float,
        lease: float,
        url_wait: float = 10.0,
    ) -> None:
        self.run_expiry = run_expiry
        self.one_pending_per_session = one_pending_per_session
        self.fallback = fallback
        self.fallback_tool = fallback_tool
        self.client_overrides = client_overrides
        self.keepalive = keepalive
        self.store = guarded(store)
        self.node = node
        self.shared = shared
        self.forward_timeout = forward_timeout
        self.lease = lease
        self.url_wait = url_wait
        self.url_questions: dict[str, Question] = {}
        """Open URL questions that elicitkit's pages or callbacks complete, by question id."""
        self.durability = Durability(self.store, sealer, node)
        self.cluster = Cluster(self.store, broker, sealer, node)
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
        """Give suspended runs a task group, and this node a presence, while the server's lifespan lasts."""
        async with anyio.create_task_group() as tg:
            if self.shared:
                await tg.start(self.cluster.serve, self._principal_of, self._handle_forwarded)
                tg.start_soon(self.cluster.heartbeat, self.lease)
            tg.start_soon(self._sweep)
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

    def host_for(self, rctx: ServerRequestContext[Any, Any]) -> anyio.abc.TaskGroup | None:
        host = self._host_var.get()
        if host is not None:
            return host
        hosts = self._hosts.get(id(rctx.lifespan_context))
        return hosts[-1] if hosts else None

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(_SWEEP_EVERY)
            try:
                await self.store.sweep()
            except Exception:
                logger.exception("Sweeping expired elicitation state failed; will retry")

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
        try:
            if self.fallback == "llm" and params.get("name") == self.fallback_tool:
                return await delivery.send_result(self, ctx, params.get("arguments"), call_next)
            state = params.get("requestState")
            if isinstance(state, str) and state.startswith(delivery.STATE_PREFIX):
                return await delivery.resume(self, ctx, params, state, call_next)
            return await self._start(ctx, params, call_next)
        except StoreUnavailable as exc:
            logger.warning("tools/call %r refused: %s", params.get("name"), exc)
            raise MCPError(code=INTERNAL_ERROR, message=str(exc), data={"reason": "store_unavailable"}) from exc
        except TamperedRecord as exc:
            logger.error("tools/call %r refused: a stored record failed authentication", params.get("name"))
            raise MCPError(
                code=INTERNAL_ERROR,
                message="The stored state of this elicitation failed authentication; call the tool again",
                data={"reason": "tampered_state"},
            ) from exc

    async def _start(self, ctx: ServerRequestContext[Any, Any], params: Any, call_next: CallNext) -> HandlerResult:
        run = Run(id=new_id(), tool=str(params.get("name", "")), principal=_mcp.principal(ctx), mrtr=False)
        run.mrtr = _mcp.is_mrtr(ctx.protocol_version)
        host = self.host_for(ctx) if self._needs_host(ctx) else None
        self.runs[run.id] = run
        if host is None:
            run.inline = True
            token = _current_run.set(run)
            try:
                return await call_next(ctx)
            finally:
                _current_run.reset(token)
                self.runs.pop(run.id, None)
        run.hosted = True
        run.arguments = dict(params.get("arguments") or {})
        await self.store_run(run)
        run.rctx = ctx
        host.start_soon(self.drive, run, ctx, call_next)
        return await self.await_outcome(run, ctx)

    def _shape_tools(self, ctx: ServerRequestContext[Any, Any], result: HandlerResult) -> HandlerResult:
        """Show the fallback tool only to clients that need it, and widen output schemas for them."""
        needed = self.fallback == "llm" and not routes.native_possible(self, ctx)
        return shape_tools(result, self.fallback_tool, needed=needed)

    async def drive(self, run: Run, rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> None:
        """Run a hosted body to its end; keep the run's records only while it can still be resumed."""
        _current_run.set(run)
        finished = False  # stays False only when the host is shut down: then the records stay for a restart
        try:
            with run.scope:
                try:
                    run.finish(Final(result=await call_next(rctx)))
                except Exception as exc:
                    run.finish(Final(error=exc))
            if run.final is None:
                logger.info(
                    "Run %s of tool %r ended unfinished: no answer came in time, or it was cancelled", run.id, run.tool
                )
            else:
                # Nobody may be waiting (a timeout ended the body between rounds): keep the result for the next request.
                with anyio.move_on_after(self.run_expiry):
                    await run.wait_picked()
            finished = True
        finally:
            if run.final is None:
                # Wake any request still waiting for this run (one that raced its expiry or shutdown).
                run.finish(Final(error=delivery.ended_error()))
            for question in list(run.pending.values()):
                question.resolve(Answer("cancel"))
            self.runs.pop(run.id, None)
            if finished and not run.stale:
                # Shutdown is the other way out: then the records stay, and a restart replays the run.
                with anyio.CancelScope(shield=True):
                    try:
                        found = await self.store.get_run(run.id)
                        if found is None or found[0] == self.node:  # never delete a run another node took over
                            await self.store.delete_run(run.id)
                    except StoreUnavailable:
                        logger.warning("Could not delete finished run %s; it expires on its own", run.id)

    async def await_outcome(self, run: Run, rctx: ServerRequestContext[Any, Any] | None) -> HandlerResult:
        """Wait for the run's next outcome on behalf of a request (None: a request forwarded from another node)."""
        run.rctx = rctx
        outcome: Final | list[Question] | None = None
        try:
            # While the person is on one of our pages, a request waits a bounded time, then comes back later.
            with anyio.move_on_after(self.url_wait if run.awaiting_pages else math.inf):
                outcome = await run.next_outcome()
        except anyio.get_cancelled_exc_class():
            # The caller went away (cancelled or disconnected): so does the run.
            run.scope.cancel()
            raise
        finally:
            run.rctx = None
        if outcome is None:
            return self._still_waiting(run)
        if isinstance(outcome, Final):
            run.mark_picked()
            if outcome.error is not None:
                raise outcome.error
            result: HandlerResult = outcome.result
            return result
        # The run waits for another round: keep its records alive for as long as it may.
        await self.store_run(run)
        by_model = [q for q in outcome if q.route == "llm"]
        if by_model:
            # A model handles one question at a time; the others follow in later results.
            return self._pending_for_model(run, by_model[0])
        nonce = run.expect_retry(self.run_expiry)
        return InputRequiredResult(
            input_requests={q.id: ElicitRequest(params=q.wire_params()) for q in outcome},
            request_state=f"{delivery.STATE_PREFIX}{run.id}.{nonce}",
        )

    def _pending_for_model(self, run: Run, question: Question, note: str = "") -> HandlerResult:
        run.suspend(self.run_expiry)
        expires = question.expires_wall()
        message = question.message
        if question.mode == "url":
            message = f"{message}\n\nThe user must open this link themselves: {question.url}{note}"
        schema = question.schema.wire if question.mode == "form" else {"type": "object", "properties": {}}
        return render_pending(question.id, message, schema, expires, self.fallback_tool)

    def _still_waiting(self, run: Run) -> HandlerResult:
        """The person has not finished the page yet: come back later."""
        by_model = [q for q in run.pending.values() if q.route == "llm" and q.acknowledged]
        if by_model:
            note = " (They have not finished yet: ask them to, then call the tool again with action accept.)"
            return self._pending_for_model(run, by_model[0], note)
        nonce = run.expect_retry(self.run_expiry)
        return InputRequiredResult(request_state=f"{delivery.STATE_PREFIX}{run.id}.{nonce}")

    async def complete(self, question_id: str, principal: str | None, answer: Answer) -> bool:
        """An answer from one of our pages or callbacks; False when no open question matches."""
        return await delivery.complete(self, question_id, principal, answer)

    # -- forwarded from other nodes ----------------------------------------------

    def _principal_of(self, run_id: str) -> str | Missing | None:
        run = self.runs.get(run_id)
        return MISSING if run is None or run.inline else run.principal

    async def _handle_forwarded(self, run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        run = self.runs.get(run_id)
        if run is None or run.inline or run.scope.cancel_called or payload.get("op") not in ("answers", "complete"):
            return None
        if payload["op"] == "complete":
            question = run.pending.get(str(payload.get("question")))
            if question is not None:
                action, content = payload["answer"]
                question.resolve(Answer(action, content))
            return encode_outcome(None)
        for key, (action, content) in payload.get("answers", {}).items():
            question = run.pending.get(key)
            if question is None:
                continue
            if question.observable and action == "accept":
                question.acknowledged = True  # the page, not the client, completes it
            else:
                question.resolve(Answer(action, content))
        run.round = None
        run.resume()
        try:
            return encode_outcome(await self.await_outcome(run, None))
        except Exception as exc:
            return encode_outcome(error=exc)

    # -- asking and steps ----------------------------------------------------------

    async def ask(self, ctx: Context[Any, Any], question: Question, timeout: float) -> Answer:
        return await routes.ask(self, ctx, _current_run.get(), question, timeout)

    async def step(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run `fn` once per run: a replay returns its journaled result instead of calling it again."""
        run = _current_run.get()
        if run is None or not run.hosted:
            return await call(fn)
        seq = run.advance()
        entry = run.journal.get(seq)
        if entry is not None and entry.kind == "step" and entry.digest == name:
            return entry.value
        if self.shared:
            # Fencing: a body whose run another node took over must not perform the side effect again.
            found = await self.store.get_run(run.id)
            if found is not None and found[0] != self.node:
                logger.warning(
                    "Run %s now belongs to node %s; stopping this copy before step %r", run.id, found[0], name
                )
                run.stale = True
                run.scope.cancel()
                await anyio.lowlevel.checkpoint()
        value = await call(fn)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(f"step {name!r} must return JSON-serializable data, got {type(value).__name__}") from None
        if not await self.durability.record(run.id, run.principal, seq, Entry("step", name, value=value)):
            recorded = (await self.durability.journal(run.id, run.principal)).get(seq)
            if recorded is not None and recorded.kind == "step" and recorded.digest == name:
                return recorded.value
        return value

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
        self.url_questions.pop(question.id, None)
        if question.session is not None and self._session_questions.get(question.session) is question:
            del self._session_questions[question.session]

    async def store_run(self, run: Run) -> None:
        """Write (or renew) the run's record; written up front so a store outage fails the call cleanly."""
        record = RunRecord(run.tool, run.arguments, run.mrtr)
        await self.durability.save_run(run.id, run.principal, record, self.run_expiry)

    async def save_question(self, run: Run, question: Question) -> None:
        await self.durability.save_pending(run.id, run.principal, question)
