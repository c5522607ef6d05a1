"""Scenes for elicitkit on a fastmcp server: the server, and the two clients that drive it.

`fastmcp` drives it with fastmcp's own `Client` through its in-memory
transport (`mode="legacy"` speaks 2025-11-25, `mode="auto"` negotiates
2026-07-28, fastmcp's default); `sdk-http` drives it with the SDK's `Client`
over real streamable HTTP (uvicorn on 127.0.0.1, fastmcp's own HTTP app).
The people are `elicitkit.testing.ScriptedHuman`s, as in the SDK scenes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import mcp
from fastmcp import Client, Context, FastMCP
from mcp_types import CallToolResult, ElicitRequestParams

from elicitkit import Elicitation
from elicitkit.testing import ScriptedHuman, serve_app


class Caller(Protocol):
    protocol_version: str | None
    client: Any
    """The client itself: fastmcp's `Client` or the SDK's."""

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult: ...


FASTMCP_MODERN_ERROR = "elicitation via server-initiated requests is unavailable on 2026-07-28 connections."
"""What fastmcp's own `ctx.elicit` raises on a 2026-07-28 connection (as a `ToolError`)."""


def new_server(name: str = "t", **options: Any) -> tuple[FastMCP, Elicitation]:
    server = FastMCP(name)
    return server, Elicitation(server, **options)


def unmodified_server(name: str = "plain") -> FastMCP:
    """A tool written for fastmcp alone: `deploy` asks with fastmcp's own `ctx.elicit` and says what came back."""
    server = FastMCP(name)

    @server.tool
    async def deploy(ctx: Context) -> str:
        result = await ctx.elicit("Deploy?", bool)
        return f"{type(result).__name__} {result.action} {getattr(result, 'data', None)}"

    return server


def fastmcp_handler(human: ScriptedHuman) -> Any:
    """fastmcp's `elicitation_handler` shape around a scripted person: it answers with the `ElicitResult` as given."""

    async def handler(message: str, response_type: Any, params: ElicitRequestParams, context: Any) -> Any:
        return await human(context, params)

    return handler


class _FastMCPCaller:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.protocol_version = client.protocol_version

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        return await self.client.call_tool(tool, arguments or {}, raise_on_error=False)


class _SdkCaller:
    def __init__(self, client: mcp.Client) -> None:
        self.client = client
        self.protocol_version = client.protocol_version

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return await self.client.call_tool(tool, arguments or {})


@asynccontextmanager
async def serve(hitl: Elicitation) -> AsyncIterator[str]:
    """The fastmcp server's own HTTP app (`hitl.http_app()`) on a free port; yield its MCP URL."""
    async with serve_app(hitl.http_app()) as base:
        hitl.public_url = base
        yield f"{base}/mcp"


@asynccontextmanager
async def connect(hitl: Elicitation, driver: str, mode: str, human: ScriptedHuman | None) -> AsyncIterator[Caller]:
    """A client of `hitl`'s fastmcp server (`driver` is `fastmcp` or `sdk-http`); without `human` it declares no
    elicitation (the model fallback)."""
    if driver == "fastmcp":
        handler = fastmcp_handler(human) if human is not None else None
        async with Client(hitl.server, mode=mode, elicitation_handler=handler, input_required_max_rounds=50) as client:
            yield _FastMCPCaller(client)
    else:
        async with (
            serve(hitl) as url,
            mcp.Client(url, mode=mode, elicitation_callback=human, input_required_max_rounds=50) as client,
        ):
            yield _SdkCaller(client)
