"""Moving from mcp.do: its documented `elicit` calls, served by `hitl.install_elicit_tool()`, give mcp.do's results.

mcp.do documents the `elicit` tool (docs.platform.do/mcp/elicit-tool) with
`{message, schema, uiType}` calls: an approval, a choice between customers, an
address, a design preference, each on `slack`, `discord`, `teams` or `web`, or
without `uiType` (Slack). Here each one is called over streamable HTTP on both
eras, answered (or declined, cancelled, left to time out) on the channel its
`uiType` names, and the tool's result on the wire is compared with what mcp.do
returns: its `content` and its `isError`, byte for byte. (elicitkit adds
`structuredContent`, which mcp.do does not send.)
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from elicitkit import Elicitation
from elicitkit.channels import discord, slack, teams, web
from elicitkit.channels.base import Prompt, Responder
from elicitkit.testing import serve_http
from tests.channels.recording import RecordingChannel

pytestmark = pytest.mark.anyio

APPROVAL = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "Approval decision"},
        "reason": {"type": "string", "description": "Reason for decision"},
    },
    "required": ["approved"],
}
CUSTOMER = {
    "type": "object",
    "properties": {"customer": {"type": "string", "enum": ["Acme Corp", "Acme Labs"], "description": "Which one?"}},
    "required": ["customer"],
}
ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"},
        "zip": {"type": "string", "maxLength": 10},
        "country": {"type": "string", "default": "US"},
    },
    "required": ["street", "city", "zip"],
}
DESIGN = {
    "type": "object",
    "properties": {
        "design": {
            "type": "string",
            "oneOf": [{"const": "a", "title": "Option A"}, {"const": "b", "title": "Option B"}],
        },
        "score": {"type": "number", "minimum": 0, "maximum": 10},
    },
    "required": ["design"],
}

# (uiType given, the call's message, schema, the person's answer, mcp.do's `User provided:` text)
CALLS = [
    (
        "slack",
        "Should I deploy this to production?",
        APPROVAL,
        {"approved": True, "reason": "LGTM"},
        'User provided: {"approved":true,"reason":"LGTM"}',
    ),
    (
        "discord",
        "Which customer did you mean?",
        CUSTOMER,
        {"customer": "Acme Labs"},
        'User provided: {"customer":"Acme Labs"}',
    ),
    (
        "teams",
        "What's the customer's shipping address?",
        ADDRESS,
        {"street": "1 Main St", "city": "Zürich", "zip": "8001", "country": "CH"},
        'User provided: {"street":"1 Main St","city":"Zürich","zip":"8001","country":"CH"}',
    ),
    (
        "web",
        "Which design do you prefer?",
        DESIGN,
        {"design": "b", "score": 9.0},
        'User provided: {"design":"b","score":9}',
    ),
    (
        None,
        "Should I deploy this to production?",
        APPROVAL,
        {"approved": False},
        'User provided: {"approved":false}',
    ),
]
IDS = ["slack", "discord", "teams", "web", "no-uiType"]
OUTCOMES = {
    "decline": {"content": [{"type": "text", "text": "User declined: Too risky on a Friday"}], "isError": True},
    "cancel": {"content": [{"type": "text", "text": "User canceled: Request canceled"}], "isError": True},
}


def human_functions() -> tuple[MCPServer, dict[str, RecordingChannel]]:
    """mcp.do's four UI platforms, as an elicitkit server installs them."""
    server = MCPServer("human-functions")
    channels = {name: RecordingChannel(name) for name in ("slack", "discord", "teams", "web")}
    hitl = Elicitation(server, channels=list(channels.values()), timeout=0.6)
    hitl.install_elicit_tool(
        {
            "slack": slack("#approvals"),
            "discord": discord("1234567890"),
            "teams": teams("19:approvals@thread.tacv2"),
            "web": web(),
        },
        timeout={"anonymous": 0.6, "authenticated": 0.6},
    )
    return server, channels


