"""The only module that touches fastmcp: its server, as elicitkit attaches to it, and its tool `Context`.

fastmcp 4 builds `FastMCP` on the SDK's low-level server (`FastMCP._mcp_server`),
so elicitkit attaches at the same depth as on the SDK's `MCPServer`: its
`tools/call` middleware joins the low-level middleware chain, inside fastmcp's
own root dispatch and the SDK's `requestState` boundary, and its run host wraps
the low-level lifespan (which fastmcp's in-memory client, its HTTP app and
`run()` all enter). fastmcp's own middleware still wraps every tool body.

Adopting a server (`elicitkit.fastmcp.adopt`) makes fastmcp's own
`Context.elicit` ask through elicitkit for that server's tools: fastmcp has no
seam for it (every tool call builds a fresh `Context`), so the method is wrapped
once per process, and the wrapper sends a call on to elicitkit only when the
context's server was adopted; every other server keeps fastmcp's own behaviour.

Imported only when a fastmcp server or context is handed to elicitkit;
`import elicitkit` never imports fastmcp.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

import fastmcp
from fastmcp import Context, FastMCP
from fastmcp.server.dependencies import get_context
from fastmcp.server.elicitation import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    handle_elicit_accept,
    parse_elicit_response_type,
)
from fastmcp.server.extensions import ServerExtension
from fastmcp.tools import Tool, ToolResult
from fastmcp.utilities.tasks import TASKS_EXTENSION_ID
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from elicitkit._results import Accepted, Declined, ElicitationResult
from elicitkit._web.limits import guard_endpoint

__all__ = ["AskRaw", "FastMCPSeam", "adopt_context_elicit", "request_context"]

RawHandler = Callable[[dict[str, Any], Any], Awaitable[CallToolResult]]
"""A tool given as JSON: `(arguments, the tool's context) -> result` (`elicitkit._mcp.RawHandler`; it takes
fastmcp's `Context` as it takes the SDK's)."""

AskRaw = Callable[[Context, str, dict[str, Any]], Awaitable[ElicitationResult[Any]]]
"""`(ctx, message, schema) -> result`: how an adopted server asks (its `Elicitation.elicit` with a raw schema)."""

FastMCPElicitResult = AcceptedElicitation[Any] | DeclinedElicitation | CancelledElicitation

_ADOPTED = "_elicitkit_adopted_elicit"


class FastMCPSeam:
    """A `fastmcp.FastMCP` server."""

    def __init__(self, server: FastMCP[Any]) -> None:
        self.server = server

    @property
    def lowlevel(self) -> Server[Any]:
        return self.server._mcp_server  # pyright: ignore[reportPrivateUsage]

    def add_route(self, route: Route) -> None:
        methods = sorted(route.methods or ())
        self.server.custom_route(route.path, methods=methods, include_in_schema=False)(route.endpoint)

    def add_system_tool(self, fn: Callable[..., Any], *, name: str, description: str) -> None:
        if "ctx" in fn.__annotations__:
            # Written for the SDK's server, whose Context the annotation names: fastmcp injects its own by type.
            fn.__annotations__["ctx"] = Context
        self.server.tool(fn, name=name, description=description, output_schema=None)

    def add_view(self, uri: str, *, name: str, mime_type: str, meta: dict[str, Any], html: Callable[[], str]) -> None:
        def read() -> str:  # a plain function: the framework inspects what it registers
            return html()

        self.server.resource(uri, name=name, mime_type=mime_type, meta=meta)(read)

    def add_raw_tool(
        self,
        handler: RawHandler,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        components = self.server.local_provider._components.values()  # pyright: ignore[reportPrivateUsage]
        if any(isinstance(c, Tool) and c.name == name for c in components):
            raise ValueError(f"The server already has a tool named {name!r}")
        self.server.add_tool(
            _RawTool(
                handler=handler,
                name=name,
                title=title,
                description=description,
                parameters=input_schema,
                output_schema=output_schema,
                annotations=ToolAnnotations.model_validate(annotations) if annotations else None,
                meta=meta,
            )
        )

    def http_app(self, **options: Any) -> Starlette:
        return self.server.http_app(**options)

    def default_session_idle_timeout(self, seconds: float | None) -> None:
        # fastmcp builds every HTTP app through `http_app` (`run_http_async` included). Its own setting
        # (FASTMCP_HTTP_SESSION_IDLE_TIMEOUT) and an argument given to `http_app` win; the default "auto" (the SDK's
        # 30 minutes) becomes elicitkit's. fastmcp has no argument meaning "no limit", so None leaves its default.
        if seconds is None:
            return
        build = self.server.http_app

        @functools.wraps(build)
        def with_default(*args: Any, **options: Any) -> Any:
            if options.get("session_idle_timeout") is None and fastmcp.settings.http_session_idle_timeout == "auto":
                options["session_idle_timeout"] = seconds
            return build(*args, **options)

        self.server.http_app = with_default  # type: ignore[method-assign]

    def guard_http_bodies(self, guard: Callable[[ASGIApp, str], ASGIApp]) -> None:
        build = self.server.http_app

        @functools.wraps(build)
        def guarded(*args: Any, **options: Any) -> Any:
            app = build(*args, **options)
            path = getattr(app.state, "path", None)  # fastmcp records its MCP endpoint's path on the app
            if isinstance(path, str):
                guard_endpoint(app, path, guard)
            return app

        self.server.http_app = guarded  # type: ignore[method-assign]

    def run_tasks(self) -> Callable[[str], bool]:
        # fastmcp serves a `task=True` tool only once an extension with the tasks identifier is registered (the
        # `fastmcp-tasks` package, which runs it in a Docket worker where ctx.elicit raises). elicitkit's MCP
        # tasks run it instead, in-process and durable: register elicitkit's as that extension.
        registered = self.server._extensions.get(TASKS_EXTENSION_ID)  # pyright: ignore[reportPrivateUsage]
        if registered is not None and not isinstance(registered, _ElicitkitTasks):
            raise ValueError(
                f"This fastmcp server already has a tasks extension ({type(registered).__name__}): elicitkit runs "
                "task=True tools as MCP tasks itself (questions inside them wait instead of raising), so an "
                "Elicitation cannot share the server with it; remove add_extension(...) for the tasks extension"
            )
        if registered is None:
            self.server.add_extension(_ElicitkitTasks())
        provider = self.server.local_provider

        def task_tool(name: str) -> bool:
            components = provider._components  # pyright: ignore[reportPrivateUsage]
            # Asked for every question on 2026-07-28: an unversioned tool is found by its key ("tool:<name>@"), and
            # fastmcp lets no name be versioned and unversioned at once; versioned tools are looked through.
            unversioned = components.get(f"{Tool.make_key(name)}@")
            if isinstance(unversioned, Tool):
                return unversioned.task_config.supports_tasks()
            return any(
                isinstance(c, Tool) and c.name == name and c.task_config.supports_tasks() for c in components.values()
            )

        return task_tool


class _ElicitkitTasks(ServerExtension):
    """The tasks extension as fastmcp knows extensions: its presence lets `task=True` tools serve; elicitkit's own
    middleware answers `tools/call` as a task and every `tasks/*` request (both eras), so it contributes nothing
    else."""

    identifier = TASKS_EXTENSION_ID


class _RawTool(Tool):
    """A tool whose input schema is given as JSON and whose handler takes the arguments as they came (a tool in
    another language brings its own schema, and its arguments are its own business)."""

    handler: Annotated[SkipJsonSchema[RawHandler], Field(exclude=True)]

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return self.convert_result(await self.handler(arguments, get_context()))


def request_context(ctx: Context) -> ServerRequestContext[Any, Any]:
    """The SDK's request context behind a fastmcp tool's `Context`.

    fastmcp binds its own wrapper of the SDK's context for every request it
    handles; elicitkit needs the SDK's, which the wrapper keeps.

    Raises:
        RuntimeError: there is no request (a background task, or outside a tool call).
    """
    wrapper = ctx.request_context
    if wrapper is None:
        raise RuntimeError("elicitkit can only ask from inside a tool call: this fastmcp Context has no request")
    rctx: ServerRequestContext[Any, Any] = wrapper._srctx  # pyright: ignore[reportPrivateUsage]
    return rctx


def adopt_context_elicit(server: FastMCP[Any], ask: AskRaw) -> None:
    """Make `ctx.elicit(...)` in `server`'s tools ask through `ask`, with fastmcp's own result types."""
    setattr(server, _ADOPTED, ask)
    if not getattr(Context.elicit, _ADOPTED, False):
        Context.elicit = _adopting(Context.elicit)  # type: ignore[method-assign,assignment]  # wrapped, same signature


def _adopting(original: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(original)
    async def elicit(
        self: Context,
        message: str,
        response_type: Any,
        *,
        response_title: str | None = None,
        response_description: str | None = None,
    ) -> FastMCPElicitResult:
        fastmcp = self._fastmcp()  # pyright: ignore[reportPrivateUsage]  # (None once the server is gone)
        ask: AskRaw | None = getattr(fastmcp, _ADOPTED, None)
        if ask is None or self.is_background_task or self.request_context is None:
            # Not adopted, or no request to ask from: fastmcp's own behaviour, errors included.
            result: FastMCPElicitResult = await original(
                self,
                message,
                response_type,
                response_title=response_title,
                response_description=response_description,
            )
            return result
        # fastmcp's own parsing: the same schema goes out, and an answer comes back as the same type.
        config = parse_elicit_response_type(
            response_type, response_title=response_title, response_description=response_description
        )
        answer = await ask(self, message, config.schema)
        if isinstance(answer, Accepted):
            data = answer.data if isinstance(answer.data, Mapping) else answer.content
            return handle_elicit_accept(config, dict(data or {}))
        if isinstance(answer, Declined):
            return DeclinedElicitation()
        return CancelledElicitation()

    setattr(elicit, _ADOPTED, True)
    return elicit
