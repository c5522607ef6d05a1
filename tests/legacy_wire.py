"""A 2025-11-25 streamable-HTTP session written by hand, so a test can leave it the way a vanished client does.

It speaks as the SDK's client does (initialize declaring forms, `notifications/initialized`, each request a POST
whose response is an SSE stream) but opens no GET stream and sends no DELETE unless told: a session whose
client is gone has no request in flight, which is what the SDK's idle timeout counts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

__all__ = ["VERSION", "Call", "LegacySession"]

VERSION = "2025-11-25"
CAPABILITIES = {"elicitation": {"form": {}}}


class Call:
    """One request's response stream: the JSON-RPC messages the server writes on it, in order."""

    def __init__(self, response: httpx.Response, request_id: int | None = None) -> None:
        self.response = response
        self.request_id = request_id
        self._lines = response.aiter_lines()

    async def next_message(self) -> dict[str, Any] | None:
        """The next message on the stream (a server request, a notification or the response); None at its end."""
        data: list[str] = []
        async for line in self._lines:
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                message: dict[str, Any] = json.loads("\n".join(data))
                return message
        return None

    async def drop(self) -> None:
        """Close the connection before the response is read to its end."""
        await self.response.aclose()


class LegacySession:
    """A 2025-11-25 session over `http` (an `httpx.AsyncClient` of its own: closing it drops every connection)."""

    def __init__(self, http: httpx.AsyncClient, url: str, capabilities: dict[str, Any] | None = None) -> None:
        self.http = http
        self.url = url
        self.capabilities = CAPABILITIES if capabilities is None else capabilities
        self.session_id: str | None = None
        self._next_id = 0

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.session_id is not None:
            headers |= {"mcp-session-id": self.session_id, "mcp-protocol-version": VERSION}
        return headers

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def open(self) -> None:
        """Initialize (declaring forms, or the capabilities given) and send `notifications/initialized`."""
        params = {
            "protocolVersion": VERSION,
            "capabilities": self.capabilities,
            "clientInfo": {"name": "wire", "version": "0"},
        }
        body = {"jsonrpc": "2.0", "id": self.new_id(), "method": "initialize", "params": params}
        async with self.http.stream("POST", self.url, json=body, headers=self._headers()) as response:
            response.raise_for_status()
            self.session_id = response.headers["mcp-session-id"]
            message = await Call(response).next_message()
            assert message is not None and "result" in message, message
        await self.notify("notifications/initialized")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a notification; the HTTP status (202 when the session took it, 404 once it is gone)."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method} | ({"params": params} if params else {})
        response = await self.http.post(self.url, json=body, headers=self._headers())
        return response.status_code

    @asynccontextmanager
    async def call(self, tool: str, arguments: dict[str, Any], request_id: int | None = None) -> AsyncIterator[Call]:
        """POST `tools/call`; the caller reads its stream (and may drop it) inside the block."""
        rid = self.new_id() if request_id is None else request_id
        params = {"name": tool, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        async with self.http.stream("POST", self.url, json=body, headers=self._headers()) as response:
            response.raise_for_status()
            yield Call(response, rid)

    async def reply(self, request: dict[str, Any], result: dict[str, Any]) -> int:
        """Answer a server request (`elicitation/create`) with `result`; the HTTP status."""
        body = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        response = await self.http.post(self.url, json=body, headers=self._headers())
        return response.status_code

    async def cancel(self, request_id: int) -> int:
        return await self.notify("notifications/cancelled", {"requestId": request_id, "reason": "the person left"})

    async def alive(self) -> bool:
        """Whether the server still knows this session (a ping is answered rather than 404)."""
        body = {"jsonrpc": "2.0", "id": self.new_id(), "method": "ping"}
        response = await self.http.post(self.url, json=body, headers=self._headers())
        return response.status_code != 404

    async def close(self) -> None:
        """End the session as a client that says goodbye does: DELETE."""
        await self.http.delete(self.url, headers=self._headers())