def wire(result: Any) -> dict[str, Any]:
    """The tool's result as it travels, without elicitkit's `structuredContent` (and the protocol's framing of
    every 2026-07-28 result, `resultType` and the server's info in `_meta`, which the SDK adds to any tool's)."""
    sent: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    for framing in ("structuredContent", "resultType", "_meta"):
        sent.pop(framing, None)
    sent.setdefault("isError", False)
    return sent


@asynccontextmanager
async def asked(
    mode: str, ui_type: str | None, message: str, schema: dict[str, Any]
) -> AsyncIterator[tuple[RecordingChannel, Prompt, dict[str, Any]]]:
    """Call `elicit` as mcp.do's callers do; yield the channel `uiType` chose, what it shows, and the result-to-be."""
    server, channels = human_functions()
    arguments: dict[str, Any] = {"message": message, "schema": schema}
    if ui_type is not None:
        arguments["uiType"] = ui_type
    got: dict[str, Any] = {}
    async with serve_http(server) as url, Client(url, mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = wire(await client.call_tool("elicit", arguments))

        tg.start_soon(call)
        channel = channels[ui_type or "slack"]
        prompt = await channel.next_post(1)
        assert [name for name, other in channels.items() if other.posted] == [ui_type or "slack"]
        yield channel, prompt, got


@pytest.mark.parametrize(("ui_type", "message", "schema", "answer", "text"), CALLS, ids=IDS)
async def test_each_documented_call_answered_on_its_ui_type_reads_as_on_mcp_do(
    mode: str, ui_type: str | None, message: str, schema: dict[str, Any], answer: dict[str, Any], text: str
) -> None:
    async with asked(mode, ui_type, message, schema) as (channel, prompt, got):
        assert (prompt.message, prompt.schema["properties"].keys()) == (message, schema["properties"].keys())
        assert channel.desk is not None
        assert (await channel.desk.reply(prompt.token, Responder(channel.name, "U1"), "accept", answer)).ok
    assert got["result"] == {"content": [{"type": "text", "text": text}], "isError": False}


@pytest.mark.parametrize("outcome", ["decline", "cancel"])
@pytest.mark.parametrize(("ui_type", "message", "schema", "answer", "text"), CALLS, ids=IDS)
async def test_each_documented_call_declined_or_cancelled_on_its_ui_type_is_an_error_as_on_mcp_do(
    mode: str, ui_type: str | None, message: str, schema: dict[str, Any], answer: Any, text: str, outcome: str
) -> None:
    async with asked(mode, ui_type, message, schema) as (channel, prompt, got):
        assert channel.desk is not None
        reason = "Too risky on a Friday" if outcome == "decline" else None
        verdict = await channel.desk.reply(prompt.token, Responder(channel.name, "U1"), outcome, None, reason=reason)
        assert verdict.ok
    assert got["result"] == OUTCOMES[outcome]


@pytest.mark.parametrize(("ui_type", "message", "schema", "answer", "text"), CALLS, ids=IDS)
async def test_each_documented_call_nobody_answers_times_out_as_on_mcp_do(
    mode: str, ui_type: str | None, message: str, schema: dict[str, Any], answer: Any, text: str
) -> None:
    async with asked(mode, ui_type, message, schema) as (_, _, got):
        pass
    assert got["result"] == {
        "content": [{"type": "text", "text": "User canceled: Request timed out after 0.01 minutes"}],
        "isError": True,
    }


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "migrate-mcpdo.md"


async def test_the_migration_guides_server_serves_mcp_dos_tool(mode: str) -> None:
    """The guide's first block (a fragment: it needs your Slack app); its other blocks run in tests/test_doc_blocks."""
    guide = GUIDE.read_text()
    first = re.findall(r"```python\n(.*?)```", guide, flags=re.S)[0]
    namespace: dict[str, Any] = {"__name__": "migrate_mcpdo_guide"}
    exec(compile(first, "docs/migrate-mcpdo.md", "exec"), namespace)
    async with Client(namespace["server"], mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["elicit"].description == "Request structured input from user via Human Functions"
    assert tools["elicit"].input_schema["properties"]["uiType"]["enum"] == ["slack", "web"]
