"""Whatever a client sends, it gets a clear answer, the server logs no traceback, and nothing is lost."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

from elicitkit import Accepted, Elicitation, InvalidElicitationContent
from elicitkit.testing import serve_http
from tests.channels.tasking import raw
from tests.redis_server import RedisServer
from tests.scenes import pending_id, send_answer, text_of

pytestmark = pytest.mark.anyio

SECRET = "bad-input-secret-0123456789abcdef0123456789ab"


def store_url(kind: str, tmp_path: Path, redis_server: RedisServer | None) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    assert redis_server is not None
    return redis_server.url


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_an_elicit_id_that_cannot_be_one_is_unknown_on_every_store(
    kind: str, tmp_path: Path, mode: str, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server = request.getfixturevalue("redis_server") if kind == "redis" else None
    options: dict[str, Any] = {"store": store_url(kind, tmp_path, redis_server), "secret": SECRET}
    if kind == "redis":
        from elicitkit.stores.redis import RedisBroker, RedisStore

        prefix = f"test-{uuid.uuid4().hex}:"
        options["store"] = RedisStore(redis_server.url, prefix=prefix)  # type: ignore[union-attr]
        options["broker"] = RedisBroker(redis_server.url, prefix=prefix)  # type: ignore[union-attr]
    server = MCPServer("odd-ids")
    hitl = Elicitation(server, **options)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "OK?")).action

    try:
        async with Client(server, mode=mode) as client:  # no forms: the model answers by elicitId
            elicit_id = pending_id(await client.call_tool("ask", {}))
            for odd in ("ab\ud800cd", "", "x" * 500, "../../etc", "a b", "é"):
                refused = await send_answer(client, odd, "accept", {"value": True})
                assert refused.is_error
                assert "no open question" in text_of(refused) or "elicitId must be" in text_of(refused)
            assert text_of(await send_answer(client, elicit_id, "accept", {"value": True})) == "accept"
    finally:
        await hitl.aclose()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_notification_named_like_a_task_request_is_dropped_quietly(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = MCPServer("notified")
    Elicitation(server)
    async with Client(server, mode=mode) as client:
        for method in ("tasks/get", "tasks/result", "tasks/update", "tasks/cancel", "tasks/list"):
            await client.session._dispatcher.notify(method, {"taskId": "nope"})  # a buggy client's
        assert (await client.list_tools()).tools is not None  # still serving
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_notification_named_tools_call_carrying_a_request_state_is_dropped_quietly(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = MCPServer("notified")
    Elicitation(server)
    async with Client(server, mode=mode) as client:
        for state in ("ek1.", "ek1.run.nonce", "not sealed"):  # the SDK's requestState boundary cannot open these
            params = {"name": "anything", "arguments": {}, "requestState": state}
            await client.session._dispatcher.notify("tools/call", params)  # a buggy client's
        assert (await client.list_tools()).tools is not None  # still serving
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_2025_task_whose_call_params_are_refused_gets_invalid_params_and_no_task_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = MCPServer("tasked")
    hitl = Elicitation(server)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await hitl.confirm(ctx, "OK?")).action

    async with Client(server, mode="legacy") as client:
        with pytest.raises(MCPError) as refused:
            await raw(client, "tools/call", {"name": "ask", "arguments": ["not", "an", "object"], "task": {}})
        assert refused.value.error.code == -32602  # what the call gets without a task: invalid params
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


class RawClient:
    """A 2025-11-25 client over real streamable HTTP, spoken by hand: the SDK's client checks its own replies, a
    buggy client does not. Each `elicitation/create` gets the next of `replies` as its result."""

    def __init__(self, http: httpx.AsyncClient, url: str, replies: list[dict[str, Any]]) -> None:
        self.http, self.url, self.replies = http, url, replies
        self.asked: list[str] = []
        self.headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}

    async def start(self) -> None:
        init = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": CLIENT_INFO}
        response = await self.http.post(self.url, json=_request(0, "initialize", init), headers=self.headers)
        assert response.status_code == 200, response.text
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        await self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers
        )

    async def call(self, tool: str) -> dict[str, Any]:
        body = _request(1, "tools/call", {"name": tool, "arguments": {}})
        async with self.http.stream("POST", self.url, json=body, headers=self.headers) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                if message.get("method") == "elicitation/create":
                    self.asked.append(message["params"]["message"])
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": self.replies.pop(0)}
                    await self.http.post(self.url, json=reply, headers=self.headers)
                elif message.get("id") == 1:
                    result: dict[str, Any] = message["result"]
                    return result
        raise AssertionError("the call's stream ended without a result")


CLIENT_INFO = {"name": "raw-client", "version": "1.0"}


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def confirm_server() -> MCPServer:
    server = MCPServer("unreadable")
    hitl = Elicitation(server)

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            answer = await hitl.confirm(ctx, "OK?")
        except InvalidElicitationContent as exc:
            return f"refused: {exc}"
        assert isinstance(answer, Accepted)
        return f"ok={answer.data}"

    return server


async def test_a_2025_reply_that_is_not_an_elicitation_result_is_asked_again_like_a_wrong_answer() -> None:
    replies = [{"action": "maybe"}, {"action": "accept", "content": {"value": True}}]
    async with serve_http(confirm_server()) as url, httpx.AsyncClient(timeout=10) as http:
        client = RawClient(http, url, replies)
        with anyio.fail_after(10):
            await client.start()
            result = await client.call("ask")
    assert result["content"][0]["text"] == "ok=True"
    assert client.asked[0] == "OK?"
    assert "not a valid elicitation result" in client.asked[1]


async def test_a_2025_client_that_never_replies_readably_ends_the_question_after_the_last_attempt() -> None:
    async with serve_http(confirm_server()) as url, httpx.AsyncClient(timeout=10) as http:
        client = RawClient(http, url, [{"action": "maybe"}] * 3)
        with anyio.fail_after(10):
            await client.start()
            result = await client.call("ask")
    assert len(client.asked) == 3
    text = result["content"][0]["text"]
    assert text.startswith("refused: ") and "not a valid elicitation result" in text


@pytest.mark.parametrize(
    "params",
    [
        {"name": False, "arguments": {}},
        {"name": "ask", "arguments": [{}]},
        {"name": "ask", "arguments": -1e-320},
        {"arguments": {}},
    ],
    ids=["name-not-a-string", "arguments-a-list", "arguments-a-number", "no-name"],
)
@pytest.mark.parametrize("task", [True, False], ids=["as-a-task", "plain"])
async def test_a_2025_tool_call_whose_params_are_not_a_tool_call_is_refused_before_it_runs(
    params: dict[str, Any], task: bool, caplog: pytest.LogCaptureFixture
) -> None:
    if task:
        params = {**params, "task": {"ttl": 60000}}
    async with serve_http(confirm_server()) as url, httpx.AsyncClient(timeout=10) as http:
        client = RawClient(http, url, [])
        with anyio.fail_after(10):
            await client.start()
            response = await http.post(url, json=_request(7, "tools/call", params), headers=client.headers)
            refused = json.loads(next(line[5:] for line in response.text.splitlines() if line.startswith("data:")))
            # Still serving, and no task was left to fail later.
            listed = await http.post(url, json=_request(8, "tools/list", {}), headers=client.headers)
    assert refused["error"]["code"] == -32602
    assert "result" not in refused
    assert '"tools"' in listed.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
