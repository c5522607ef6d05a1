"""The `elicit` tool: an agent asks a person through a channel and reads mcp.do's results, on both eras.

Every outcome is checked on both eras, in memory and over streamable HTTP: the
text byte for byte, `isError` (true for decline, cancel and timeout, as on
mcp.do) and the structured content.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from elicitkit import SERVER_DEFAULT, Ask, Elicitation, QuestionInfo
from elicitkit.channels.base import Responder, Via
from elicitkit.testing import serve_http
from tests.channels.recording import RecordingChannel
from tests.scenes import Transport, connect, text_of

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string", "maxLength": 20}},
    "required": ["approved"],
}
APPROVER = Responder("slack", "U1")


def desk_server(
    channels: tuple[str, ...] = ("slack",), server: MCPServer | None = None, **install: Any
) -> tuple[MCPServer, RecordingChannel, Elicitation]:
    server = server or MCPServer("agent-desk")
    recording = [RecordingChannel(name) for name in channels]
    hitl = Elicitation(server, channels=recording)
    targets = {"slack": "#approvals", "discord": "1234", "teams": "19:approvals"}
    destinations = {name: Via(name, targets[name], frozenset({"U1"})) for name in channels if name in targets}
    hitl.install_elicit_tool(destinations, **install)
    return server, recording[0], hitl


@asynccontextmanager
async def calling(
    server: MCPServer, mode: str, arguments: dict[str, Any], transport: Transport = "memory"
) -> AsyncIterator[dict[str, Any]]:
    """Call `elicit` in the background; the yielded dict gets the result once the block's answers land."""
    got: dict[str, Any] = {}
    async with connect(server, transport, mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            got["result"] = await client.call_tool("elicit", arguments)

        tg.start_soon(call)
        yield got


async def answered(
    server: MCPServer,
    channel: RecordingChannel,
    mode: str,
    transport: Transport,
    action: str,
    content: dict[str, Any] | None = None,
    reason: str | None = None,
) -> CallToolResult:
    """The tool's result once the approver answers on the channel with `action`."""
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}, transport) as got:
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        verdict = await channel.desk.reply(prompt.token, APPROVER, action, content, reason=reason)
        assert verdict.ok, verdict
    result: CallToolResult = got["result"]
    return result


# -- the tool as listed ------------------------------------------------------------------------------


async def test_the_elicit_tool_is_listed_with_mcp_dos_description_and_input(mode: str) -> None:
    server, _, _ = desk_server()
    async with Client(server, mode=mode) as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "elicit")
    assert tool.description == "Request structured input from user via Human Functions"
    properties = tool.input_schema["properties"]
    assert list(properties) == ["message", "schema", "uiType"]
    assert tool.input_schema["required"] == ["message", "schema"]
    assert properties["message"]["description"] == "Message explaining what information is needed"
    assert properties["schema"]["description"] == "JSON Schema for requested data (flat object only)"
    assert {k: v for k, v in properties["uiType"].items() if k != "title"} == {
        "type": "string",
        "enum": ["slack"],
        "default": "slack",
        "description": "UI platform to use (default: slack)",
    }


@pytest.mark.parametrize(
    ("installed", "enum", "default"),
    [
        (("web", "teams", "slack", "discord"), ["slack", "discord", "teams", "web"], "slack"),
        (("web", "discord"), ["discord", "web"], "discord"),
        (("web",), ["web"], "web"),
    ],
)
async def test_ui_type_is_an_enum_of_the_installed_channels_in_mcp_dos_order_and_slack_leads(
    installed: tuple[str, ...], enum: list[str], default: str
) -> None:
    server, _, _ = desk_server(installed)
    async with Client(server, mode="auto") as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "elicit")
    ui_type = tool.input_schema["properties"]["uiType"]
    assert ui_type["enum"] == enum
    assert ui_type["description"] == f"UI platform to use (default: {default})"


async def test_a_call_without_ui_type_asks_on_the_default_channel(mode: str) -> None:
    server = MCPServer("agent-desk")
    slack, web = RecordingChannel("slack"), RecordingChannel("web")
    hitl = Elicitation(server, channels=[web, slack])
    hitl.install_elicit_tool({"slack": Via("slack", "#approvals"), "web": Via("web", "")})
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}):
        prompt = await slack.next_post(1)
        assert (prompt.target, web.posted) == ("#approvals", [])
        assert slack.desk is not None
        await slack.desk.reply(prompt.token, APPROVER, "cancel", None)


