"""The `tools/call` and `tools/list` middleware: the one entry from the SDK into the engine.

A call is one of three things: an answer for the model fallback's system
tool, a 2026-07-28 retry carrying elicitkit's `requestState` (both go to
`Answers`, and through the door), or a new call (the run host starts it). Store trouble becomes an
error the client can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

from elicitkit import _mcp
from elicitkit._core.codec import is_ours
from elicitkit._core.kinds import Answer
from elicitkit._engine import refusals
from elicitkit._engine.answers import Answers
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.host import RunHost
from elicitkit._engine.policy import Policy
from elicitkit._engine.tasks import (
    EXTENSION,
    MISSING_CAPABILITY,
    TASKS_VERSION,
    TERMINAL,
    TaskRecord,
    with_task_capability,
)
from elicitkit._errors import StoreUnavailable, TamperedRecord
from elicitkit._fallback import shape_tools

__all__ = ["ToolsMiddleware"]

logger = logging.getLogger("elicitkit")


class ToolsMiddleware:
    def __init__(self, policy: Policy, host: RunHost, answers: Answers) -> None:
        self.policy = policy
        self.host = host
        self.answers = answers
        self.tasks = host.tasks

    def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Coroutine[Any, Any, HandlerResult]:
        """What to await for this request. (A plain method: a request that only passes through keeps no frame of
        this middleware, and a call waiting on a person one, which the transport resumes each time it does.)"""
        method = ctx.method
        if method == "tools/call" and ctx.request_id is not None:
            return self.call(ctx, call_next)
        if method == "tools/list":
            return self.tools_list(ctx, call_next)
        if method == "initialize":
            return self.initialize(ctx, call_next)
        if method.startswith("tasks/"):
            return self.tasks_request(ctx, call_next)
        return call_next(ctx)  # type: ignore[return-value]  # (the SDK's chain hands on coroutines)

    async def tools_list(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # The fallback tool is shown only to clients that need it, with output schemas widened for them;
        # 2025-11-25 clients learn that every tool may run as a task.
        return shape_tools(
            await call_next(ctx),
            self.policy.fallback_tool,
            needed=self.policy.model_fallback_shown(ctx),
            tasks=ctx.protocol_version == TASKS_VERSION,
            view=self.policy.app_view_for(ctx) != "off",
        )

    async def initialize(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        return with_task_capability(await call_next(ctx))  # (2025-11-25 handshakes only)

    async def tasks_request(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:
            return None  # a notification named like a request: nothing to answer, nothing to log
        _mcp.check_params(ctx, own=("inputResponses",))
        try:
            return await self.task_method(ctx, call_next)
        except StoreUnavailable as exc:
            raise refusals.store_unavailable(str(exc)) from exc

    async def call(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """`tools/call`: an answer for the fallback tool, a retry of one of our runs, or a new run."""
        # Before a task, a hosted run or a retry is made of params the SDK would refuse (answers: checked in Answers).
        _mcp.check_params(ctx, own=("inputResponses",))
        params = ctx.params or {}
        name = str(params.get("name", ""))
        try:
            if self.policy.answer_tool_on and name == self.policy.fallback_tool:
                return await self.answers.fallback_answer(ctx, params.get("arguments"), call_next)
            if is_ours(params.get("requestState")):
                return await self.answers.retry(ctx, params, call_next)
            arguments = params.get("arguments")
            run = self.host.begin(ctx, name, dict(arguments) if isinstance(arguments, Mapping) else {})
            if run.hosted:
                return await self.host.start(run, ctx, call_next)
            with self.host.inline(run):
                return await call_next(ctx)
        except StoreUnavailable as exc:
            logger.warning("tools/call %r refused: %s", name, exc)
            raise refusals.store_unavailable(str(exc)) from exc
        except TamperedRecord as exc:
            logger.error("tools/call %r refused: a stored record failed authentication", name)
            raise refusals.tampered() from exc

    async def task_method(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """`tasks/get`, `tasks/result` (2025-11-25), `tasks/update` (2026-07-28) and `tasks/cancel`."""
        legacy = not _mcp.is_mrtr(ctx.protocol_version)
        method = ctx.method
        if method not in ("tasks/get", "tasks/cancel", "tasks/result" if legacy else "tasks/update"):
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
        if not legacy and not _mcp.takes_tasks(ctx):
            raise MCPError(
                code=MISSING_CAPABILITY,
                message="Missing required client capability",
                data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        task_id = str((ctx.params or {}).get("taskId", ""))
        record, run = await self.tasks.status(ctx, task_id)
        if run is None and record["status"] not in TERMINAL:
            await self.host.recover(ctx, call_next, task_id, record)
            record, run = await self.tasks.status(ctx, task_id)
        done: dict[str, Any] = {} if legacy else {"resultType": "complete"}
        if method == "tasks/get":
            return await self.tasks.detailed(ctx, task_id, record, run, legacy=legacy)
        if method == "tasks/update":
            responses = (ctx.params or {}).get("inputResponses")
            if record["status"] in TERMINAL:
                return done  # nothing is outstanding any more: ignored, as the spec says of unknown keys
            await self.answers.take(Arrival("task", _mcp.principal(ctx), _task_answers(responses), run_id=task_id))
            return done
        if method == "tasks/cancel":
            if record["status"] in TERMINAL:
                raise MCPError(code=INVALID_PARAMS, message=f"Task {task_id!r} already ended ({record['status']})")
            if run is None:
                await self.tasks.forward(ctx, task_id, {"op": "task_cancel"})
            else:
                await self.tasks.cancel_here(run)
            if not legacy:
                return done
            record, _ = await self.tasks.status(ctx, task_id)
            return self.tasks.task(task_id, record, legacy=True)  # 2025-11-25: the task as it stands now
        return await self.task_result(ctx, call_next, task_id)

    async def task_result(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, task_id: str
    ) -> HandlerResult:
        """2025-11-25 `tasks/result`: wait for the end; meanwhile the run asks its client through this request.

        Held here, the run's end is awaited; held elsewhere, its announcement — and if its node dies meanwhile,
        this node takes the run over and waits for it here.
        """
        while True:
            record, run = await self.tasks.status(ctx, task_id)
            if record["status"] in TERMINAL:
                break
            if run is not None:
                run.attach(ctx)
                try:
                    await run.wait_picked()  # a task's run is "picked" once its outcome is in its record
                finally:
                    run.detach(ctx)
                if run.task_record is not None and run.task_record["status"] in TERMINAL:
                    record = TaskRecord(run.task_record)  # (what this node recorded, even if the store was down)
                    break
                continue
            await self.host.recover(ctx, call_next, task_id, record)
            if self.host.registry.hosted_run(task_id) is None:
                record = await self.tasks.wait_ended(ctx, task_id, self.policy.lease)
                if record["status"] in TERMINAL:
                    break
        if record["status"] == "completed":
            return self.tasks.related(task_id, record.get("result", {}))
        if record["status"] == "cancelled":
            raise MCPError(code=INVALID_PARAMS, message=f"Task {task_id!r} was cancelled")
        error = record.get("error") or {}
        raise MCPError(code=int(error.get("code", -32603)), message=str(error.get("message", "The tool failed")))


def _task_answers(responses: Any) -> dict[str, Answer]:
    """A `tasks/update`'s `inputResponses`, by input request; entries that are not results are left out (the spec
    says unknown keys are ignored, and a task's client may send them)."""
    if not isinstance(responses, Mapping):
        return {}
    answers = {}
    for key, raw in responses.items():
        if isinstance(raw, Mapping):
            meta = raw.get("_meta")
            answers[str(key)] = Answer(
                str(raw.get("action", "cancel")), raw.get("content"), dict(meta) if isinstance(meta, Mapping) else None
            )
    return answers
