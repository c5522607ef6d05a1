"""The `elicit` tool: an agent asks a person through a channel and reads mcp.do's result texts, on both eras."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from elicitkit import Elicitation
from elicitkit.channels.base import Responder, Via
from tests.channels.recording import RecordingChannel
from tests.scenes import text_of

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string", "maxLength": 20}},
    "required": ["approved"],
}


def desk_server(**install: Any) -> tuple[MCPServer, RecordingChannel]:
    server = MCPServer("agent-desk")
    channel = RecordingChannel("slack")
    hitl = Elicitation(server, channels=[channel])
    hitl.install_elicit_tool({"slack": Via("slack", "#approvals", frozenset({"U1"}))}, **install)
    return server, channel


@asynccontextmanager
async def calling(server: MCPServer, mode: str, arguments: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """Call `elicit` in the background; the yielded dict gets the result once the block's answers land."""
    got: dict[str, Any] = {}
    async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await client.call_tool("elicit", arguments)

        tg.start_soon(call)
        yield got


async def test_the_elicit_tool_is_listed_with_mcp_dos_description_and_input(mode: str) -> None:
    server, _ = desk_server()
    async with Client(server, mode=mode) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "elicit")
    assert tool.description == "Request structured input from user via Human Functions"
    assert set(tool.input_schema["properties"]) == {"message", "schema", "uiType"}
    assert tool.input_schema["required"] == ["message", "schema"]


async def test_an_answer_on_the_channel_comes_back_as_user_provided_json(mode: str) -> None:
    server, channel = desk_server()
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA, "uiType": "slack"}) as got:
        prompt = await channel.next_post(1)
        assert prompt.message == "Ship it?"
        assert prompt.target == "#approvals"
        assert channel.desk is not None
        refused = await channel.desk.reply(prompt.token, Responder("slack", "U2"), "accept", {"approved": True})
        assert refused.status == "not_approver"
        verdict = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"approved": True})
        assert verdict.ok
    result: CallToolResult = got["result"]
    assert text_of(result) == 'User provided: {"approved": true}'
    assert result.structured_content == {"action": "accept", "content": {"approved": True}}
    assert not result.is_error


async def test_a_decline_reads_user_declined(mode: str) -> None:
    server, channel = desk_server()
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}) as got:
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        await channel.desk.reply(prompt.token, Responder("slack", "U1"), "decline", None)
    assert text_of(got["result"]) == "User declined: the user declined"
    assert got["result"].structured_content["action"] == "decline"


async def test_no_answer_in_time_reads_user_canceled_request_timed_out(mode: str) -> None:
    server, channel = desk_server(timeout=0.6)
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}) as got:
        await channel.next_post(1)
    assert text_of(got["result"]) == "User canceled: Request timed out after 0.01 minutes"
    assert got["result"].structured_content == {"action": "cancel", "reason": "timeout"}
    assert [c.outcome for c in await channel.closings(1)] == ["expired"]


async def test_an_answer_that_breaks_the_schema_is_refused_and_the_question_stays_open(mode: str) -> None:
    server, channel = desk_server()
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}) as got:
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        bad = await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", {"note": "x" * 30})
        assert bad.status == "invalid"
        assert set(bad.problems) == {"approved", "note"}
        good = {"approved": False, "note": "not today"}
        assert (await channel.desk.reply(prompt.token, Responder("slack", "U1"), "accept", good)).ok
    assert json.loads(text_of(got["result"]).removeprefix("User provided: ")) == good


async def test_a_schema_outside_the_restricted_form_is_refused_clearly(mode: str) -> None:
    server, channel = desk_server()
    nested = {"type": "object", "properties": {"who": {"type": "object", "properties": {}}}}
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("elicit", {"message": "Who?", "schema": nested})
    assert result.is_error
    assert text_of(result).startswith("The schema cannot be shown as a form: ")
    assert "who" in text_of(result)
    assert channel.posted == []


async def test_a_ui_type_the_server_does_not_offer_is_refused(mode: str) -> None:
    server, _ = desk_server()
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("elicit", {"message": "Hi?", "schema": SCHEMA, "uiType": "teams"})
    assert result.is_error
    assert text_of(result) == "uiType 'teams' is not available on this server (available: slack)"


def test_a_destination_on_a_channel_that_was_not_added_fails_at_install() -> None:
    hitl = Elicitation(MCPServer("x"), channels=[RecordingChannel("slack")])
    with pytest.raises(ValueError, match="channel 'discord', which was not added"):
        hitl.install_elicit_tool({"discord": Via("discord", "123")})
    with pytest.raises(ValueError, match="needs somewhere to ask"):
        Elicitation(MCPServer("y")).install_elicit_tool()


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        ({"message": "", "schema": SCHEMA}, "An elicitation needs a non-empty message"),
        ({"message": " \n", "schema": SCHEMA}, "An elicitation needs a non-empty message"),
        ({"message": "x" * 20_001, "schema": SCHEMA}, "at most 20,000 characters"),
        (
            {"message": "Who?", "schema": {"type": "object", "properties": {"who": {"type": ["string", "null"]}}}},
            "The schema cannot be shown as a form: Raw schema property 'who': type ['string', 'null'] is not allowed",
        ),
        (
            {"message": "Who?", "schema": {"type": "object", "properties": {"who": {"type": "string", "format": {}}}}},
            "The schema cannot be shown as a form: Raw schema property 'who': format {} is not one of",
        ),
        ({"message": "Who\ud800?", "schema": SCHEMA}, "message must be Unicode text: it has a lone surrogate"),
        (
            {
                "message": "Who?",
                "schema": {"type": "object", "properties": {"who": {"type": "string", "title": "\udfff"}}},
            },
            "The schema cannot be shown as a form: schema['properties']['who']['title'] must be Unicode text",
        ),
    ],
    ids=[
        "empty-message",
        "blank-message",
        "overlong-message",
        "type-list",
        "format-object",
        "surrogate-message",
        "surrogate-title",
    ],
)
async def test_an_agents_bad_message_or_schema_is_a_clear_tool_error_and_logs_no_traceback(
    mode: str, arguments: dict[str, Any], refusal: str, caplog: pytest.LogCaptureFixture
) -> None:
    server, channel = desk_server()
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("elicit", arguments)
    assert result.is_error
    assert refusal in text_of(result)
    assert channel.posted == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
