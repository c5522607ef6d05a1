"""What goes on the wire as `requestedSchema`: raw schemas as written, titled choices per client revision."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation, Titles
from elicitkit.testing import ScriptedHuman, accept, serve_http

pytestmark = pytest.mark.anyio

LEGACY_TITLED = {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]}
RAW = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "legacy": LEGACY_TITLED,
        "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]},
        "many": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}},
    },
    "required": ["legacy"],
}


class Target(BaseModel):
    env: Annotated[Literal["prod", "staging"], Titles(prod="Production", staging="Staging")]
    checks: Annotated[list[Literal["lint", "tests"]], Titles(lint="Lint", tests="Unit tests")] = []


def raw_server() -> MCPServer:
    server = MCPServer("wire")
    hitl = Elicitation(server)

    @server.tool()
    async def pick(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Pick", RAW)
        assert isinstance(answer, Accepted)
        return json.dumps(answer.data, sort_keys=True)

    return server


def typed_server() -> MCPServer:
    server = MCPServer("wire")
    hitl = Elicitation(server)

    @server.tool()
    async def target(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Where to?", Target)
        assert isinstance(answer, Accepted)
        return f"{answer.data.env} {','.join(answer.data.checks)}"

    return server


async def test_a_raw_schema_with_legacy_enum_names_goes_on_the_wire_exactly_as_written(mode: str) -> None:
    human = ScriptedHuman(accept({"legacy": "opt2", "titled": "v1", "many": ["b"]}))
    async with Client(raw_server(), mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("pick", {})
    assert not result.is_error
    assert human.transcript[0].schema == RAW
    assert json.loads(result.content[0].text) == {"legacy": "opt2", "many": ["b"], "titled": "v1"}  # type: ignore[union-attr]


async def test_an_answer_outside_a_legacy_enum_is_refused_and_asked_again(mode: str) -> None:
    human = ScriptedHuman(accept({"legacy": "Option One"}), accept({"legacy": "opt1"}))
    async with Client(raw_server(), mode=mode, elicitation_callback=human, input_required_max_rounds=5) as client:
        result = await client.call_tool("pick", {})
    assert not result.is_error
    assert "must be one of opt1, opt2" in human.transcript[1].message
    assert json.loads(result.content[0].text) == {"legacy": "opt1"}  # type: ignore[union-attr]


async def test_titled_choices_from_python_types_go_as_one_of_to_current_clients(mode: str) -> None:
    human = ScriptedHuman(accept({"env": "prod", "checks": ["tests"]}))
    async with Client(typed_server(), mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("target", {})
    assert not result.is_error
    schema = human.transcript[0].schema
    assert schema is not None
    assert schema["properties"]["env"] == {
        "type": "string",
        "oneOf": [{"const": "prod", "title": "Production"}, {"const": "staging", "title": "Staging"}],
    }
    assert schema["properties"]["checks"]["items"] == {
        "anyOf": [{"const": "lint", "title": "Lint"}, {"const": "tests", "title": "Unit tests"}]
    }


class OldClient:
    """A 2025-06-18 client over real streamable HTTP, spoken by hand: the SDK client only speaks newer revisions."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}

    async def start(self) -> None:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "old-client", "version": "1.0"},
        }
        response = await self.http.post(self.url, json=_request(0, "initialize", init), headers=self.headers)
        assert response.status_code == 200, response.text
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        notified = await self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers
        )
        assert notified.status_code == 202

    async def call(self, tool: str, answer: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Call `tool`, accept its one question with `answer`; return (the question's params, the tool result)."""
        asked: dict[str, Any] = {}
        body = _request(1, "tools/call", {"name": tool, "arguments": {}})
        async with self.http.stream("POST", self.url, json=body, headers=self.headers) as stream:
            async for message in _events(stream):
                if message.get("method") == "elicitation/create":
                    asked = message["params"]
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": answer}}
                    posted = await self.http.post(self.url, json=reply, headers=self.headers)
                    assert posted.status_code == 202
                elif message.get("id") == 1:
                    return asked, message["result"]
        raise AssertionError("the call's stream ended without a result")


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def _events(stream: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in stream.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


async def test_titled_choices_go_as_enum_names_to_a_client_that_negotiated_2025_06_18() -> None:
    async with serve_http(typed_server()) as url, httpx.AsyncClient(timeout=10) as http:
        client = OldClient(http, url)
        with anyio.fail_after(10):
            await client.start()
            asked, result = await client.call("target", {"env": "staging"})
    assert asked["requestedSchema"]["properties"]["env"] == {
        "type": "string",
        "enum": ["prod", "staging"],
        "enumNames": ["Production", "Staging"],
    }
    assert result["content"][0]["text"] == "staging "


async def test_a_raw_schema_goes_as_written_to_a_client_that_negotiated_2025_06_18() -> None:
    async with serve_http(raw_server()) as url, httpx.AsyncClient(timeout=10) as http:
        client = OldClient(http, url)
        with anyio.fail_after(10):
            await client.start()
            asked, result = await client.call("pick", {"legacy": "opt1"})
    assert asked["requestedSchema"] == RAW
    assert json.loads(result["content"][0]["text"]) == {"legacy": "opt1"}
