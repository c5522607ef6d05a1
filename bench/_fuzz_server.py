"""The server bench/fuzz.py attacks: streamable HTTP on 127.0.0.1, a free port, logging at WARNING to stderr.

    python bench/_fuzz_server.py --store URL --secret S

Prints `READY <port>` once it accepts connections. Its tools cover what a client
can reach: a typed form (`form`, a pydantic model), the one-field helpers in a
row (`helpers`: confirm, text, choice, choices, with a journaled step between),
a raw dict schema (`raw`), the `elicit` tool with the web inbox as its channel,
a secure form on elicitkit's own page (`secure`, so `/elicit/f/...` is live), a
plain URL elicitation (`link`), a third-party flow back to `/elicit/cb` (`oauth`), a
question asked in the inbox (`inbox`, a task
on 2026-07-28 for clients that take tasks), a question that asks for a task
(`long`) and a tool that asks nothing (`plain`).

Who opens a page is the `X-User` header or the `user` cookie, the stand-in for a
real SSO that examples/channels.py uses too; without either, nobody, like the
MCP clients (no auth), so their links open for a browser that sends neither.
Inbox questions go to `fuzzer`.

Every log line on stderr is one record, `LEVEL|fuzz-id|logger|message`, with a
traceback, if any, on the lines that follow: the fuzzer counts ERROR records and
tracebacks, and `fuzz-id` (the `X-Fuzz-Id` header of the HTTP request that was
being served, `-` outside one) tells which request caused them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import logging
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field, SecretStr
from starlette.requests import Request

from elicitkit import Accepted, Elicitation

sys.path.insert(0, str(Path(__file__).parent))
from _node import bound_socket, serve

from elicitkit.channels import WebInbox, web

FUZZ_ID: contextvars.ContextVar[str] = contextvars.ContextVar("fuzz_id", default="-")
PERSON = "fuzzer"


class Deployment(BaseModel):
    approved: bool = Field(title="Approve?")
    replicas: Annotated[int, Field(ge=1, le=10)] = 1
    size: Literal["small", "large"] = "small"
    contact: str = Field(default="", max_length=40, json_schema_extra={"format": "email"})
    notes: str | None = Field(default=None, max_length=200)


class Credentials(BaseModel):
    user: str = Field(min_length=1, max_length=40)
    password: SecretStr


RAW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "when": {"type": "string", "format": "date", "title": "When"},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
        "count": {"type": "integer", "minimum": -5, "maximum": 5},
        "ok": {"type": "boolean", "default": False},
        "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
        "site": {"type": "string", "format": "uri", "minLength": 3, "maxLength": 100},
    },
    "required": ["when", "count"],
}


async def who_is_this(request: Request) -> str | None:
    # Nobody, without a header or a cookie: the principal of an unauthenticated MCP client, who can open its links.
    return request.headers.get("x-user") or request.cookies.get("user") or None


def build(store: str, secret: str, public_url: str) -> tuple[MCPServer, Elicitation]:
    server = MCPServer("fuzz-target")
    hitl = Elicitation(
        server,
        store=store,
        secret=secret,
        public_url=public_url,
        page_identity=who_is_this,
        channels=[WebInbox()],
        timeout=20,
        run_expiry=30,
        url_wait=0.5,
        keepalive=5,
        max_suspended=200,
    )
    hitl.install_elicit_tool({"web": web(PERSON)})

    @server.tool()
    async def form(name: str, ctx: Context) -> str:
        answer = await hitl.elicit(ctx, f"Deploy {name}?", Deployment)
        return f"{name}: {answer.action}"

    @server.tool()
    async def helpers(topic: str, ctx: Context) -> str:
        ok = await hitl.confirm(ctx, f"Go on with {topic}?")
        if not isinstance(ok, Accepted):
            return "stopped"
        word = await hitl.text(ctx, "A word?", max_length=50)
        done = await hitl.step(ctx, "note", lambda: f"noted {topic}")
        pick = await hitl.choice(ctx, "Which?", ["x", "y", "z"])
        many = await hitl.choices(ctx, "Which ones?", ["p", "q", "r"], min_items=1)
        return f"{done} {word.action} {pick.action} {many.action}"

    @server.tool()
    async def raw(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Fill the raw form", RAW_SCHEMA)
        return answer.action

    @server.tool()
    async def secure(ctx: Context) -> str:
        answer = await hitl.secure_form(ctx, "Sign in", Credentials)
        return answer.action

    @server.tool()
    async def link(ctx: Context) -> str:
        answer = await hitl.elicit_url(ctx, "Open the page", "https://example.com/consent")
        return answer.action

    @server.tool()
    async def inbox(topic: str, ctx: Context) -> str:
        answer = await hitl.elicit(ctx, f"Inbox: {topic}?", Deployment, via=web(PERSON))
        return answer.action

    @server.tool()
    async def long(ctx: Context) -> str:
        answer = await hitl.text(ctx, "Take your time: a word?", timeout=20)
        return answer.action

    @server.tool()
    async def oauth(ctx: Context) -> str:
        answer = await hitl.url_flow(
            ctx, "Connect your account", lambda callback, state: f"https://example.com/auth?state={state}&cb={callback}"
        )
        return answer.action

    @server.tool()
    async def plain(n: int = 0) -> str:
        return f"plain {n}"

    return server, hitl


class OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = f"{record.levelname}|{getattr(record, 'fuzz_id', '-')}|{record.name}|{record.getMessage()}"
        line = line.replace("\n", "\\n")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


def tag_records() -> None:
    factory = logging.getLogRecordFactory()

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        record.fuzz_id = FUZZ_ID.get()
        return record

    logging.setLogRecordFactory(make)


def tagged(app: Any) -> Any:
    """`app`, with the request's X-Fuzz-Id in a context variable that every log record picks up."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for key, value in scope["headers"]:
                if key == b"x-fuzz-id":
                    FUZZ_ID.set(value.decode("latin-1")[:40])
        await app(scope, receive, send)

    return wrapped


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    tag_records()
    sock = bound_socket()
    _, hitl = build(args.store, args.secret, f"http://127.0.0.1:{sock.getsockname()[1]}")
    try:
        # log_config=None: uvicorn's own loggers propagate to the one-line handler above.
        await serve(tagged(hitl.http_app()), sock, log_config=None, timeout_graceful_shutdown=1)
    finally:
        await hitl.aclose()


if __name__ == "__main__":
    asyncio.run(main())
