"""elicitkit composed with fastmcp's own concepts: its auth, its session state and its proxy servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client, Context, FastMCP
from fastmcp.server import create_proxy
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit.fastmcp import adopt
from elicitkit.testing import ScriptedHuman, accept, decline
from tests.fastmcp.scenes import fastmcp_handler, serve
from tests.scenes import ERAS, pending_id, send_answer, settled, text_of

pytestmark = pytest.mark.anyio


# -- fastmcp's auth -------------------------------------------------------------------------------------------


def signed_in_server() -> tuple[FastMCP, Elicitation]:
    """A fastmcp server whose callers bring bearer tokens (fastmcp's own verifier), alice's and bob's."""
    users = {f"tok-{user}": {"client_id": "test-client", "sub": user, "scopes": []} for user in ("alice", "bob")}
    server = FastMCP("signed-in", auth=StaticTokenVerifier(tokens=users))
    hitl = Elicitation(server)

    @server.tool(output_schema=None)
    async def deploy(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "Deploy?")).action

    return server, hitl


@asynccontextmanager
async def as_user(url: str, user: str) -> AsyncIterator[SdkClient]:
    """A client without forms (the model answers through `sendElicitationResult`) carrying `user`'s token."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer tok-{user}"}) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode="auto") as client,
    ):
        yield client


async def test_with_fastmcp_s_auth_only_the_person_asked_can_answer() -> None:
    _, hitl = signed_in_server()
    async with serve(hitl) as url, as_user(url, "alice") as alice, as_user(url, "bob") as bob:
        elicit_id = pending_id(await alice.call_tool("deploy", {}))
        stolen = await send_answer(bob, elicit_id, "decline")
        assert stolen.is_error
        assert "no open question" in text_of(stolen)
        mine = await send_answer(alice, elicit_id, "accept", {"value": True})
    assert text_of(mine) == "accept"
    await settled(hitl)


async def test_with_fastmcp_s_auth_a_caller_without_a_token_is_refused_before_any_question() -> None:
    _, hitl = signed_in_server()
    async with serve(hitl) as url, httpx2.AsyncClient() as http:
        refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401
    assert hitl.active_runs == 0


# -- fastmcp's state ------------------------------------------------------------------------------------------


class Count(BaseModel):
    value: int


async def test_state_a_tool_sets_before_asking_is_there_after_the_answer_on_both_eras(mode: str) -> None:
    """On 2026-07-28 fastmcp's state lives per request; the body waits inside its first request, so it keeps it
    (a guard-pattern tool, run again per round, would not)."""
    server = FastMCP("stateful")
    hitl = Elicitation(server)

    @server.tool(output_schema=None)
    async def order(item: str, ctx: Context) -> str:
        await ctx.set_state("draft", {"item": item})
        await ctx.set_state("connection", object(), serializable=False)  # request-scoped, not serializable
        count = await hitl.elicit(ctx, f"How many {item}?", Count)
        draft, connection = await ctx.get_state("draft"), await ctx.get_state("connection")
        assert connection is not None
        return f"{draft['item']} x{count.data.value if isinstance(count, Accepted) else 0}"

    human = ScriptedHuman(accept({"value": 3}))
    async with Client(server, mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
        assert client.protocol_version == ERAS[mode]
        result = await client.call_tool("order", {"item": "apples"})
    assert text_of(result) == "apples x3"
    await settled(hitl)


# -- fastmcp's proxy servers ----------------------------------------------------------------------------------


def backend() -> tuple[FastMCP, Elicitation]:
    """The server that asks: a fastmcp tool written for fastmcp alone, adopted."""
    server = FastMCP("backend")
    hitl = adopt(server)

    @server.tool(output_schema=None)
    async def deploy(version: str, ctx: Context) -> str:
        result = await ctx.elicit(f"Deploy {version}?", bool)
        return f"{version}: {result.action} {getattr(result, 'data', None)}"

    return server, hitl


async def test_a_fastmcp_proxy_in_front_of_an_elicitkit_server_relays_its_questions_on_both_eras(mode: str) -> None:
    server, hitl = backend()
    proxy = create_proxy(server, name="front")
    human = ScriptedHuman(accept({"value": True}), decline())
    async with Client(proxy, mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
        assert client.protocol_version == ERAS[mode]
        first = await client.call_tool("deploy", {"version": "2.1"})
        second = await client.call_tool("deploy", {"version": "2.2"})
    assert text_of(first) == "2.1: accept True"
    assert text_of(second) == "2.2: decline None"
    assert [q.message for q in human.transcript] == ["Deploy 2.1?", "Deploy 2.2?"]
    await settled(hitl)


async def test_a_fastmcp_proxy_over_http_relays_an_elicitkit_server_s_questions_on_both_eras(mode: str) -> None:
    _, hitl = backend()
    human = ScriptedHuman(accept({"value": True}))
    async with serve(hitl) as url:
        proxy = create_proxy(url, name="front")
        async with Client(proxy, mode=mode, elicitation_handler=fastmcp_handler(human)) as client:
            result = await client.call_tool("deploy", {"version": "2.3"})
    assert text_of(result) == "2.3: accept True"
    await settled(hitl)
