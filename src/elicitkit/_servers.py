"""The server seam: what elicitkit needs from a server framework built on the SDK's low-level server.

Both the SDK's `MCPServer` and fastmcp's `FastMCP` keep the SDK's low-level
`Server` underneath (its middleware chain, lifespan and extensions), which is
where elicitkit attaches. They differ only in how a tool or an HTTP route is
added and how the ASGI app is built; each framework's side is one small class.
fastmcp's lives in `elicitkit._fastmcp` and is imported only for a fastmcp server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from elicitkit import _mcp
from elicitkit._web.limits import guard_endpoint

__all__ = ["ServerSeam", "seam_for"]


class ServerSeam(Protocol):
    """One server, as elicitkit attaches to it."""

    @property
    def lowlevel(self) -> Server[Any]:
        """The SDK's low-level server: its middleware, lifespan and extensions."""
        ...

    def add_route(self, route: Route) -> None:
        """Serve `route` next to the MCP endpoint of the server's own HTTP app."""
        ...

    def add_system_tool(self, fn: Callable[..., Any], *, name: str, description: str) -> None:
        """Register one of elicitkit's own tools, written as for `MCPServer`, with unstructured results; its
        parameter `ctx` (if it has one) receives the framework's own `Context`."""
        ...

    def add_raw_tool(
        self,
        handler: _mcp.RawHandler,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Register `handler` as the tool `name`, advertising `input_schema` (and `output_schema`) as given.

        Raises:
            ValueError: the server already has a tool of that name.
        """
        ...

    def add_view(self, uri: str, *, name: str, mime_type: str, meta: dict[str, Any], html: Callable[[], str]) -> None:
        """Serve the HTML document `html()` from `resources/read` as the resource `uri` (an MCP Apps view)."""
        ...

    def http_app(self, **options: Any) -> Starlette:
        """The server's streamable-HTTP ASGI app."""
        ...

    def default_session_idle_timeout(self, seconds: float | None) -> None:
        """Make `seconds` the idle timeout of the 2025-11-25 sessions the server's HTTP app keeps, unless the
        server's own settings or the caller building the app say otherwise."""
        ...

    def guard_http_bodies(self, guard: Callable[[ASGIApp, str], ASGIApp]) -> None:
        """Pass the requests of the MCP endpoint of every HTTP app the server builds through `guard(app, path)`."""
        ...

    def run_tasks(self) -> Callable[[str], bool]:
        """Take over running the server's background tasks (elicitkit's MCP tasks run them); return whether the
        tool `name` was declared to run as one."""
        ...


class SdkSeam:
    """The SDK's `MCPServer`."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server

    @property
    def lowlevel(self) -> Server[Any]:
        return _mcp.lowlevel(self.server)

    def add_route(self, route: Route) -> None:
        methods = sorted(route.methods or ())
        self.server.custom_route(route.path, methods=methods, include_in_schema=False)(route.endpoint)

    def add_system_tool(self, fn: Callable[..., Any], *, name: str, description: str) -> None:
        self.server.add_tool(fn, name=name, description=description, structured_output=False)

    def add_raw_tool(
        self,
        handler: _mcp.RawHandler,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        _mcp.add_raw_tool(
            self.server,
            handler,
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            title=title,
            annotations=annotations,
            meta=meta,
        )

    def add_view(self, uri: str, *, name: str, mime_type: str, meta: dict[str, Any], html: Callable[[], str]) -> None:
        def read() -> str:  # a plain function: the framework inspects what it registers
            return html()

        self.server.resource(uri, name=name, mime_type=mime_type, meta=meta)(read)

    def http_app(self, **options: Any) -> Starlette:
        return self.server.streamable_http_app(**options)

    def default_session_idle_timeout(self, seconds: float | None) -> None:
        _mcp.default_session_idle_timeout(self.server, seconds)

    def guard_http_bodies(self, guard: Callable[[ASGIApp, str], ASGIApp]) -> None:
        _mcp.on_http_app(self.server, lambda app, path: guard_endpoint(app, path, guard))

    def run_tasks(self) -> Callable[[str], bool]:
        return _no_task_tools  # `MCPServer` tools have no task flag: any may run as a task when a client asks


def _no_task_tools(name: str) -> bool:
    return False


def seam_for(server: object) -> ServerSeam:
    """The seam for an `MCPServer` or a `fastmcp.FastMCP`.

    Raises:
        TypeError: `server` is neither.
    """
    if isinstance(server, MCPServer):
        return SdkSeam(server)
    # A FastMCP instance exists only if fastmcp was imported: look it up without importing it.
    fastmcp = sys.modules.get("fastmcp")
    if fastmcp is not None and isinstance(server, fastmcp.FastMCP):
        from elicitkit._fastmcp import FastMCPSeam

        return FastMCPSeam(server)
    raise TypeError(
        f"Elicitation attaches to an mcp MCPServer or a fastmcp FastMCP server, not {type(server).__name__}"
    )
