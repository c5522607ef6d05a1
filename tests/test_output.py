"""A tool's own `CallToolResult` goes out verbatim: hooks and elicitkit's shaping never touch it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent

from elicitkit import Elicitation, ElicitationResult, Outcome, QuestionInfo
from elicitkit.testing import ScriptedHuman, accept, call_through_model, serve_http

pytestmark = pytest.mark.anyio

RESULT = CallToolResult(
    content=[TextContent(type="text", text="Deployed v2 (task t-1 follows up)")],
    structured_content={"deployed": "v2", "task": "t-1"},
    is_error=False,
    _meta={"io.modelcontextprotocol/related-task": {"taskId": "t-1"}, "example.com/trace": [1, 2, 3]},
)


def bare() -> MCPServer:
    """The same tool on the bare SDK, asking nothing: the reference for what the client should get."""
    server = MCPServer("output")

    @server.tool()
    async def deploy() -> CallToolResult:
        return RESULT

    return server


def with_elicitkit() -> MCPServer:
    server = MCPServer("output")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(ctx: Context) -> CallToolResult:
        assert (await hitl.confirm(ctx, "Deploy v2?")).action == "accept"
        return RESULT

    # Hooks at every point: none of them may reach the tool's own result.
    @hitl.around
    async def around(question: QuestionInfo, call_next: Any) -> ElicitationResult[Any]:
        return await call_next()

    hitl.before_ask(lambda q: None)
    hitl.after_ask(lambda q, stage: None)
    hitl.before_answer(lambda q, r: None)

    @hitl.after_answer
    def observe(question: QuestionInfo, outcome: Outcome) -> None:
        assert outcome.result is not None

    return server


def as_json(result: CallToolResult) -> str:
    return result.model_dump_json(by_alias=True, exclude_none=True)


async def reference(mode: str) -> str:
    async with Client(bare(), mode=mode) as client:
        return as_json(await client.call_tool("deploy", {}))


async def test_a_returned_call_tool_result_reaches_a_client_that_shows_forms_unchanged(mode: str) -> None:
    async with Client(with_elicitkit(), mode=mode, elicitation_callback=ScriptedHuman(accept({"value": True}))) as c:
        got = await c.call_tool("deploy", {})
    assert as_json(got) == await reference(mode)


async def test_a_returned_call_tool_result_reaches_a_client_without_forms_unchanged(mode: str) -> None:
    async with Client(with_elicitkit(), mode=mode) as client:
        got = await call_through_model(client, "deploy", {}, ScriptedHuman(accept({"value": True})))
    assert as_json(got) == await reference(mode)


async def test_a_returned_call_tool_result_crosses_real_http_unchanged(mode: str) -> None:
    async with serve_http(bare()) as url, Client(url, mode=mode) as client:
        expected = as_json(await client.call_tool("deploy", {}))
    human = ScriptedHuman(accept({"value": True}))
    async with serve_http(with_elicitkit()) as url, Client(url, mode=mode, elicitation_callback=human) as client:
        got = await client.call_tool("deploy", {})
    assert as_json(got) == expected


async def test_a_2025_11_25_task_s_result_names_its_task_under_related_task_and_keeps_everything_else() -> None:
    """The one key the protocol sets (docs/hooks.md): `tasks/result` names the task it belongs to."""
    from tests.channels.tasking import raw

    human = ScriptedHuman(accept({"value": True}))
    async with Client(with_elicitkit(), mode="legacy", elicitation_callback=human) as client:
        created = await raw(client, "tools/call", {"name": "deploy", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        got = await raw(client, "tasks/result", {"taskId": task_id})
    expected = RESULT.model_dump(by_alias=True, exclude_none=True, mode="json")
    expected.pop("resultType")  # (a 2026-07-28 field: the 2025-11-25 wire has none)
    expected["_meta"]["io.modelcontextprotocol/related-task"] = {"taskId": task_id}
    assert got == expected
