"""The only module that touches the `mcp` SDK's internals.

Everything here leans on an attribute the SDK does not document as public;
when the SDK moves, this file is the one to change.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.request_state import (
    AESGCMRequestStateCodec,
    RequestStateBoundary,
    RequestStateSecurity,
    authenticated_principal,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CallToolResult,
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    Implementation,
    ListRootsRequest,
    ListRootsResult,
    ToolAnnotations,
)
from mcp_types.methods import INPUT_REQUIRED_METHODS, MONOLITH_REQUESTS, validate_client_request
from mcp_types.version import is_version_at_least
from pydantic import ValidationError
from starlette.applications import Starlette

__all__ = [
    "MRTR_VERSION",
    "ToolContext",
    "add_raw_tool",
    "capabilities",
    "check_params",
    "client_info",
    "default_session_idle_timeout",
    "drop_request_named_notifications",
    "error_data",
    "is_mrtr",
    "lowlevel",
    "on_http_app",
    "principal",
    "request_context",
    "request_state_ttl",
    "use_request_state_keys",
    "session_key",
    "wrap_lifespan",
]

logger = logging.getLogger("elicitkit")

MRTR_VERSION = "2026-07-28"
"""The first protocol revision where elicitation rides `InputRequiredResult` instead of a server request."""

HostFactory = Callable[[Any], AbstractAsyncContextManager[None]]
ElicitParams = ElicitRequestFormParams | ElicitRequestURLParams


class ToolContext(Protocol):
    """What a tool hands to `elicit`: the SDK's `Context`, or a framework's built on the SDK (fastmcp's)."""

    @property
    def request_context(self) -> Any: ...

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Both frameworks' contexts send `notifications/progress` for the call (when it has a progress token)."""


def lowlevel(server: MCPServer[Any]) -> Server[Any]:
    """The SDK's low-level server under an `MCPServer`: where middleware, lifespan and extensions live."""
    return server._lowlevel_server  # pyright: ignore[reportPrivateUsage]


def wrap_lifespan(lowlevel: Server[Any], host: HostFactory) -> None:
    """Run `host(lifespan_state)` around every entry of the low-level server's lifespan.

    The SDK enters the lifespan once per streamable-HTTP manager, once per
    stdio process and once per in-memory client: exactly the scopes in which
    suspended tool bodies may outlive the request that started them.
    """
    inner = lowlevel.lifespan

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with inner(app) as state, host(state):
            yield state

    lowlevel.lifespan = lifespan


def default_session_idle_timeout(server: MCPServer[Any], seconds: float | None) -> None:
    """Serve streamable HTTP with `seconds` of session idle timeout unless the caller passes its own.

    The SDK keeps a 2025-11-25 session that its client left without a DELETE for 30 minutes; it counts a
    session idle only while no request of it is in flight (an open GET stream, or a `tools/call` waiting on
    its person, holds it). Both ways the SDK builds the app take the default: `streamable_http_app(...)`
    and `run("streamable-http", ...)` (through `run_streamable_http_async`); a `session_idle_timeout`
    given to either, `None` included, wins.
    """
    for name in ("streamable_http_app", "run_streamable_http_async"):
        method = getattr(server, name)

        @functools.wraps(method)
        def with_default(*args: Any, _method: Callable[..., Any] = method, **options: Any) -> Any:
            options.setdefault("session_idle_timeout", seconds)
            return _method(*args, **options)

        setattr(server, name, with_default)


def on_http_app(server: MCPServer[Any], adjust: Callable[[Starlette, str], None]) -> None:
    """Have every app `server.streamable_http_app()` builds (`run("streamable-http")` included) passed to
    `adjust(app, path)` before it serves, `path` being its MCP endpoint's."""
    build = server.streamable_http_app

    @functools.wraps(build)
    def streamable_http_app(**options: Any) -> Starlette:
        app = build(**options)
        adjust(app, options.get("streamable_http_path", "/mcp"))
        return app

    server.streamable_http_app = streamable_http_app  # type: ignore[method-assign]


def use_request_state_keys(lowlevel: Server[Any], keys: list[bytes]) -> None:
    """Seal `requestState` with keys every node derives from the shared secret, keeping the SDK's TTL."""
    middleware: list[ServerMiddleware[Any]] = lowlevel.middleware
    for i, existing in enumerate(middleware):
        if isinstance(existing, RequestStateBoundary):
            current: RequestStateSecurity = existing._security  # pyright: ignore[reportPrivateUsage]
            if not isinstance(current.codec, AESGCMRequestStateCodec):
                # A codec of the server's own (a KMS, say) already decides who can open the state.
                logger.warning("elicitkit: keeping the server's own requestState codec; every node must share it")
                return
            security = RequestStateSecurity(
                keys=keys,
                ttl=current.ttl,
                bind_principal=current.bind_principal,
                audience=current.audience if current.audience is not None else lowlevel.name,
            )
            middleware[i] = RequestStateBoundary(security, default_audience=lowlevel.name)
            return


def drop_request_named_notifications(lowlevel: Server[Any]) -> None:
    """Drop, before anything else sees it, a notification named like a request that carries a `requestState`
    (`tools/call`, ...).

    The SDK's `RequestStateBoundary` opens the `requestState` of such a notification too, and one it cannot open
    raises there, which the SDK logs with its traceback. A notification has no handler and expects no answer:
    dropped first, it goes quietly, as the SDK drops every other notification it has no handler for.
    """
    lowlevel.middleware.insert(0, _drop_request_named_notification)


def _drop_request_named_notification(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> Coroutine[Any, Any, HandlerResult]:
    # What to await, not a coroutine awaiting it: a call waiting on a person keeps no frame of this.
    if ctx.request_id is None and ctx.method in INPUT_REQUIRED_METHODS:
        return _nothing()
    return call_next(ctx)  # type: ignore[return-value]  # (the SDK's chain hands on coroutines)


async def _nothing() -> None:
    return None


def error_data(exc: BaseException) -> ErrorData | None:
    """The JSON-RPC error the SDK answers a request with when its handler raises `exc`: an `MCPError`'s own, or
    invalid params for a pydantic `ValidationError` (the SDK refusing the request's params); None for anything
    else, which the SDK answers as an internal error."""
    return handler_exception_to_error_data(exc)


def request_state_ttl(lowlevel: Server[Any]) -> float | None:
    """How long the SDK accepts a sealed `requestState` on this server; a retry after that is refused."""
    for middleware in lowlevel.middleware:
        if isinstance(middleware, RequestStateBoundary):
            ttl = middleware._security.ttl  # pyright: ignore[reportPrivateUsage]
            return float(ttl)
    return None


def request_context(ctx: ToolContext) -> ServerRequestContext[Any, Any]:
    """The SDK's request context behind a tool's context; for the SDK's own `Context`, read straight from the
    model's private attributes.

    The public property goes through pydantic's `__getattr__` for private
    attributes, ~5 µs on a 2-core machine: more than a tenth of elicitkit's own
    cost per question. Outside a request the property raises the SDK's own error.
    Any other context is a framework's (fastmcp's), read by the module that knows it.
    """
    private = getattr(ctx, "__pydantic_private__", None)
    found = private.get("_request_context") if private else None
    if found is None:
        fastmcp = None if isinstance(ctx, Context) else sys.modules.get("fastmcp")
        if fastmcp is not None and isinstance(ctx, fastmcp.Context):
            from elicitkit import _fastmcp  # only a fastmcp tool gets here: fastmcp is loaded already

            return _fastmcp.request_context(ctx)
        sdk: ServerRequestContext[Any, Any] = ctx.request_context
        return sdk
    rctx: ServerRequestContext[Any, Any] = found
    return rctx


def check_params(rctx: ServerRequestContext[Any, Any], *, own: tuple[str, ...] = ()) -> None:
    """Refuse a request whose params the protocol's own schema rejects, as the SDK would, before acting on them.

    Middleware sees a request's params raw, before the SDK validates them in `call_next`; elicitkit acts first
    (it starts a task, hosts a run, reads a retry), so without this a `tools/call` whose `name` is not a string
    would become a task that fails later with a traceback instead of a clear refusal. The `own` params are
    left out: elicitkit checks them itself, with a message that says what is wrong.

    Raises:
        pydantic.ValidationError: the params do not fit; the SDK answers it with -32602 and logs nothing.
    """
    version = rctx.protocol_version
    if version is None:
        return
    params = rctx.params
    if params is not None and own and any(key in params for key in own):  # (copied only when there is one)
        params = {key: value for key, value in params.items() if key not in own}
    body = {"method": rctx.method} | ({} if params is None else {"params": params})
    model = MONOLITH_REQUESTS.get(rctx.method)
    if model is not None:
        model.model_validate(body, by_name=False)
    if is_mrtr(version):
        return  # 2026-07-28's per-request envelope (`_meta`) is checked by the transport, and only by HTTP's
    try:
        validate_client_request(rctx.method, version, params)
    except ValidationError:
        raise
    except (KeyError, ValueError):
        return  # a method or version the SDK's table does not know (an extension's): the SDK decides


def is_mrtr(protocol_version: str | None) -> bool:
    """True when this request speaks 2026-07-28 or later (no server-to-client requests)."""
    return protocol_version is not None and _at_least_mrtr(protocol_version)


@functools.lru_cache(maxsize=64)
def _at_least_mrtr(protocol_version: str) -> bool:
    # Asked several times per question; a handful of revisions exist, and parsing one costs a microsecond.
    return is_version_at_least(protocol_version, MRTR_VERSION)


def capabilities(rctx: ServerRequestContext[Any, Any]) -> ClientCapabilities | None:
    return rctx.session.client_capabilities


async def list_roots(rctx: ServerRequestContext[Any, Any]) -> list[str] | None:
    """The `file://` URIs of the roots the client names (2025-11-25's `roots/list`); None when it cannot be
    asked (it declared no roots, or the request is 2026-07-28's, which has no server-to-client requests)."""
    caps = rctx.session.client_capabilities
    if is_mrtr(rctx.protocol_version) or caps is None or caps.roots is None:
        return None
    # The request itself, not the SDK's deprecated `list_roots` wrapper (roots are deprecated as of 2026-07-28).
    result = await rctx.session.send_request(ListRootsRequest(), ListRootsResult)
    return [str(root.uri) for root in result.roots]


def client_extensions(rctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The extensions the client declares (`capabilities.extensions`), by name."""
    caps = rctx.session.client_capabilities
    extensions = caps.extensions if caps is not None else None
    return dict(extensions) if isinstance(extensions, dict) else {}


def client_info(rctx: ServerRequestContext[Any, Any]) -> Implementation | None:
    params = rctx.session.client_params
    return params.client_info if params is not None else None


def principal(rctx: ServerRequestContext[Any, Any]) -> str | None:
    """The authenticated identity of the caller, as the SDK binds `requestState` to it."""
    return authenticated_principal(rctx)


def cancel_requested(rctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client cancelled this request (`notifications/cancelled`), as opposed to the request ending
    some other way (its connection dropped, the server shutting down)."""
    dispatch = getattr(rctx.session, "_request_outbound", None)  # pyright: ignore[reportPrivateUsage]
    requested = getattr(dispatch, "cancel_requested", None)
    return bool(requested is not None and requested.is_set())


def session_key(rctx: ServerRequestContext[Any, Any]) -> object:
    """An object identifying the caller's session.

    Handshake-era connections are the session. 2026-07-28 has no sessions: the
    authenticated principal stands in, and anonymous modern callers share none.
    """
    if is_mrtr(rctx.protocol_version):
        who = principal(rctx)
        return ("principal", who) if who is not None else None
    return rctx.session._connection  # pyright: ignore[reportPrivateUsage]


TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASKS_VERSION = "2025-11-25"
"""The handshake-era protocol revision that has tasks (the `tasks` capability, `execution.taskSupport`)."""
RELATED_TASK = "io.modelcontextprotocol/related-task"


def requested_task(rctx: ServerRequestContext[Any, Any]) -> float | None:
    """A 2025-11-25 `tools/call` that asks to run as a task: its requested TTL in seconds (0: none given)."""
    if rctx.protocol_version != TASKS_VERSION or not rctx.params:
        return None  # tasks came with 2025-11-25; 2026-07-28's are server-decided
    task = rctx.params.get("task")
    if not isinstance(task, dict):
        return None
    ttl = task.get("ttl")
    return float(ttl) / 1000 if isinstance(ttl, int | float) and ttl > 0 else 0.0


def takes_tasks(rctx: ServerRequestContext[Any, Any]) -> bool:
    """A 2026-07-28 request whose client declared the tasks extension (per request, in its capabilities)."""
    if not is_mrtr(rctx.protocol_version):
        return False
    declared = capabilities(rctx)
    extensions = declared.extensions if declared is not None else None
    return bool(extensions) and TASKS_EXTENSION in extensions  # type: ignore[operator]


def advertise_tasks(lowlevel: Server[Any]) -> None:
    """Declare the 2026-07-28 tasks extension in `server/discover` (2025-11-25's `tasks` capability is added to
    the `initialize` result by elicitkit's middleware: the SDK has no field for it)."""
    lowlevel.extensions[TASKS_EXTENSION] = {}


def elicit(
    rctx: ServerRequestContext[Any, Any], params: ElicitParams, task: str | None = None
) -> Coroutine[Any, Any, ElicitResult]:
    """2025-11-25: `elicitation/create` for `rctx` with the params' own `_meta` (SDK's `elicit_form` drops it); for a
    task, on the `tasks/result` request waiting for it, tagged `_meta["io.modelcontextprotocol/related-task"]`.

    The request to await, not a coroutine of its own awaiting it: one frame fewer held while the person thinks."""
    if task is not None:
        params = params.model_copy(update={"meta": {**(params.meta or {}), RELATED_TASK: {"taskId": task}}})
    return rctx.session.send_request(
        ElicitRequest(params=params),
        ElicitResult,
        metadata=ServerMessageMetadata(related_request_id=rctx.request_id),
    )


RawHandler = Callable[[dict[str, Any], ToolContext], Awaitable[CallToolResult]]
"""A tool given as JSON: `(arguments as they came, the tool's context) -> result`."""


class _RawTool(Tool):
    """A tool whose input schema is given as JSON and whose handler takes the arguments as they came.

    The SDK builds tools from Python signatures; a tool written in another language brings its own schema,
    and its arguments are its own business (the script reads them), so they are passed through untouched.
    """

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await self.fn(arguments, context)


def add_raw_tool(
    server: MCPServer[Any],
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
    """Register `handler` as the tool `name`, advertising `input_schema` (and `output_schema`) as given."""
    tool = _RawTool(
        fn=handler,
        name=name,
        title=title,
        description=description,
        parameters=input_schema,
        # Published as given and not validated by the SDK (there is no model behind it).
        fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=output_schema),
        is_async=True,
        context_kwarg=None,
        annotations=ToolAnnotations.model_validate(annotations) if annotations else None,
        meta=meta,
    )
    manager = server._tool_manager  # pyright: ignore[reportPrivateUsage]
    if manager.get_tool(name) is not None:
        raise ValueError(f"The server already has a tool named {name!r}")
    manager._tools[name] = tool  # pyright: ignore[reportPrivateUsage]
