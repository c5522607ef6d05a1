"""pmcp's result semantics, rewritten with elicitkit, give the same wire results.

pmcp (the Rust SDK) hands a tool the client's `ElicitResult` as it came (`action`, and `content` only for an
accepted form), and a tool answers with a `ToolOutput`: `Payload` (a value, shaped into the result by the
server) or `Result` (a whole `CallToolResult`, sent verbatim). In elicitkit the first is `Accepted` /
`Declined` / `Cancelled` (`.status` is the wire's `action`; `.content` the accepted form as it came), the
second a plain return value or a returned `CallToolResult`. Both eras, and through the model fallback.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, TextContent

from elicitkit import Accepted, Elicitation
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.test_output import as_json

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 3}, "kind": {"type": "string", "enum": ["lib", "cli"]}},
    "required": ["name"],
}


def configure_server() -> MCPServer:
    """pmcp's interactive configuration example: a raw JSON Schema form, the `ElicitResult` echoed back."""
    server = MCPServer("pmcp-examples")
    hitl = Elicitation(server, timeout=10)

    @server.tool()
    async def configure(ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit(ctx, "Configure the project", SCHEMA)
        wire: dict[str, Any] = {"action": result.status}
        if isinstance(result, Accepted):
            wire["content"] = result.content
        return wire

    return server


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (accept({"name": "widget"}), {"action": "accept", "content": {"name": "widget"}}),
        (accept({"name": "widget", "kind": "cli"}), {"action": "accept", "content": {"name": "widget", "kind": "cli"}}),
        (decline(), {"action": "decline"}),
        (cancel(), {"action": "cancel"}),
    ],
    ids=["accept", "accept-all", "decline", "cancel"],
)
async def test_the_elicit_result_reaches_the_tool_as_the_client_sent_it(
    mode: str, reply: ElicitResult, expected: dict[str, Any]
) -> None:
    async with Client(configure_server(), mode=mode, elicitation_callback=ScriptedHuman(reply)) as client:
        result = await client.call_tool("configure", {})
    assert result.structured_content == expected


async def test_content_sent_with_a_decline_never_reaches_the_tool(mode: str) -> None:
    """The spec (and pmcp) carry content only with an accept: a decline's stray content is not the person's answer."""

    async def stray(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="decline", content={"name": "widget"})

    async with Client(configure_server(), mode=mode, elicitation_callback=stray) as client:
        result = await client.call_tool("configure", {})
    assert result.structured_content == {"action": "decline"}


async def test_a_url_accept_carries_no_content(mode: str) -> None:
    server = MCPServer("pmcp-examples")
    hitl = Elicitation(server, timeout=10)

    @server.tool()
    async def authorize(ctx: Context) -> dict[str, Any]:
        result = await hitl.elicit_url(ctx, "Authorize", "https://auth.example/start")
        return {"action": result.status, "content": result.content if isinstance(result, Accepted) else None}

    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(accept())) as client:
        result = await client.call_tool("authorize", {})
    assert result.structured_content == {"action": "accept", "content": {}}


VERBATIM = CallToolResult(
    content=[TextContent(type="text", text="Not configured: the user declined")],
    structured_content={"configured": False},
    is_error=True,
    _meta={"example.com/audit": {"step": "configure"}},
)


def output_server(*, with_elicitkit: bool) -> MCPServer:
    """pmcp's two `ToolOutput`s: `Payload` when the person accepts, `Result` (sent verbatim) when not."""
    server = MCPServer("pmcp-output")
    hitl = Elicitation(server, timeout=10) if with_elicitkit else None

    @server.tool()
    async def configure(accepted: bool, ctx: Context) -> Any:
        if hitl is not None:
            accepted = (await hitl.confirm(ctx, "Configure?")).status == "accept"
        if accepted:
            return {"configured": True}  # ToolOutput::Payload
        return VERBATIM  # ToolOutput::Result

    if hitl is not None:  # hooks registered: they must not reach either output
        hitl.before_answer(lambda question, result: None)
        hitl.after_answer(lambda question, outcome: None)
    return server


@pytest.mark.parametrize("accepted", [True, False], ids=["payload", "result"])
async def test_a_payload_and_a_whole_result_go_out_as_the_bare_sdk_sends_them(mode: str, accepted: bool) -> None:
    async with Client(output_server(with_elicitkit=False), mode=mode) as bare:
        reference = as_json(await bare.call_tool("configure", {"accepted": accepted}))
    reply = accept({"value": True}) if accepted else decline()
    async with Client(output_server(with_elicitkit=True), mode=mode, elicitation_callback=ScriptedHuman(reply)) as c:
        native = as_json(await c.call_tool("configure", {"accepted": not accepted}))
    async with Client(output_server(with_elicitkit=True), mode=mode) as client:
        through_model = as_json(
            await call_through_model(client, "configure", {"accepted": not accepted}, ScriptedHuman(reply))
        )
    assert native == reference
    assert through_model == reference
