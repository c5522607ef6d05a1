"""MCP tasks: a tool call that waits for a person returns a task handle at once, and the client polls it.

Two wire forms of one idea:

- **2025-11-25** (`tasks` capability): the client asks for a task with
  `params.task` on `tools/call` (tools say `execution.taskSupport: "optional"`);
  the call returns `{task: Task}` at once; `tasks/get` reports the status,
  `tasks/result` carries the questions for the client (tagged with the task)
  and returns the tool's result with `_meta["io.modelcontextprotocol/related-task"]`;
  `tasks/cancel` stops it.
- **2026-07-28** (extension `io.modelcontextprotocol/tasks`): the server
  decides. A run becomes a task when its body asks on a human channel (or with
  `elicit(..., task=True)`) and the client declared the extension on its
  request (clients without it get -32021 from `tasks/*`): the waiting request returns
  `{resultType: "task", ...Task}`. `tasks/get` inlines `inputRequests`
  (questions for the client), the `result` or the `error`; `tasks/update`
  carries `inputResponses`; `tasks/cancel` stops it.

A task is its run (same id). Its record — status, times, and at the end the
result — is sealed under the caller's principal in the store, so any node
answers `tasks/get`; `tasks/update` and `tasks/cancel` go to the node that
holds the run; and after a restart or a crash the node that is polled takes
the run over and replays it from its journal.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import anyio
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, ElicitRequestFormParams

from elicitkit import _mcp
from elicitkit._engine.cluster import Cluster, encode_outcome
from elicitkit._engine.policy import Policy
from elicitkit._engine.records import Records, RunRecord
from elicitkit._engine.registry import Registry
from elicitkit._engine.run import Final, Run

__all__ = [
    "EXTENSION",
    "MISSING_CAPABILITY",
    "RELATED",
    "TASKS_VERSION",
    "TERMINAL",
    "TaskBook",
    "TaskRecord",
    "with_task_capability",
]

logger = logging.getLogger("elicitkit")

EXTENSION = _mcp.TASKS_EXTENSION
TASKS_VERSION = _mcp.TASKS_VERSION
MISSING_CAPABILITY = -32021
RELATED = _mcp.RELATED_TASK
DEFAULT_TTL = 24 * 3600.0
POLL_MS = 1000
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


class TaskRecord(dict[str, Any]):
    """The stored task: `status`, `created`, `updated`, `ttl` (seconds), `tool`, and at the end `result`/`error`."""


class TaskBook:
    """Task records in the store, and the wire shapes of both eras."""

    def __init__(self, policy: Policy, registry: Registry, records: Records, cluster: Cluster) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records
        self.cluster = cluster

    def _ended_channel(self, run_id: str) -> str:
        return f"{self.cluster.prefix}:task:{run_id}"

    # -- records ---------------------------------------------------------------------

    async def save(self, run_id: str, principal: str | None, record: TaskRecord) -> None:
        record["updated"] = time.time()
        await self.records.save_task(run_id, principal, dict(record), record["created"] + record["ttl"])
        if record["status"] in TERMINAL:
            # Whoever waits in `tasks/result` on another node hears of it now (and re-reads the record).
            try:
                await self.cluster.broker.publish(self._ended_channel(run_id), b"ended")
            except Exception as exc:
                logger.warning("Could not announce the end of task %s (%s)", run_id, type(exc).__name__)

    async def load(self, run_id: str, principal: str | None) -> TaskRecord | None:
        value = await self.records.load_task(run_id, principal)
        return None if value is None else TaskRecord(value)

    async def start(self, run: Run, ttl: float | None) -> TaskRecord:
        """Make `run` a task; written before the handle is returned, so a `tasks/get` finds it at once."""
        now = time.time()
        record = TaskRecord(status="working", created=now, ttl=ttl or DEFAULT_TTL, tool=run.tool)
        run.become_task(record)
        assert run.task_lock is not None
        async with run.task_lock:  # the body may end while this is written: its outcome must come after
            # The run stays replayable as long as the task lives, whatever its questions wait for (written
            # first: a working task without its run is a lost one).
            run_record = RunRecord(run.tool, run.arguments, run.mrtr)
            await self.records.save_run(run.id, run.principal, run_record, record["ttl"])
            await self.save(run.id, run.principal, record)
        return record

    async def lost(self, run_id: str, principal: str | None, record: TaskRecord) -> None:
        """A working task whose run is in no store any more (expired, removed): it can only fail."""
        if record["status"] in TERMINAL:
            return
        logger.warning("Task %s has no run to resume; it fails", run_id)
        record.update(
            status="failed", error={"code": -32603, "message": "The task's run was lost; call the tool again"}
        )
        await self.save(run_id, principal, record)

    async def finish(self, run: Run, final: Final) -> None:
        """The run ended: keep its outcome for `tasks/get` and `tasks/result` (any node, until the TTL)."""
        assert run.task_lock is not None
        async with run.task_lock:
            record = TaskRecord(run.task_record or {})
            if not record or record["status"] in TERMINAL:
                return
            self._outcome(run, final, record)
            run.record_task(record)
            await self.save(run.id, run.principal, record)

    async def cancel_here(self, run: Run) -> None:
        """`tasks/cancel` for a run held here: record it (unless the task ended meanwhile) and stop the run."""
        assert run.task_lock is not None
        async with run.task_lock:
            record = TaskRecord(run.task_record or {})
            if record and record["status"] not in TERMINAL:
                record["status"] = "cancelled"
                run.record_task(record)
                await self.save(run.id, run.principal, record)
        run.scope.cancel()

    @staticmethod
    def _outcome(run: Run, final: Final, record: TaskRecord) -> None:
        if final.error is None:
            result = final.result
            record.update(status="completed", result=result if isinstance(result, dict) else _wire(result))
        elif (error := _mcp.error_data(final.error)) is not None:
            # What the call would have been answered with had it not been a task (its params refused, say).
            record.update(status="failed", error={"code": error.code, "message": error.message})
        else:
            logger.warning("Task %s of tool %r failed", run.id, run.tool, exc_info=final.error)
            record.update(status="failed", error={"code": -32603, "message": "The tool failed"})

    # -- wire shapes -----------------------------------------------------------------

    def task(self, run_id: str, record: TaskRecord, *, legacy: bool) -> dict[str, Any]:
        shape: dict[str, Any] = {
            "taskId": run_id,
            "status": record["status"],
            "createdAt": _iso(record["created"]),
            "lastUpdatedAt": _iso(record["updated"]),
        }
        ttl_ms = int(record["ttl"] * 1000)
        if legacy:
            shape.update(ttl=ttl_ms, pollInterval=POLL_MS)
        else:
            shape.update(ttlMs=ttl_ms, pollIntervalMs=POLL_MS)
        if record["status"] == "working":
            shape["statusMessage"] = "Waiting for a person to answer"
        return shape

    def created(self, run: Run, record: TaskRecord, *, legacy: bool) -> dict[str, Any]:
        """The `tools/call` result that hands the client the task."""
        task = self.task(run.id, record, legacy=legacy)
        message = {
            "io.modelcontextprotocol/model-immediate-response": "Waiting for a person to answer; "
            "the result will follow."
        }
        if legacy:
            return {"task": task, "_meta": message}
        return {"resultType": "task", **task, "_meta": message}

    async def status(self, rctx: ServerRequestContext[Any, Any], run_id: str) -> tuple[TaskRecord, Run | None]:
        """The task's record and, when this node holds it, its run; an unknown id is a JSON-RPC error."""
        principal = _mcp.principal(rctx)
        record = await self.load(run_id, principal)
        if record is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown task {run_id!r} (it may have expired)")
        run = self.registry.hosted_run(run_id)
        if run is not None and run.principal != principal:
            run = None
        return record, run

    async def detailed(
        self, rctx: ServerRequestContext[Any, Any], run_id: str, record: TaskRecord, run: Run | None, *, legacy: bool
    ) -> dict[str, Any]:
        """`tasks/get`: the task, with (2026-07-28) what the client must answer, the result, or the error."""
        shape = self.task(run_id, record, legacy=legacy)
        asking = await self._client_requests(rctx, run_id, run) if record["status"] == "working" else {}
        if asking:
            shape["status"] = "input_required"
            shape.pop("statusMessage", None)
            if not legacy:
                shape["inputRequests"] = {
                    key: {"method": "elicitation/create", "params": p} for key, p in asking.items()
                }
        if not legacy:
            shape["resultType"] = "complete"
            if record["status"] == "completed":
                shape["result"] = record.get("result", {})
            elif record["status"] == "failed":
                shape["error"] = record.get("error", {})
        return shape

    async def _client_requests(
        self, rctx: ServerRequestContext[Any, Any], run_id: str, run: Run | None
    ) -> dict[str, dict[str, Any]]:
        """The questions the client must answer, by key: from the run when held here, else from their records
        (2026-07-28 questions are stored), so any node the client polls shows them."""
        if run is not None:
            return {q.id: _wire(q.wire_params()) for q in run.client_questions()}
        stored = await self.records.run_questions(run_id, _mcp.principal(rctx))
        return {
            key: _wire(ElicitRequestFormParams(message=q.message, requested_schema=q.schema))
            for key, q in stored.items()
            if q.route == "mrtr" and q.mode == "form"
        }

    async def wait_ended(self, rctx: ServerRequestContext[Any, Any], run_id: str, within: float) -> TaskRecord:
        """The task's record once it has ended (woken by the announcement `save` makes), or as it stands after
        `within` seconds."""
        async with self.cluster.broker.listen(self._ended_channel(run_id)) as announcements:
            record, _ = await self.status(rctx, run_id)
            if record["status"] not in TERMINAL:
                with anyio.move_on_after(within):
                    await anext(aiter(announcements))
                record, _ = await self.status(rctx, run_id)
            return record

    async def forward(self, rctx: ServerRequestContext[Any, Any], run_id: str, payload: dict[str, Any]) -> None:
        """Hand a `tasks/cancel` to the live node that holds the task's run.

        Raises:
            MCPError: no node could take it (the client may send it again).
        """
        principal = _mcp.principal(rctx)
        found = await self.records.load_run(run_id, principal)
        if found is not None and found[0] != self.policy.node and await self.cluster.alive(found[0]):
            timeout = self.policy.forward_timeout
            if await self.cluster.forward(found[0], run_id, principal, payload, timeout, 5.0) is not None:
                return
        raise MCPError(code=INTERNAL_ERROR, message=f"Task {run_id!r} could not be reached just now; send it again")

    async def forwarded(self, run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """A `tasks/cancel` another node received for a run held here."""
        run = self.registry.hosted_run(run_id)
        if run is None or not run.task:
            return None
        await self.cancel_here(run)
        return encode_outcome(None)

    @staticmethod
    def related(run_id: str, result: dict[str, Any]) -> dict[str, Any]:
        meta = dict(result.get("_meta") or {})
        meta[RELATED] = {"taskId": run_id}
        return {**result, "_meta": meta}


def _wire(model: Any) -> Any:
    dump = getattr(model, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump is not None else model


def with_task_capability(result: HandlerResult) -> HandlerResult:
    """A 2025-11-25 `initialize` result that declares task-augmented `tools/call` and `tasks/cancel`."""
    if not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
        return result
    if result.get("protocolVersion") != TASKS_VERSION:
        return result
    tasks: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
    return {**result, "capabilities": {**result["capabilities"], "tasks": tasks}}