# -- the outcomes, as mcp.do writes them -------------------------------------------------------------


async def test_an_answer_comes_back_as_user_provided_json_without_spaces(mode: str, transport: Transport) -> None:
    server, channel, _ = desk_server()
    content = {"approved": True, "note": 'café "now"'}
    result = await answered(server, channel, mode, transport, "accept", content)
    assert text_of(result) == 'User provided: {"approved":true,"note":"café \\"now\\""}'
    assert result.structured_content == {"action": "accept", "content": content}
    assert not result.is_error


async def test_a_decline_with_the_persons_reason_reads_user_declined_reason_and_is_an_error(
    mode: str, transport: Transport
) -> None:
    server, channel, _ = desk_server()
    result = await answered(server, channel, mode, transport, "decline", reason="  Not during the freeze  ")
    assert text_of(result) == "User declined: Not during the freeze"
    assert result.structured_content == {"action": "decline", "reason": "Not during the freeze"}
    assert result.is_error
    (closing,) = await channel.closings(1)
    assert closing.text == "Declined by U1: Not during the freeze"


async def test_a_decline_without_a_reason_is_an_error_too(mode: str, transport: Transport) -> None:
    server, channel, _ = desk_server()
    result = await answered(server, channel, mode, transport, "decline", reason=" ")
    assert text_of(result) == "User declined: the user declined"
    assert result.structured_content == {"action": "decline", "reason": "the user declined"}
    assert result.is_error


async def test_a_cancel_reads_user_canceled_request_canceled_and_is_an_error(mode: str, transport: Transport) -> None:
    server, channel, _ = desk_server()
    result = await answered(server, channel, mode, transport, "cancel")
    assert text_of(result) == "User canceled: Request canceled"
    assert result.structured_content == {"action": "cancel", "reason": "cancelled"}
    assert result.is_error


async def test_no_answer_in_time_reads_user_canceled_request_timed_out_and_is_an_error(
    mode: str, transport: Transport
) -> None:
    server, channel, _ = desk_server(timeout=0.6)
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}, transport) as got:
        await channel.next_post(1)
    result: CallToolResult = got["result"]
    assert text_of(result) == "User canceled: Request timed out after 0.01 minutes"
    assert result.structured_content == {"action": "cancel", "reason": "timeout"}
    assert result.is_error
    assert [c.outcome for c in await channel.closings(1)] == ["expired"]


async def test_a_reason_that_is_too_long_or_not_text_is_refused_and_the_question_stays_open(mode: str) -> None:
    server, channel, _ = desk_server()
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}) as got:
        prompt = await channel.next_post(1)
        assert channel.desk is not None
        long = await channel.desk.reply(prompt.token, APPROVER, "decline", None, reason="x" * 1001)
        assert (long.status, long.message) == (
            "invalid",
            "A reason for declining may have at most 1,000 characters, not 1,001",
        )
        broken = await channel.desk.reply(prompt.token, APPROVER, "decline", None, reason="no\ud800")
        assert broken.status == "invalid"
        assert "lone surrogate" in broken.message
        assert (await channel.desk.reply(prompt.token, APPROVER, "decline", None, reason="x" * 1000)).ok
    assert text_of(got["result"]) == "User declined: " + "x" * 1000


# -- how long a person has, by caller ----------------------------------------------------------------


class Tokens:
    async def verify_token(self, token: str) -> AccessToken | None:
        if token != "tok-alice":
            return None
        return AccessToken(token=token, client_id="agent", scopes=[], subject="alice")


def authed_server() -> MCPServer:
    return MCPServer(
        "agent-desk",
        auth=AuthSettings(
            issuer_url="https://auth.example.com",
            resource_server_url="http://127.0.0.1/mcp",
            validate_token_resource=False,  # the test verifier vouches for its own tokens
        ),
        token_verifier=Tokens(),
    )


@asynccontextmanager
async def as_caller(url: str, mode: str, token: str | None) -> AsyncIterator[Client]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


async def timed_out_text(server: MCPServer, channel: RecordingChannel, mode: str, token: str | None) -> str:
    """The tool's text when nobody answers the caller holding `token` (None: anonymous)."""
    async with serve_http(server) as url, as_caller(url, mode, token) as client:
        result = await client.call_tool("elicit", {"message": "Ship it?", "schema": SCHEMA})
    assert result.is_error
    return text_of(result)


