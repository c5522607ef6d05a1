"""`timeout=` reads like anyio and httpx, and every way of asking checks its arguments the same way."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, TextContent
from pydantic import BaseModel, SecretStr

from elicitkit import SERVER_DEFAULT, Accepted, Elicitation, ElicitationTimeout

pytestmark = pytest.mark.anyio


class Login(BaseModel):
    user: str
    password: SecretStr


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def slow_person(delay: float) -> Any:
    async def answer(context: Any, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep(delay)  # the person takes longer than the server's default allows
        return ElicitResult(action="accept", content={"value": True})

    return answer


async def test_timeout_none_waits_past_the_servers_default(mode: str) -> None:
    server = MCPServer("t")
    hitl = Elicitation(server, timeout=0.05)

    @server.tool()
    async def ask(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Go?", timeout=None)
        return "yes" if isinstance(result, Accepted) and result.data else "no"

    async with Client(server, mode=mode, elicitation_callback=slow_person(0.3)) as client:
        with anyio.fail_after(5):
            assert text(await client.call_tool("ask", {})) == "yes"


async def test_leaving_timeout_out_or_passing_server_default_uses_the_servers(mode: str) -> None:
    server = MCPServer("t")
    hitl = Elicitation(server, timeout=0.05)
    seen: list[str] = []

    @server.tool()
    async def ask(explicit: bool, ctx: Context) -> str:
        try:
            if explicit:
                await hitl.confirm(ctx, "Go?", timeout=SERVER_DEFAULT)
            else:
                await hitl.confirm(ctx, "Go?")
        except ElicitationTimeout as exc:
            seen.append(str(exc))
        return "done"

    async with Client(server, mode=mode, elicitation_callback=slow_person(1.0)) as client:
        with anyio.fail_after(5):
            await client.call_tool("ask", {"explicit": True})
            await client.call_tool("ask", {"explicit": False})
    assert seen == ["No answer to the elicitation within 0.05 seconds"] * 2


async def test_a_server_without_a_default_limit_offers_the_model_the_run_expiry(mode: str) -> None:
    server = MCPServer("t")
    hitl = Elicitation(server, timeout=None, run_expiry=120)

    @server.tool()
    async def ask(ctx: Context) -> str:
        await hitl.confirm(ctx, "Go?")
        return "done"

    async with Client(server, mode=mode) as client:  # no forms: the model asks
        before = time.time()
        pending = await client.call_tool("ask", {})
    assert pending.meta is not None
    expires = pending.meta["elicitationPending"]["expiresAt"] / 1000
    assert before + 100 < expires < time.time() + 121


@pytest.mark.parametrize("bad", [0, -1, float("nan"), True, "10"])
def test_the_server_refuses_a_timeout_that_is_not_a_positive_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds, or None"):
        Elicitation(MCPServer("t"), timeout=bad)


@pytest.mark.parametrize("option", ["run_expiry", "url_wait", "forward_timeout", "lease"])
def test_the_server_refuses_limits_that_cannot_be_none(option: str) -> None:
    with pytest.raises(ValueError, match=f"{option} must be a positive number of seconds, got None"):
        Elicitation(MCPServer("t"), **{option: None})


WAYS = ["elicit", "confirm", "elicit_url", "secure_form", "url_flow"]


async def ask_every_way(hitl: Elicitation, ctx: Context, way: str, message: Any, timeout: Any) -> Any:
    if way == "elicit":
        return await hitl.elicit(ctx, message, {"type": "object", "properties": {}}, timeout=timeout)
    if way == "confirm":
        return await hitl.confirm(ctx, message, timeout=timeout)
    if way == "elicit_url":
        return await hitl.elicit_url(ctx, message, "https://pay.example.com/42", timeout=timeout)
    if way == "secure_form":
        return await hitl.secure_form(ctx, message, Login, timeout=timeout)
    return await hitl.url_flow(ctx, message, lambda cb, state: f"https://idp.example.com/?s={state}", timeout=timeout)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(
    ("message", "timeout", "error"),
    [
        ("", SERVER_DEFAULT, "needs a non-empty message"),
        ("   ", SERVER_DEFAULT, "needs a non-empty message"),
        (None, SERVER_DEFAULT, "needs a non-empty message"),
        ("Go?", 0, "timeout must be a positive number"),
        ("Go?", -5, "timeout must be a positive number"),
        ("Go?", True, "timeout must be a positive number"),
    ],
)
async def test_every_way_of_asking_refuses_bad_arguments_before_sending_anything(
    mode: str, way: str, message: Any, timeout: Any, error: str
) -> None:
    server = MCPServer("t")
    hitl = Elicitation(server, public_url="http://127.0.0.1:1")
    refused: list[str] = []
    asked: list[ElicitRequestParams] = []

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="decline")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ask_every_way(hitl, ctx, way, message, timeout)
        except ValueError as exc:
            refused.append(str(exc))
        return "done"

    async with Client(server, mode=mode, elicitation_callback=person) as client:
        await client.call_tool("ask", {})
    assert len(refused) == 1 and error in refused[0]
    assert asked == []
    assert hitl.active_runs == 0


async def test_a_message_built_from_the_callers_text_that_cannot_be_sent_ends_the_call_saying_why(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A lone surrogate arrives as JSON's "\ud800" in an argument the tool puts in its question: the call ends as a
    # tool error that says why, never as an unexpected exception with a traceback in the server's log.
    server = MCPServer("t")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        answer = await hitl.confirm(ctx, f"Deploy {version}?")
        return answer.action

    async def nobody(context: Any, params: ElicitRequestParams) -> ElicitResult:
        raise AssertionError("nothing may be asked")

    with anyio.fail_after(10):
        async with Client(server, mode=mode, elicitation_callback=nobody) as client:
            result = await client.call_tool("deploy", {"version": "2.\ud8001"})
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text == (
        "Error executing tool deploy: An elicitation's message must be Unicode text: it has a lone surrogate"
    )
    assert not [r for r in caplog.records if r.exc_info is not None]
