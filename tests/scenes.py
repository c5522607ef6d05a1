"""Scenes the engine tests share: small servers whose tools record what they went through, and the ways in.

The servers and clients are real (the SDK's in-memory pipe, or uvicorn over
streamable HTTP through `elicitkit.testing`); only the people are scripted.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client import advertise
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp

from elicitkit import Accepted, Elicitation, ElicitationTimeout
from elicitkit._clients import APPS_EXTENSION, VIEW_MIME
from elicitkit.stores import MemoryBroker
from elicitkit.testing import ScriptedHuman, accept, serve_app, serve_http

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
APPS = advertise(APPS_EXTENSION, {"mimeTypes": [VIEW_MIME]})
"""What a host that renders MCP Apps declares (`Client(..., extensions=[APPS])`): elicitkit's view is shown to it."""
Transport = Literal["memory", "http"]


def text_of(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def assert_idle(hitl: Elicitation) -> None:
    assert hitl.active_runs == 0
    assert hitl.pending_questions == 0


async def settled(hitl: Elicitation) -> None:
    """Assert idle only once every task has had its turn: a cancelled body unwinds after its caller returns."""
    await anyio.wait_all_tasks_blocked()
    assert_idle(hitl)


async def reached(event: anyio.Event, within: float = 5) -> None:
    with anyio.fail_after(within):
        await event.wait()


def new_server(name: str = "t", **options: Any) -> tuple[MCPServer, Elicitation]:
    server = MCPServer(name)
    return server, Elicitation(server, **options)


# --- ways in -----------------------------------------------------------------------------------------


@asynccontextmanager
async def serving(hitl: Elicitation) -> AsyncIterator[str]:
    """Serve over real streamable HTTP (the server's own app: an `MCPServer`'s or a fastmcp server's), with
    elicitkit's own links pointing at it; yield the MCP URL."""
    async with serve_app(hitl.http_app()) as base:
        hitl.public_url = base
        yield f"{base}/mcp"


@asynccontextmanager
async def connect(server: MCPServer, transport: Transport, mode: str, **options: Any) -> AsyncIterator[Client]:
    """A client reaching `server` through the SDK's in-memory pipe or over real streamable HTTP."""
    if transport == "memory":
        async with Client(server, mode=mode, **options) as client:
            yield client
    else:
        async with serve_http(server) as url, Client(url, mode=mode, **options) as client:
            yield client


def mounted(server: MCPServer, under: str, app: ASGIApp) -> Starlette:
    """`app` mounted `under` a path in a parent app.

    Starlette never runs a mounted app's lifespan, so the parent's runs the server's sessions.
    """

    @asynccontextmanager
    async def lifespan(parent: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return Starlette(routes=[Mount(under, app=app)], lifespan=lifespan)


def by_hand(target: MCPServer | str) -> Client:
    """A 2026-07-28 client that declares forms while the test answers every round itself.

    Its person has no script: being asked at all fails the test.
    """
    return Client(target, mode="auto", elicitation_callback=ScriptedHuman())


@dataclass(frozen=True)
class Rounds:
    """One tool call on 2026-07-28 with its rounds driven by hand, through whichever client the test picks."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    async def start(self, client: Client) -> InputRequiredResult:
        result = await client.session.call_tool(self.tool, self.arguments, allow_input_required=True)
        assert isinstance(result, InputRequiredResult), result
        return result

    async def answer(
        self, client: Client, previous: InputRequiredResult, value: Any = None, **overrides: Any
    ) -> CallToolResult | InputRequiredResult:
        """Accept every question in `previous` with `value`; `overrides` replace the responses or the state."""
        responses = {key: accept({"value": value}) for key in previous.input_requests or {}}
        params: dict[str, Any] = {"input_responses": responses, "request_state": previous.request_state} | overrides
        return await client.session.call_tool(self.tool, self.arguments, allow_input_required=True, **params)


def pending_id(result: CallToolResult) -> str:
    """The elicitId of the question a result hands to the model, for a client that cannot show forms."""
    elicit_id: str = (result.meta or {})["elicitationPending"]["elicitId"]
    return elicit_id


async def send_answer(
    client: Client, elicit_id: str, action: str, content: dict[str, Any] | None = None
) -> CallToolResult:
    """Answer as the model does for such a client: through the system tool, under its default name."""
    answer: dict[str, Any] = {"elicitId": elicit_id, "action": action}
    if content is not None:
        answer["content"] = content
    return await client.call_tool("sendElicitationResult", answer)


def in_view(result: CallToolResult) -> dict[str, Any] | None:
    """The question a result hands elicitkit's view in the chat (what the view reads), or None."""
    pending = (result.structured_content or {}).get("elicitationPending")
    return pending if isinstance(pending, dict) and "answerTool" in pending else None


async def answer_in_view(
    client: Client, result: CallToolResult, action: str, content: dict[str, Any] | None = None
) -> CallToolResult:
    """Answer the question `result` hands the view, as the view does: `tools/call` of the tool it names."""
    pending = in_view(result)
    assert pending is not None, f"no question for the view in {result}"
    return await _answer(client, pending["answerTool"], pending["elicitId"], action, content)


async def call_through_view(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    person: Callable[[Any, ElicitRequestParams], Awaitable[ElicitResult]],
) -> CallToolResult:
    """Call a tool from a host that renders elicitkit's view and shows no elicitation forms: each question it hands
    the view is put to `person` (an elicitation callback), whose reply the view sends through the tool it names;
    a question handed to the model (a link: links never go through the host) the model relays, through the tool
    its instructions name. Returns the first result that asks nothing more."""
    result = await client.call_tool(name, arguments)
    while isinstance(pending := (result.structured_content or {}).get("elicitationPending"), dict):
        params = ElicitRequestFormParams(message=pending["message"], requested_schema=pending["schema"])
        reply = await person(None, params)
        tool = pending.get("answerTool")
        if tool is None:
            named = re.search(r"call the tool `([^`]+)`", pending["instructions"])
            assert named is not None, pending["instructions"]
            tool = named[1]
        result = await _answer(client, tool, pending["elicitId"], reply.action, reply.content)
    return result


async def _answer(
    client: Client, tool: str, elicit_id: str, action: str, content: dict[str, Any] | None
) -> CallToolResult:
    answer: dict[str, Any] = {"elicitId": elicit_id, "action": action}
    if content is not None:
        answer["content"] = content
    return await client.call_tool(tool, answer)


# --- servers -----------------------------------------------------------------------------------------

Question = Callable[[Elicitation, Context], Awaitable[object]]


@dataclass(frozen=True)
class Watched:
    """A server whose tool `ask` puts one question and records how the wait ended."""

    server: MCPServer
    hitl: Elicitation
    timed_out: anyio.Event
    cancelled: anyio.Event


def watched_server(question: Question, server: MCPServer | None = None, **options: Any) -> Watched:
    """`ask` returns "answered" or "timed out after N"; a cancellation is recorded, then goes on unwinding."""
    server = server or MCPServer("t")
    scene = Watched(server, Elicitation(server, **options), anyio.Event(), anyio.Event())

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await question(scene.hitl, ctx)
        except ElicitationTimeout as exc:
            scene.timed_out.set()
            return f"timed out after {exc.timeout}"
        except anyio.get_cancelled_exc_class():
            scene.cancelled.set()
            raise
        return "answered"

    return scene


def two_step_server() -> tuple[MCPServer, Elicitation, dict[str, int]]:
    """A tool `ship` that asks twice; `counts` records how often each stretch of its body ran."""
    server, hitl = new_server("two-step")
    counts = {"started": 0, "after_first": 0, "finished": 0}

    @server.tool()
    async def ship(version: str, ctx: Context) -> str:
        counts["started"] += 1
        first = await hitl.confirm(ctx, f"Ship {version}?")
        counts["after_first"] += 1
        second = await hitl.text(ctx, "Release note?")
        counts["finished"] += 1
        assert isinstance(first, Accepted)
        assert isinstance(second, Accepted)
        return f"{version} shipped={first.data} note={second.data}"

    return server, hitl, counts


class SharedBroker:
    """An in-process broker that nodes share, as they share Redis pub/sub (a `MemoryBroker` counts as one
    node's own, so a node given one reaches nobody)."""

    def __init__(self) -> None:
        self._inner = MemoryBroker()

    async def publish(self, channel: str, message: bytes) -> int:
        return await self._inner.publish(channel, message)

    def listen(self, channel: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        return self._inner.listen(channel)

    async def aclose(self) -> None:
        """Each node closes its broker when done; the shared one outlives them all."""
