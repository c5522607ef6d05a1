"""A real elicitkit server over streamable HTTP for a module's examples, and a client that speaks JSON-RPC by hand.

The server runs on uvicorn (127.0.0.1, a free port) in an event loop of its own thread, started once per test
module, so that each hypothesis example costs one HTTP exchange. `Surface.send` posts any JSON message as a
2026-07-28 request (its `_meta` and routing headers as the SDK's client writes them) or inside a 2025-11-25
session, and returns every JSON-RPC message the server sent back. Every log record at ERROR or above, or
carrying a traceback, is kept for the test to check after each example.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

import httpx
import uvicorn
from anyio.from_thread import start_blocking_portal
from mcp.server.mcpserver import MCPServer

from elicitkit.testing import serve_http

__all__ = ["CURRENT", "LEGACY", "Era", "Reply", "Surface", "serving"]

Era = Literal["2025-11-25", "2026-07-28"]
LEGACY: Era = "2025-11-25"
CURRENT: Era = "2026-07-28"
CLIENT_INFO = {"name": "properties", "version": "0.1.0"}
FORMS: dict[str, Any] = {"elicitation": {"form": {}}}
META = {
    "io.modelcontextprotocol/protocolVersion": CURRENT,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {**FORMS, "extensions": {"io.modelcontextprotocol/tasks": {}}},
}


class Trouble(logging.Handler):
    """Keeps every record at ERROR or above, and every record that carries a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(record)

    def take(self) -> list[str]:
        found, self.records = self.records, []
        return [f"{r.name}: {r.getMessage()}" for r in found]


@dataclass
class Reply:
    status: int
    messages: list[dict[str, Any]]
    """Every JSON-RPC message of the response: its JSON body, or each event of its stream."""

    def answer_to(self, request_id: Any) -> dict[str, Any] | None:
        """The response carrying `request_id` (None: the server said nothing about it)."""
        return next((m for m in self.messages if "method" not in m and m.get("id") == request_id), None)

    def only_error(self) -> dict[str, Any] | None:
        """The error of a response to a message the server could not read (its id is null)."""
        return next((m["error"] for m in self.messages if "error" in m), None)


class Surface:
    def __init__(self, url: str, http: httpx.Client, trouble: Trouble) -> None:
        self.url, self.http, self.trouble = url, http, trouble
        self.session: str | None = None

    # --- 2025-11-25 ----------------------------------------------------------------------------------------

    def start_session(self) -> None:
        """The 2025-11-25 handshake, declaring forms: its session serves every legacy example of the module."""
        init = {"protocolVersion": LEGACY, "capabilities": FORMS, "clientInfo": CLIENT_INFO}
        response = self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            headers=self._headers(LEGACY),
        )
        assert response.status_code == 200, response.text
        self.session = response.headers["mcp-session-id"]
        notified = self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self._headers(LEGACY)
        )
        assert notified.status_code == 202, notified.text

    # --- any era -------------------------------------------------------------------------------------------

    def send(self, message: Any, era: Era, *, meta: bool = True) -> Reply:
        """Post `message` (2026-07-28: with the client's `_meta` added to an object `params`) and read the reply."""
        if era == CURRENT and meta and isinstance(message, dict) and isinstance(message.get("params"), dict):
            message = {**message, "params": {**message["params"], "_meta": META}}
        body = json.dumps(message, separators=(",", ":")).encode()
        return self._read(self.http.post(self.url, content=body, headers=self._headers(era, message)))

    def call_answering(
        self, era: Era, tool: str, arguments: dict[str, Any], reply: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """2025-11-25: call `tool`; each `elicitation/create` on its stream gets `reply(params)`: `{"result": ...}`
        or `{"error": ...}`.

        Returns what the client posted as its replies' responses (one `Reply` message each), and the call's answer.
        """
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        posted: list[dict[str, Any]] = []
        headers = self._headers(era, body)
        with self.http.stream("POST", self.url, json=body, headers=headers) as stream:
            for line in _sse_lines(stream.iter_bytes()):
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                if message.get("method") == "elicitation/create":
                    sent = {"jsonrpc": "2.0", "id": message["id"], **reply(message["params"])}
                    answered = self.http.post(self.url, content=json.dumps(sent), headers=self._headers(era))
                    posted.append({"status": answered.status_code, "body": answered.text})
                elif "method" not in message and message.get("id") == 1:
                    return posted, message
        raise AssertionError("the call's stream ended without an answer")

    def _headers(self, era: Era, message: Any = None) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": era,
        }
        if era == LEGACY and self.session is not None:
            headers["mcp-session-id"] = self.session
        if era == CURRENT and isinstance(message, dict):
            method, params = message.get("method"), message.get("params")
            if _header_value(method):
                headers["mcp-method"] = method
            name = params.get("name") if isinstance(params, dict) else None
            if _header_value(name):
                headers["mcp-name"] = name
        return headers

    @staticmethod
    def _read(response: httpx.Response) -> Reply:
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            data = [line[5:].strip() for line in _sse_lines([response.content]) if line.startswith("data:")]
            return Reply(response.status_code, [json.loads(d) for d in data if d])
        if kind.startswith("application/json") and response.content:
            message = response.json()
            return Reply(response.status_code, message if isinstance(message, list) else [message])
        return Reply(response.status_code, [])


def _sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of an event stream: only CR and LF end one (`str.splitlines`, and so httpx's `iter_lines`, also
    split at U+0085, U+2028 and others, which JSON carries unescaped)."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r").decode()
    if buffer:
        yield buffer.rstrip(b"\r").decode()


@contextmanager
def serving(server: MCPServer) -> Iterator[Surface]:
    """Serve `server` in a thread of its own for as long as the context lasts; yield the way in."""
    trouble = Trouble()
    with ExitStack() as stack:
        # uvicorn's own logging config would keep `uvicorn.error` (where an app's exceptions go) from the root.
        configure = uvicorn.Config.configure_logging
        uvicorn.Config.configure_logging = lambda self: None  # type: ignore[method-assign]
        stack.callback(setattr, uvicorn.Config, "configure_logging", configure)
        root = logging.getLogger()
        root.addHandler(trouble)
        stack.callback(root.removeHandler, trouble)
        portal = stack.enter_context(start_blocking_portal())
        url = stack.enter_context(portal.wrap_async_context_manager(serve_http(server)))
        http = stack.enter_context(httpx.Client(timeout=30))
        yield Surface(url, http, trouble)


def _header_value(text: object) -> TypeGuard[str]:
    """Whether `text` can be sent as an HTTP header's value, as a client mirrors a method or tool name into one:
    visible ASCII, inner spaces allowed but none at either end (HTTP trims them; h11 refuses to send them)."""
    return isinstance(text, str) and text.isascii() and text.isprintable() and text == text.strip(" ")