@pytest.mark.parametrize("token", [None, "tok-alice"], ids=["anonymous", "authenticated"])
async def test_anonymous_and_authenticated_callers_get_their_own_time_as_on_mcp_do(
    mode: str, token: str | None
) -> None:
    # An anonymous caller reaches a server without auth; an authenticated one brings its bearer token.
    server = authed_server() if token else None
    server, channel, _ = desk_server(server=server, timeout={"anonymous": 0.6, "authenticated": 1.2})
    minutes = "0.02" if token else "0.01"
    assert (
        await timed_out_text(server, channel, mode, token)
        == f"User canceled: Request timed out after {minutes} minutes"
    )


async def test_a_timeout_function_decides_by_the_callers_principal(mode: str) -> None:
    seen: list[str | None] = []

    def by_caller(principal: str | None) -> float:
        seen.append(principal)
        return 0.6 if principal is None else 1.2

    server, channel, _ = desk_server(server=authed_server(), timeout=by_caller)
    assert await timed_out_text(server, channel, mode, "tok-alice") == (
        "User canceled: Request timed out after 0.02 minutes"
    )
    (principal,) = seen  # as `hitl.principal(ctx)` and hooks' `question.principal` report it
    assert principal is not None
    assert json.loads(principal)[-1] == "alice"


@pytest.mark.parametrize(("token", "minutes"), [(None, 3), ("tok-alice", 5)], ids=["anonymous", "authenticated"])
async def test_mcp_dos_three_and_five_minutes_are_the_default(mode: str, token: str | None, minutes: int) -> None:
    server, channel, _ = desk_server(server=authed_server() if token else None)
    async with serve_http(server) as url, as_caller(url, mode, token) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "elicit", {"message": "Ship it?", "schema": SCHEMA})
        prompt = await channel.next_post(1)
        assert prompt.expires_at - time.time() == pytest.approx(minutes * 60, abs=5)
        assert channel.desk is not None
        await channel.desk.reply(prompt.token, APPROVER, "cancel", None)


async def test_a_before_ask_hook_gives_the_person_another_time_and_the_text_says_so(
    mode: str, transport: Transport
) -> None:
    server, channel, hitl = desk_server(timeout=60)

    @hitl.before_ask(tools=["elicit"])
    def quicker(question: QuestionInfo) -> Ask:
        return Ask(timeout=1.2)

    del quicker
    async with calling(server, mode, {"message": "Ship it?", "schema": SCHEMA}, transport) as got:
        await channel.next_post(1)
    assert text_of(got["result"]) == "User canceled: Request timed out after 0.02 minutes"


@pytest.mark.parametrize(
    ("timeout", "error"),
    [
        ({"anonymous": 180, "everyone": 300}, 'takes the keys "anonymous" and "authenticated", not \'everyone\''),
        ({"anonymous": -1}, "timeout['anonymous'] must be a positive number of seconds"),
        (0, "timeout must be a positive number of seconds"),
    ],
)
def test_a_bad_timeout_fails_at_install(timeout: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error.replace("[", "\\[").replace("]", "\\]")):
        desk_server(timeout=timeout)


async def test_server_default_gives_everyone_the_servers_timeout() -> None:
    server = MCPServer("agent-desk")
    channel = RecordingChannel("slack")
    hitl = Elicitation(server, channels=[channel], timeout=0.6)
    hitl.install_elicit_tool({"slack": Via("slack", "#a")}, timeout=SERVER_DEFAULT)
    async with calling(server, "auto", {"message": "Ship it?", "schema": SCHEMA}) as got:
        await channel.next_post(1)
    assert text_of(got["result"]) == "User canceled: Request timed out after 0.01 minutes"


async def test_an_answer_that_breaks_the_schema_is_refused_and_the_question_stays_open(mode: str) -> None:
    server, channel, _ = desk_server()
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
    server, channel, _ = desk_server()
    nested = {"type": "object", "properties": {"who": {"type": "object", "properties": {}}}}
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("elicit", {"message": "Who?", "schema": nested})
    assert result.is_error
    assert text_of(result).startswith("The schema cannot be shown as a form: ")
    assert "who" in text_of(result)
    assert channel.posted == []


async def test_a_ui_type_the_server_does_not_offer_is_refused(mode: str) -> None:
    server, _, _ = desk_server()
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
    server, channel, _ = desk_server()
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("elicit", arguments)
    assert result.is_error
    assert refusal in text_of(result)
    assert channel.posted == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
