"""Clients that take MCP tasks, on both eras: the SDK client has no tasks support, so the tests bring it.

2026-07-28: a `ClientExtension` declaring `io.modelcontextprotocol/tasks`, whose `resultType: "task"` claim
hands the task to the test. 2025-11-25: raw `tools/call` with `params.task`, and raw `tasks/*` requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Result
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"


class TaskHandle(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"


class TasksExtension(ClientExtension):
    """Declares the tasks extension; a call that becomes a task returns a result whose `_meta` names it."""

    identifier = EXTENSION

    def __init__(self) -> None:
        self.handles: list[dict[str, Any]] = []

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self._resolve)]

    async def _resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        wire = handle.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.handles.append(wire)
        return CallToolResult(content=[], _meta={"task": wire})


async def raw(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request as it goes on the wire, its result as it came back (no SDK-side validation)."""
    session = client.session
    data: dict[str, Any] = {"method": method, "params": dict(params)}
    options: dict[str, Any] = {}
    session._stamp(data, options)  # the SDK client has no tasks API: stamp _meta as it would
    result: dict[str, Any] = await session._dispatcher.send_raw_request(method, data["params"], options)
    return result


async def poll_until(client: Client, task_id: str, statuses: set[str], within: float = 5) -> dict[str, Any]:
    """`tasks/get` until the task reaches one of `statuses` (bounded)."""
    with anyio.fail_after(within):
        while True:
            task = await raw(client, "tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            # Poll again once every task here (the servers' too) has done what it could: no timed wait.
            await anyio.wait_all_tasks_blocked()


async def start_task(client: Client, mode: str, tool: str, arguments: dict[str, Any] | None = None) -> str:
    """Call `tool` so that it runs as a task, and return the task's id: a 2025-11-25 client asks for one
    (`params.task`); a 2026-07-28 one (declaring the extension) gets one when the tool asks on a channel."""
    if mode == "legacy":
        created = await raw(client, "tools/call", {"name": tool, "arguments": arguments or {}, "task": {}})
        return str(created["task"]["taskId"])
    handed = await client.call_tool(tool, arguments or {})
    assert handed.meta is not None, handed
    return str(handed.meta["task"]["taskId"])
