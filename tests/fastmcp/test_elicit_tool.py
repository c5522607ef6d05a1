"""The `elicit` tool on a fastmcp server: an agent asks a person through a channel, on both eras."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client, FastMCP

from elicitkit import Elicitation
from elicitkit.channels.base import Responder, Via
from tests.channels.recording import RecordingChannel
from tests.scenes import text_of

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}


def desk_server() -> tuple[FastMCP, RecordingChannel]:
    server = FastMCP("agent-desk")
    channel = RecordingChannel("slack")
    hitl = Elicitation(server, channels=[channel])
    hitl.install_elicit_tool({"slack": Via("slack", "#approvals", frozenset({"U1"}))})
    return server, channel


async def test_the_elicit_tool_is_listed_with_its_input_on_a_fastmcp_server(mode: str) -> None:
    server, _ = desk_server()
    async with Client(server, mode=mode) as client:
        tool = next(t for t in await client.list_tools() if t.name == "elicit")
    assert tool.description == "Request structured input from user via Human Functions"
    assert set(tool.input_schema["properties"]) == {"message", "schema", "uiType"}
    assert tool.input_schema["required"] == ["message", "schema"]


async def test_an_answer_on_the_channel_comes_back_to_the_agent_on_a_fastmcp_server(mode: str) -> None:
    server, channel = desk_server()
    got: dict[str, Any] = {}
    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await client.call_tool("elicit", {"message": "Ship it?", "schema": SCHEMA})

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert prompt.message == "Ship it?"
        assert prompt.target == "#approvals"
        assert channel.desk is not None
        verdict = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"approved": True})
        assert verdict.ok
    assert text_of(got["result"]) == 'User provided: {"approved":true}'
    assert got["result"].structured_content == {"action": "accept", "content": {"approved": True}}


async def test_a_decline_with_a_reason_is_an_error_result_on_a_fastmcp_server_as_on_mcp_do(mode: str) -> None:
    server, channel = desk_server()
    got: dict[str, Any] = {}
    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            arguments = {"message": "Ship it?", "schema": SCHEMA}
            got["result"] = await client.call_tool("elicit", arguments, raise_on_error=False)

        tg.start_soon(call)
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        verdict = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "decline", None, reason="Not today")
        assert verdict.ok
    assert got["result"].is_error
    assert text_of(got["result"]) == "User declined: Not today"
