"""The only module that touches fastmcp: its server, as elicitkit attaches to it, and its tool `Context`.

fastmcp 4 builds `FastMCP` on the SDK's low-level server (`FastMCP._mcp_server`),
so elicitkit attaches at the same depth as on the SDK's `MCPServer`: its
`tools/call` middleware joins the low-level middleware chain, inside fastmcp's
own root dispatch and the SDK's `requestState` boundary, and its run host wraps
the low-level lifespan (which fastmcp's in-memory client, its HTTP app and
`run()` all enter). fastmcp's own middleware still wraps every tool body.

Imported only when a fastmcp server or context is handed to elicitkit;
`import elicitkit` never imports fastmcp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastmcp import Context, FastMCP
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from starlette.applications import Starlette
from starlette.routing import Route

__all__ = ["FastMCPSeam", "request_context"]


class FastMCPSeam:
    """A `fastmcp.FastMCP` server."""

    framework = "fastmcp"

    def __init__(self, server: FastMCP[Any]) -> None:
        self.server = server

    @property
    def lowlevel(self) -> Server[Any]:
        return self.server._mcp_server  # pyright: ignore[reportPrivateUsage]

    def add_route(self, route: Route) -> None:
        methods = sorted(route.methods or ())
        self.server.custom_route(route.path, methods=methods, include_in_schema=False)(route.endpoint)

    def add_system_tool(self, fn: Callable[..., Any], *, name: str, description: str) -> None:
        self.server.tool(fn, name=name, description=description, output_schema=None)

    def http_app(self, **options: Any) -> Starlette:
        return self.server.http_app(**options)


def request_context(ctx: Context) -> ServerRequestContext[Any, Any]:
    """The SDK's request context behind a fastmcp tool's `Context`.

    fastmcp binds its own wrapper of the SDK's context for every request it
    handles; elicitkit needs the SDK's, which the wrapper keeps.

    Raises:
        RuntimeError: there is no request (a background task, or outside a tool call).
    """
    wrapper = ctx.request_context
    if wrapper is None:
        raise RuntimeError(
            "elicitkit can only ask from inside a tool call: this fastmcp Context has no request "
            "(fastmcp background tasks started with task=True are not supported yet)"
        )
    rctx: ServerRequestContext[Any, Any] = wrapper._srctx  # pyright: ignore[reportPrivateUsage]
    return rctx
