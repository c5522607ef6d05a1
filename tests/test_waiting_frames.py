"""What a call waiting on a person holds of elicitkit: its coroutine frames between the tool body and the transport.

Every coroutine frame between a waiting tool body and the transport stays in memory for as long as the person
thinks, and is resumed each time the transport's request is, several times per question. elicitkit's
middleware hands on what to await where it only passes a request through, runs an inline body inside one frame
of its own, and an unwatched question is awaited straight from `elicit`: these tests keep it that way.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import CoroutineType
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult
from pydantic import BaseModel

import elicitkit
from elicitkit import Accepted, Elicitation, _asking
from tests.scenes import Transport, connect, new_server

pytestmark = pytest.mark.anyio

PACKAGE = str(Path(elicitkit.__file__).parent) + os.sep
"""Where elicitkit's own modules are (wherever the repository was cloned: the tests' own path may say elicitkit)."""


class Go(BaseModel):
    go: bool


def awaiting(task: asyncio.Task[Any]) -> list[str]:
    """The qualified names of the coroutines a task is suspended in, outermost first, that are elicitkit's."""
    names = []
    coro: Any = task.get_coro()
    while isinstance(coro, CoroutineType):
        code = coro.cr_code
        if code.co_filename.startswith(PACKAGE):
            names.append(code.co_qualname)
        coro = coro.cr_await
    return names


def body_task(tool: str) -> asyncio.Task[Any]:
    """The task whose chain of awaits holds the body of `tool` now."""
    for task in asyncio.all_tasks():
        coro: Any = task.get_coro()
        while isinstance(coro, CoroutineType):
            if coro.cr_code.co_name == tool:
                return task
            coro = coro.cr_await
    raise AssertionError(f"no task runs {tool}")


async def held_while_asked(hitl: Elicitation, server: MCPServer, transport: Transport) -> list[list[str]]:
    """elicitkit's frames the call of a tool asking one question holds while the person sees it."""
    seen: list[list[str]] = []

    @server.tool()
    async def deploy(ctx: Context) -> bool:
        result = await hitl.elicit(ctx, "Deploy?", Go)
        return isinstance(result, Accepted) and result.data.go

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        seen.append(awaiting(body_task("deploy")))
        return ElicitResult(action="accept", content={"go": True})

    async with connect(server, transport, "legacy", elicitation_callback=person) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("deploy", {})
    assert result.structured_content == {"result": True}
    return seen


async def test_a_question_asked_inline_holds_three_frames_and_the_call_one(
    transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing records the audit trail (the test session may have set OpenTelemetry's providers for good).
    monkeypatch.setattr(_asking, "recording", lambda: False)
    server, hitl = new_server()
    held = await held_while_asked(hitl, server, transport)
    assert held == [["ToolsMiddleware.call", "Elicitation.elicit", "Asker.ask", "NativeRoute.put"]]


async def test_a_watched_question_holds_its_exchange_too() -> None:
    server, hitl = new_server()
    hitl.before_ask(lambda info: None)
    held = await held_while_asked(hitl, server, "memory")
    assert held == [["ToolsMiddleware.call", "Elicitation.elicit", "Asking.__call__", "Asker.ask", "NativeRoute.put"]]
