"""The run host: starts tool bodies in tasks of their own, drives them, and hands their outcomes to requests.

When a question may need a route that outlives a request (2026-07-28's
`InputRequiredResult`, or the model fallback), the tool body runs in a task of
the server's lifespan and is journaled. Each request — the first call, every
retry, every fallback answer, on this node or forwarded from another — waits
for the run's *next outcome*: the final result, or the open questions to hand
back. The body never runs twice; only a node that takes over a dead owner's
run replays it, and replay returns every journaled answer and step at once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar, Token
from dataclasses import replace
from typing import Any, Literal

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import ElicitRequest, InputRequiredResult

from elicitkit import _mcp
from elicitkit._core.codec import encode_state
from elicitkit._core.journal import Entry
from elicitkit._core.kinds import BY_ANSWER_TOOL, BY_LATER_REQUEST, Hosting, new_id
from elicitkit._engine import refusals
from elicitkit._engine.cluster import Cluster
from elicitkit._engine.deadlines import cancel_scope, now
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Question
from elicitkit._engine.records import Records, RunRecord
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Final, Run
from elicitkit._engine.tasks import TaskBook, TaskRecord
from elicitkit._engine.tenure import Tenure
from elicitkit._errors import StoreUnavailable
from elicitkit._fallback import render_pending

__all__ = ["RunHost", "current_run"]

logger = logging.getLogger("elicitkit")

current_run: ContextVar[Run | None] = ContextVar("elicitkit_run", default=None)
"""The run whose body is executing in this task (None outside tool calls elicitkit saw)."""


class RunHost:
    """Task groups for suspended bodies, one per lifespan entry, and the runs' life in them."""

    def __init__(self, policy: Policy, registry: Registry, records: Records, cluster: Cluster, tasks: TaskBook) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records
        self.cluster = cluster
        self.tasks = tasks
        self.tenure = Tenure(policy, registry, records)
        self._owner = policy.node if policy.shared else None
        """Named in each round's `requestState` on a shared store: where a retry landing on another node goes."""
        # The lifespan's task group, found through the context its requests inherit (stdio,
        # in-memory clients, HTTP sessions), or else by the identity of the lifespan state.
        self._host_var: ContextVar[anyio.abc.TaskGroup | None] = ContextVar(f"elicitkit_host_{id(self)}", default=None)
        self._hosts: dict[int, list[anyio.abc.TaskGroup]] = {}

    @asynccontextmanager
    async def hosting(self, lifespan_state: Any, tg: anyio.abc.TaskGroup) -> AsyncIterator[None]:
        """Make `tg` the home of runs started by requests of this lifespan entry."""
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

    def host_for(self, rctx: ServerRequestContext[Any, Any]) -> anyio.abc.TaskGroup | None:
        host = self._host_var.get()
        if host is not None:
            return host
        hosts = self._hosts.get(id(rctx.lifespan_context))
        return hosts[-1] if hosts else None

    def begin(self, rctx: ServerRequestContext[Any, Any], tool: str, arguments: dict[str, Any]) -> Run:
        """The run of a new call to `tool`: inline (its body runs inside this request, `with inline(run)`) when it
        can only ask natively, else hosted and journaled (`start`)."""
        needs_host = _mcp.requested_task(rctx) is not None or self.policy.needs_host(rctx)
        hosting = Hosting.HOSTED if needs_host and self.host_for(rctx) is not None else Hosting.INLINE
        principal, mrtr = _mcp.principal(rctx), _mcp.is_mrtr(rctx.protocol_version)
        run = Run(new_id(), tool, principal, mrtr=mrtr, hosting=hosting, arguments=arguments)
        self.registry.runs[run.id] = run
        return run

    def inline(self, run: Run) -> _Inline:
        """`with` it around an inline run's body: the body's questions know their run, which ends with the block.

        (A context manager, not a coroutine around the body: a call waiting on a person keeps every coroutine
        frame between its tool body and the transport, and resumes each of them whenever the transport does.)"""
        return _Inline(run, self.registry)

    async def start(self, run: Run, rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Run a hosted run's body in the lifespan's task group; this request waits for its first outcome.

        A 2025-11-25 call that asks for a task (`params.task`) gets its task handle at once.
        """
        task = _mcp.requested_task(rctx)
        host = self.host_for(rctx)
        assert host is not None  # `begin` hosts only a run that has a home
        # The record waits until something outside this request may look for the run (its first round, a step,
        # a channel question): a call that asks nothing costs the store nothing.
        if task is not None:
            await self.tenure.store_run(run)  # polled from the store at once
            record = await self.tasks.start(run, task)
            host.start_soon(self.drive, run, rctx, call_next)
            return self.tasks.created(run, record, legacy=True)
        host.start_soon(self.drive, run, rctx, call_next)
        return await self.await_outcome(run, rctx)

    async def recover(
        self, rctx: ServerRequestContext[Any, Any], call_next: CallNext, run_id: str, task: TaskRecord
    ) -> None:
        """A task's run is in no process that is alive (a restart, a crash): take it over and replay it here."""
        principal = _mcp.principal(rctx)
        found = await self.records.load_run(run_id, principal)
        host = self.host_for(rctx)
        if found is None:
            await self.tasks.lost(run_id, principal, task)
            return
        if host is None:
            return
        owner, record = found
        if owner != self.policy.node and await self.cluster.alive(owner):
            return  # its node is alive and holds it
        if not await self.records.claim_run(run_id, owner):
            return  # another node took it over first
        journal = await self.records.journal(run_id, principal)
        if self.registry.runs.get(run_id) is not None:
            return  # another request brought it back meanwhile
        run = self._rebuilt(run_id, principal, record, journal)  # registered only once it can be driven at once
        run.become_task(task)
        logger.info("Resuming task %s of tool %r from %d journal entries", run_id, record.tool, len(run.journal))
        host.start_soon(self.drive, run, self._body_context(rctx, record), call_next)

    def _rebuilt(self, run_id: str, principal: str | None, record: RunRecord, journal: dict[int, Entry]) -> Run:
        """A run an earlier copy began (a restart, a takeover), replayed from its journal."""
        run = Run(
            run_id,
            record.tool,
            principal,
            mrtr=record.mrtr,
            hosting=Hosting.HOSTED,
            arguments=record.arguments,
            journal=journal,
        )
        self.registry.runs[run_id] = run
        return run

    @staticmethod
    def _body_context(rctx: ServerRequestContext[Any, Any], record: RunRecord) -> ServerRequestContext[Any, Any]:
        """The `tools/call` a replayed body runs as, through whichever request brought the run back."""
        params: dict[str, Any] = {"name": record.tool, "arguments": record.arguments}
        if rctx.params and "_meta" in rctx.params:
            params["_meta"] = rctx.params["_meta"]
        return replace(rctx, method="tools/call", params=params)

    async def replay(
        self,
        rctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
        run_id: str,
        principal: str | None,
        record: RunRecord,
    ) -> HandlerResult:
        """Run the tool body again; every journaled `elicit` and `step` returns at once."""
        host = self.host_for(rctx)
        if host is None:
            raise refusals.ended()
        journal = await self.records.journal(run_id, principal)
        run = self._rebuilt(run_id, principal, record, journal)
        logger.info("Replaying run %s of tool %r from %d journal entries", run_id, record.tool, len(run.journal))
        host.start_soon(self.drive, run, self._body_context(rctx, record), call_next)
        return await self.await_outcome(run, rctx)

    async def drive(self, run: Run, rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> None:
        """Run a hosted body to its end; keep the run's records only while it can still be resumed."""
        current_run.set(run)
        finished = False  # stays False only when the host is shut down: then the records stay for a restart
        try:
            with run.scope:
                try:
                    run.finish(Final(result=await call_next(rctx)))
                except Exception as exc:
                    run.finish(Final(error=exc))
            if run.task and run.final is not None:
                with anyio.CancelScope(shield=True):
                    try:
                        await self.tasks.finish(run, run.final)
                    except StoreUnavailable:
                        logger.warning("Could not record the outcome of task %s", run.id)
            elif run.hibernated:
                return  # its records stay: the answer's request replays it (the `finally` below keeps them)
            elif run.final is None:
                logger.info(
                    "Run %s of tool %r ended unfinished: no answer came in time, or it was cancelled", run.id, run.tool
                )
            elif run.rctx is None:
                # Nobody waits (a timeout ended the body between rounds): keep the result for the next request.
                with anyio.move_on_after(self.policy.run_expiry):
                    await run.wait_picked()
            # Else the request waiting for the run has been woken with the result and takes it from the run itself:
            # no wait here, so a call that asks nothing pays for no cancel scope and no timer.
            finished = True
        finally:
            if run.final is None:
                # Wake any request still waiting for this run (one that raced its expiry or shutdown).
                run.finish(Final(error=refusals.ended()))
            if run.task:
                run.mark_picked()  # `tasks/result` waits for this: the outcome is in the task's record now
            for question in list(run.pending.values()):
                question.cancel()
            self.registry.release(run)
            if finished and run.stored and not run.stale:
                # Shutdown is the other way out: then the records stay, and a restart replays the run.
                kept = self.registry.ended.keep(run, now(), self.policy.run_expiry)
                with cancel_scope(shield=True):
                    await self.tenure.forget(run, kept=kept)

    async def await_outcome(self, run: Run, rctx: ServerRequestContext[Any, Any] | None) -> HandlerResult:
        """Wait for the run's next outcome on behalf of a request (None: a request forwarded from another node)."""
        self.registry.unpark(run)
        outcome: Final | list[Question] | Literal["task"] | None = None
        try:
            with run.awaited_by(rctx):
                if run.awaiting_pages:
                    # While the person is on one of our pages, a request waits a bounded time, then comes back.
                    with anyio.move_on_after(self.policy.url_wait):
                        outcome = await run.next_outcome()
                else:
                    outcome = await run.next_outcome()
        except anyio.get_cancelled_exc_class():
            if rctx is None or _mcp.cancel_requested(rctx):
                # The client cancelled its call (or the node that forwarded it gave up): so does the run.
                run.scope.cancel()
            else:
                # The connection dropped: the run waits, as between rounds, for the client to send the same request
                # again (the door answers a resend as the first was).
                run.suspend(self.policy.run_expiry)
            raise
        if outcome is None and run.final is not None:
            outcome = run.final  # the body ended as the wait ran out: nobody else will take its result
        if outcome is None:
            return self._still_waiting(run)
        if outcome == "task":
            # The body asked on a human channel and this client takes tasks: it polls from now on.
            await self.tenure.store_run(run)
            record = await self.tasks.start(run, None)
            return self.tasks.created(run, record, legacy=False)
        if isinstance(outcome, Final):
            run.mark_picked()
            if outcome.error is not None:
                raise outcome.error
            result: HandlerResult = outcome.result
            return result
        # The run waits for another round: keep its records alive for as long as it may.
        try:
            await self.tenure.store_run(run)
        except StoreUnavailable:
            run.scope.cancel()  # nobody could come back for it: the client starts the call again
            raise
        by_model = [q for q in outcome if q.route in BY_ANSWER_TOOL]
        if by_model:
            # A model handles one question at a time; the others follow in later results.
            pending = self._pending_for_model(run, by_model[0])
            self._park(run)
            return pending
        nonce = run.expect_retry(self.policy.run_expiry)
        self._park(run)
        return InputRequiredResult(
            input_requests={q.id: ElicitRequest(params=q.wire_params()) for q in outcome},
            request_state=encode_state(run.id, nonce, self._owner),
        )

    def _park(self, run: Run) -> None:
        """`run` now waits for its next request; past `max_suspended` waiting bodies, the longest waiting
        hibernate: their tasks end, their records stay in the store, and their answers replay them."""
        limit = self.policy.max_suspended
        if limit is None:
            return
        parked = self.registry.parked
        parked[run.id] = run
        while len(parked) > limit:
            oldest = parked.pop(next(iter(parked)))
            if self._can_hibernate(oldest):
                oldest.hibernate()
                self.registry.release(oldest)  # from now on its requests find it in the store, and replay it

    def _can_hibernate(self, run: Run) -> bool:
        """Whatever answers `run` now is journaled, and its next request replays it (not so for channels, tasks,
        pages the person has open, or secret answers that are not kept)."""
        if run.rctx is not None or run.final is not None or run.ending or run.task or run.task_wanted:
            return False
        return bool(run.pending) and all(
            q.route in BY_LATER_REQUEST and q.via is None and not q.acknowledged and self.records.keeps(q.secret_fields)
            for q in run.pending.values()
        )

    def _pending_for_model(self, run: Run, question: Question, note: str = "") -> HandlerResult:
        run.suspend(self.policy.run_expiry)
        message = question.message
        if question.mode == "url":
            message = f"{message}\n\nThe user must open this link themselves: {question.url}{note}"
        schema = question.schema.wire if question.mode == "form" else {"type": "object", "properties": {}}
        expires, in_view = self.policy.wall_expiry(question), question.route == "app"
        return render_pending(question.id, message, schema, expires, self.policy.fallback_tool, in_view=in_view)

    def _still_waiting(self, run: Run) -> HandlerResult:
        """The person has not finished the page yet: come back later."""
        by_model = [q for q in run.pending.values() if q.route in BY_ANSWER_TOOL and q.acknowledged]
        if by_model:
            note = " (They have not finished yet: ask them to, then call the tool again with action accept.)"
            return self._pending_for_model(run, by_model[0], note)
        nonce = run.expect_retry(self.policy.run_expiry)
        return InputRequiredResult(request_state=encode_state(run.id, nonce, self._owner))


class _Inline:
    """An inline run's body, as `with` sees it: its questions know their run (`current_run`) while it runs, and
    the run is forgotten when it ends."""

    __slots__ = ("_registry", "_run", "_token")

    def __init__(self, run: Run, registry: Registry) -> None:
        self._run = run
        self._registry = registry
        self._token: Token[Run | None] | None = None

    def __enter__(self) -> Run:
        self._token = current_run.set(self._run)
        return self._run

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        current_run.reset(self._token)
        self._registry.release(self._run)
