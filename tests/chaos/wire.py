"""2026-07-28 `tools/call` requests written by hand, so a test can drop one mid-flight and send it again.

A request is built as the SDK's client sends it (its headers and its `_meta`: the
protocol version, the client's info, and capabilities that declare forms), posted
over a plain TCP connection that the test closes when it chooses, and sent again
byte for byte with httpx.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx
from mcp_types import CallToolResult, InputRequiredResult

__all__ = ["Dropped", "Refused", "call_body", "post", "posted_then_dropped", "retry_body"]

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "chaos", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def call_body(tool: str, arguments: dict[str, Any], request_id: int = 1, **params: Any) -> bytes:
    """A `tools/call` JSON-RPC request, with `params` (e.g. `requestState`, `inputResponses`) added."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, **params, "_meta": META},
    }
    return json.dumps(body, separators=(",", ":")).encode()


def retry_body(tool: str, arguments: dict[str, Any], previous: InputRequiredResult, value: Any) -> bytes:
    """The retry that accepts every question of `previous` with `{"value": value}`."""
    responses = {key: {"action": "accept", "content": {"value": value}} for key in previous.input_requests or {}}
    return call_body(tool, arguments, requestState=previous.request_state, inputResponses=responses)


def _headers(body: bytes) -> dict[str, str]:
    tool = json.loads(body)["params"]["name"]
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }


def _result(response: httpx.Response) -> CallToolResult | InputRequiredResult:
    """The JSON-RPC result of a response, in JSON or as the last event of an SSE stream; an error is raised."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1])
    else:
        message = response.json()
    if "error" in message:
        raise Refused(message["error"])
    result = message["result"]
    if result.get("resultType") == "input_required":
        return InputRequiredResult.model_validate(result)
    return CallToolResult.model_validate(result)


class Refused(Exception):
    """The server answered with a JSON-RPC error; `error` is it (`code`, `message`, `data`)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error

    @property
    def reason(self) -> str | None:
        data = self.error.get("data")
        return data.get("reason") if isinstance(data, dict) else None


async def post(
    url: str, body: bytes, *, within: float = 15, client: httpx.AsyncClient | None = None
) -> CallToolResult | InputRequiredResult:
    """Send `body` and return its result (raises `Refused` for a JSON-RPC error).

    On a fresh connection, unless `client` is given (whose pooled connections are reused).
    """
    if client is not None:
        return _result(await client.post(url, content=body, headers=_headers(body)))
    async with httpx.AsyncClient(timeout=within) as fresh:
        response = await fresh.post(url, content=body, headers=_headers(body))
    return _result(response)


class Dropped:
    """A request whose connection is open; `drop()` closes it before the response comes."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream

    async def drop(self) -> None:
        await self._stream.aclose()


@asynccontextmanager
async def posted_then_dropped(url: str, body: bytes) -> AsyncIterator[Dropped]:
    """POST `body` over a connection of its own; the test drops it while the server works on it.

    Whatever the test does, the connection is closed on the way out, and no response is ever read.
    """
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    head = [f"POST {where.path} HTTP/1.1", f"host: {where.netloc}", f"content-length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in _headers(body).items()]
    stream = await anyio.connect_tcp(where.hostname, where.port)
    try:
        await stream.send("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        yield Dropped(stream)
    finally:
        await stream.aclose()
