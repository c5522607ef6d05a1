"""Bugs found in review, each pinned by the behaviour users rely on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent

from elicitkit import Elicitation
from elicitkit.testing import ScriptedHuman, accept

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def stateless_lifespan(server: Any) -> AsyncIterator[None]:
    yield  # setup/teardown only: every client gets the same (None) lifespan state


async def test_one_client_leaving_does_not_cancel_another_clients_run() -> None:
    server = MCPServer("t", lifespan=stateless_lifespan)
    Elicitation(server)
    started, release, b_up, b_leave, b_gone, a_done = (anyio.Event() for _ in range(6))
    results: list[CallToolResult] = []

    @server.tool()
    async def work(ctx: Context) -> str:
        started.set()
        await release.wait()
        return "done"

    async def client_b() -> None:
        async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()):
            b_up.set()
            await b_leave.wait()
        b_gone.set()

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()) as a:

        async def call() -> None:
            results.append(await a.call_tool("work", {}))
            a_done.set()

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client_b)
                await b_up.wait()
                tg.start_soon(call)
                await started.wait()
                b_leave.set()
                await b_gone.wait()
                release.set()
                await a_done.wait()
    assert [c.text for c in results[0].content if isinstance(c, TextContent)] == ["done"]


async def test_a_retry_racing_the_runs_expiry_gets_a_clear_error_instead_of_hanging() -> None:
    server = MCPServer("t")
    hitl = Elicitation(server, run_expiry=0.1)
    unwinding, release = anyio.Event(), anyio.Event()

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Go?")
        finally:
            unwinding.set()
            with anyio.CancelScope(shield=True):
                await release.wait()  # cleanup that awaits, e.g. releasing a lock
        return "done"

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        first = await client.session.call_tool("ask", {}, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        answers = {key: accept({"value": True}) for key in first.input_requests or {}}
        with anyio.fail_after(5):
            await unwinding.wait()
            with pytest.raises(MCPError, match="ended before finishing") as info:
                await client.session.call_tool(
                    "ask", {}, input_responses=answers, request_state=first.request_state, allow_input_required=True
                )
            release.set()
    assert info.value.error.data == {"reason": "elicitation_ended"}


async def test_a_second_elicitation_on_the_same_server_is_refused() -> None:
    server = MCPServer("t")
    Elicitation(server)
    with pytest.raises(ValueError, match="already has an Elicitation attached"):
        Elicitation(server)


async def test_runs_are_freed_when_the_sdks_request_state_ttl_runs_out() -> None:
    server = MCPServer("t", request_state_security=RequestStateSecurity.ephemeral(ttl=0.2))
    hitl = Elicitation(server)  # run_expiry defaults to 600 s, capped at the SDK's 0.2 s
    cancelled = anyio.Event()

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await hitl.confirm(ctx, "Go?")
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "done"

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        await client.session.call_tool("ask", {}, allow_input_required=True)
        with anyio.fail_after(5):
            await cancelled.wait()
        await anyio.wait_all_tasks_blocked()
        assert hitl.active_runs == 0
        assert hitl.pending_questions == 0


async def test_a_sibling_that_awaits_before_asking_still_joins_the_same_round() -> None:
    server = MCPServer("t")
    hitl = Elicitation(server)

    @server.tool()
    async def both(ctx: Context) -> str:
        async def late() -> None:
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            await hitl.confirm(ctx, "Late?")

        async with anyio.create_task_group() as tg:
            tg.start_soon(hitl.confirm, ctx, "Early?")
            tg.start_soon(late)
        return "done"

    async with Client(server, mode="auto", elicitation_callback=ScriptedHuman()) as client:
        first = await client.session.call_tool("both", {}, allow_input_required=True)
    assert isinstance(first, InputRequiredResult)
    assert sorted(r.params.message for r in (first.input_requests or {}).values()) == ["Early?", "Late?"]
