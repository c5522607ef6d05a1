"""How much of a request body elicitkit reads, and for how long: the guard on every route it serves.

Every route `Elicitation.routes()` returns (the pages, the web inbox, each
channel's callbacks, yours included) is `bounded`: its body is read before the
route's own code runs, before any check or parsing, and

- a `Content-Length` over the route's limit is answered `413` at once, nothing read;
- a body sent without one (chunked) is read only until it passes the limit, then answered `413`;
- a body that has not all arrived within the read timeout is answered `408`.

A refusal is a short plain-text response with `Connection: close`, logged as one
WARNING line naming the route and the client, never the body nor the path's
link. A client that goes away before its body is in is logged at INFO. The
route then reads exactly the bytes that arrived (`request.body()`,
`request.form()`), so a channel's signature check sees the raw body.

Limits: `BodyLimits.page` for elicitkit's pages and the web inbox; a channel's
`body_limit`, what its service sends (`CALLBACK_LIMIT` for a channel that does
not say); `BodyLimits.read_timeout` for every route.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from elicitkit._timeouts import check_seconds

__all__ = [
    "CALLBACK_LIMIT",
    "DEFAULT_BODY_LIMITS",
    "BodyLimits",
    "bodies_first",
    "bounded",
    "guard_endpoint",
    "read_body",
]

logger = logging.getLogger("elicitkit")

CALLBACK_LIMIT = 1 << 20
"""A channel callback's body limit when the channel sets no `body_limit` of its own."""

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """How much of a request's body elicitkit's routes read, and how long they wait for it.

    ```python
    hitl = Elicitation(server, body_limits=BodyLimits(page=1 << 20, read_timeout=30))
    ```

    A body over its limit is refused with `413`, one that is slower than
    `read_timeout` with `408`; neither is read further. `None` means no limit.

    Attributes:
        page: the largest body, in bytes, of a form posted to elicitkit's pages
            or its web inbox (256 KiB: far more than a hundred fields of typed text).
        read_timeout: seconds a request's whole body may take to arrive, on every
            route, channel callbacks included (10).

    Raises:
        ValueError: a limit that is not a positive number.
    """

    page: int | None = 256 * 1024
    read_timeout: float | None = 10.0

    def __post_init__(self) -> None:
        if self.page is not None and (isinstance(self.page, bool) or not isinstance(self.page, int) or self.page < 1):
            raise ValueError(f"page must be a positive number of bytes, or None for no limit, got {self.page!r}")
        check_seconds(self.read_timeout, "read_timeout")


DEFAULT_BODY_LIMITS = BodyLimits()


def bounded(route: Route, limit: int | None, timeout: float | None) -> Route:
    """`route`, whose body is read first: at most `limit` bytes, within `timeout` seconds (None: no limit)."""
    endpoint: Endpoint = route.endpoint
    where = route.path  # the template: a link in the path is a credential, and never logged

    async def guarded(request: Request) -> Response:
        body = await read_body(request, limit, timeout, where)
        if isinstance(body, Response):
            return body
        return await endpoint(Request(request.scope, _replay(body, request.receive)))

    return Route(route.path, guarded, methods=route.methods, name=route.name, include_in_schema=route.include_in_schema)


def bodies_first(app: ASGIApp, timeout: float | None, where: str) -> ASGIApp:
    """`app` (the MCP endpoint), which is handed a POST only once its whole body is in, within `timeout` seconds.

    A client that goes away before its body is in is let go with one INFO line (the SDK's transport logs it as an
    ERROR with a traceback), one too slow is answered `408`. Other requests (GET's event stream, DELETE) pass as
    they are; the size stays the transport's to limit.
    """

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        body = await read_body(Request(scope, receive), None, timeout, where)
        if isinstance(body, Response):
            await body(scope, receive, send)
            return
        await app(scope, _replay(body, receive), send)

    return guarded


def guard_endpoint(app: Starlette, path: str, guard: Callable[[ASGIApp, str], ASGIApp]) -> None:
    """Pass the requests of `app`'s route at `path` (a framework's MCP endpoint) through `guard(endpoint, path)`."""
    for route in app.router.routes:
        if isinstance(route, Route) and route.path == path:
            route.app = guard(route.app, path)


async def read_body(request: Request, limit: int | None, timeout: float | None, where: str) -> bytes | Response:
    """The whole body, or the response refusing it (413 too large, 408 too slow)."""
    declared = request.headers.get("content-length", "")
    if limit is not None and declared.isdigit() and int(declared) > limit:
        return _too_large(request, where, limit)
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(timeout):
        while True:
            message = await request.receive()
            if message["type"] != "http.request":  # http.disconnect: nobody is left to answer
                logger.info("A request to %s from %s went away before its body arrived", where, _client(request))
                return Response(status_code=400)
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if limit is not None and size > limit:
                return _too_large(request, where, limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    logger.warning(
        "Refused a request to %s from %s: its body did not arrive within %g s (408)",
        where,
        _client(request),
        timeout,
    )
    return _refusal(408, "Request body not received in time")


def _too_large(request: Request, where: str, limit: int) -> Response:
    logger.warning(
        "Refused a request to %s from %s: its body is over the limit of %d bytes (413)", where, _client(request), limit
    )
    return _refusal(413, "Request body too large")


def _refusal(status: int, text: str) -> Response:
    # Connection: close, so the rest of the body is never read: the server drops the connection after answering.
    return PlainTextResponse(text, status_code=status, headers={"Connection": "close"})


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "an unknown client"


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for the route: the body read, then whatever the server says next (a disconnect)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
