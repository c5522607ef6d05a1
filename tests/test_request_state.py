"""2026-07-28 retries: one-time `requestState`, bad input, and nothing resumed twice."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit import Accepted, Elicitation
from elicitkit.testing import ScriptedHuman, accept

pytestmark = pytest.mark.anyio


def two_question_server(**options: Any) -> tuple[MCPServer, Elicitation, list[str]]:
    server = MCPServer("state-server")
    hitl = Elicitation(server, **options)
    resumed: list[str] = []

    @server.tool()
    async def pair(ctx: Context) -> str:
        first = await hitl.text(ctx, "First?")
        resumed.append("first")
        second = await hitl.text(ctx, "Second?")
        resumed.append("second")
        assert isinstance(first, Accepted) and isinstance(second, Accepted)
        return f"{first.data}+{second.data}"

    return server, hitl, resumed


async def start(client: Client, tool: str = "pair", args: dict[str, Any] | None = None) -> InputRequiredResult:
    result = await client.session.call_tool(tool, args or {}, allow_input_required=True)
    assert isinstance(result, InputRequiredResult)
    return result


async def retry(
    client: Client, previous: InputRequiredResult, value: Any = "x", tool: str = "pair", **overrides: Any
) -> CallToolResult | InputRequiredResult:
    answers = {key: accept({"value": value}) for key in previous.input_requests or {}}
    params: dict[str, Any] = {"input_responses": answers, "request_state": previous.request_state} | overrides
    return await client.session.call_tool(tool, {}, allow_input_required=True, **params)


def connect(server: MCPServer) -> Client:
    return Client(server, mode="auto", elicitation_callback=ScriptedHuman())


async def test_a_used_request_state_is_refused_and_never_resumes_the_run_twice() -> None:
    server, hitl, resumed = two_question_server()
    async with connect(server) as client:
        first = await start(client)
        second = await retry(client, first, "a")
        assert isinstance(second, InputRequiredResult)
        with pytest.raises(MCPError, match="already used") as info:
            await retry(client, first, "b")
        assert info.value.error.data == {"reason": "request_state_reused"}
        final = await retry(client, second, "c")
    assert isinstance(final, CallToolResult)
    assert final.content == [TextContent(type="text", text="a+c")]
    assert resumed == ["first", "second"]
    assert hitl.active_runs == 0


async def test_a_request_state_of_a_finished_run_is_unknown() -> None:
    server, _, resumed = two_question_server()
    async with connect(server) as client:
        first = await start(client)
        second = await retry(client, first)
        assert isinstance(second, InputRequiredResult)
        assert isinstance(await retry(client, second), CallToolResult)
        with pytest.raises(MCPError, match="unknown or has expired") as info:
            await retry(client, second)
    assert info.value.error.data == {"reason": "unknown_elicitation"}
    assert resumed == ["first", "second"]


async def test_a_tampered_request_state_is_refused_and_resumes_nothing() -> None:
    server, _, resumed = two_question_server()
    async with connect(server) as client:
        first = await start(client)
        assert first.request_state is not None
        state = first.request_state
        forged = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await retry(client, first, request_state=forged)
        assert resumed == []
        # The genuine state still works: a forgery does not burn it.
        assert isinstance(await retry(client, first), InputRequiredResult)
    assert resumed == ["first"]


async def test_a_request_state_replayed_against_other_arguments_is_refused() -> None:
    server = MCPServer("state-server")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        await hitl.confirm(ctx, f"Deploy {version}?")
        return version

    async with connect(server) as client:
        first = await start(client, "deploy", {"version": "1"})
        answers = {key: accept({"value": True}) for key in first.input_requests or {}}
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "deploy",
                {"version": "2"},
                input_responses=answers,
                request_state=first.request_state,
                allow_input_required=True,
            )


async def test_malformed_input_responses_are_refused_without_burning_the_state() -> None:
    server, _, resumed = two_question_server()
    async with connect(server) as client:
        first = await start(client)
        key = next(iter(first.input_requests or {}))
        # The SDK client refuses to send malformed responses, so this one goes out raw, as a buggy client's would.
        raw = {"name": "pair", "arguments": {}, "inputResponses": {key: {"action": "maybe"}}}
        with pytest.raises(MCPError, match=r"inputResponses\[.*\] is not a valid elicitation result"):
            await client.session._dispatcher.send_raw_request("tools/call", raw | {"requestState": first.request_state})
        assert resumed == []
        assert isinstance(await retry(client, first), InputRequiredResult)
    assert resumed == ["first"]


async def test_unanswered_questions_are_asked_again_and_answers_bind_by_question_id() -> None:
    server = MCPServer("state-server")
    hitl = Elicitation(server)

    @server.tool()
    async def both(ctx: Context) -> str:
        got: dict[str, str] = {}

        async def ask(name: str) -> None:
            result = await hitl.text(ctx, name)
            assert isinstance(result, Accepted)
            got[name] = result.data

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "left")
            tg.start_soon(ask, "right")
        return f"{got['left']},{got['right']}"

    async with connect(server) as client:
        first = await start(client, "both")
        by_message = {r.params.message: key for key, r in (first.input_requests or {}).items()}
        assert set(by_message) == {"left", "right"}
        partial = await client.session.call_tool(
            "both",
            {},
            input_responses={by_message["right"]: accept({"value": "R"})},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(partial, InputRequiredResult)
        assert list(partial.input_requests or {}) == [by_message["left"]]
        final = await client.session.call_tool(
            "both",
            {},
            input_responses={by_message["left"]: accept({"value": "L"})},
            request_state=partial.request_state,
            allow_input_required=True,
        )
    assert isinstance(final, CallToolResult)
    assert final.content == [TextContent(type="text", text="L,R")]


async def test_a_run_whose_retry_never_comes_is_cancelled_and_freed_after_its_expiry() -> None:
    server = MCPServer("state-server")
    hitl = Elicitation(server, run_expiry=0.2)
    cancelled = anyio.Event()

    @server.tool()
    async def wait(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Still there?")
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "answered"

    async with connect(server) as client:
        first = await start(client, "wait")
        assert hitl.active_runs == 1
        with anyio.fail_after(5):
            await cancelled.wait()
        await anyio.wait_all_tasks_blocked()
        assert hitl.active_runs == 0
        assert hitl.pending_questions == 0
        with pytest.raises(MCPError, match="unknown or has expired"):
            await retry(client, first, True, tool="wait")
