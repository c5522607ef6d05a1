"""NaN, Infinity, deeply nested JSON and an 8 MiB answer, sent through the MCP client over real HTTP.

The client's bytes are rewritten on the wire (`Hostile`), so the server sees exactly what a hostile or
broken client sends: in a 2026-07-28 retry's `inputResponses`, in the model's `sendElicitationResult`, and
in a 2025-11-25 client's reply to `elicitation/create`. Each is refused with a clear error (elicitkit's
"must be a finite number", or the SDK's parse error and body limit), nothing logs a traceback, and the
question can still be answered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import new_server, pending_id, reached, send_answer, serving, text_of
from tests.security.conftest import Logs

pytestmark = pytest.mark.anyio

PLACEHOLDER = "__HOSTILE__"
DEEP = 100_000
PAYLOADS: dict[str, bytes] = {
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "nested 100000 deep": b"[" * DEEP + b"]" * DEEP,
    "8 MiB": json.dumps("9" * (8 << 20)).encode(),
}
NOT_FINITE = ("NaN", "Infinity", "-Infinity")
PATHS = [("retry", "auto"), ("model", "legacy"), ("model", "auto"), ("native", "legacy")]


class Size(BaseModel):
    n: float


class Hostile(httpx2.AsyncBaseTransport):
    """A client's HTTP transport that puts `raw` on the wire where the client wrote the placeholder string."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.inner = httpx2.AsyncHTTPTransport()
        self.sent: tuple[httpx2.URL, dict[str, str], bytes] | None = None
        self.answer: tuple[int, bytes] | None = None
        self.answered = anyio.Event()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        marked = json.dumps(PLACEHOLDER).encode()
        if marked not in body or self.sent is not None:
            return await self.inner.handle_async_request(request)
        headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
        self.sent = (request.url, headers, body)
        response = await self.inner.handle_async_request(
            httpx2.Request(request.method, request.url, headers=headers, content=body.replace(marked, self.raw))
        )
        self.answer = (response.status_code, await response.aread())
        self.answered.set()
        return httpx2.Response(response.status_code, headers=response.headers, content=self.answer[1])

    async def resend(self, value: Any) -> int:
        """Send the hostile request again, with `value` where the placeholder was; the status."""
        assert self.sent is not None
        url, headers, body = self.sent
        fixed = body.replace(json.dumps(PLACEHOLDER).encode(), json.dumps(value).encode())
        response = await self.inner.handle_async_request(httpx2.Request("POST", url, headers=headers, content=fixed))
        await response.aread()
        return response.status_code

    async def aclose(self) -> None:
        await self.inner.aclose()


def size_server() -> Elicitation:
    server, hitl = new_server("hostile-json", timeout=20)

    @server.tool()
    async def size(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Size?", Size)
        return f"n={answer.data.n}" if isinstance(answer, Accepted) else answer.action

    return hitl


@asynccontextmanager
async def hostile_client(url: str, raw: bytes, mode: str, **options: Any) -> AsyncIterator[tuple[Client, Hostile]]:
    transport = Hostile(raw)
    async with (
        httpx2.AsyncClient(transport=transport, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,
    ):
        yield client, transport


@pytest.mark.parametrize(("way", "mode"), PATHS, ids=[f"{w}-{m}" for w, m in PATHS])
@pytest.mark.parametrize("payload", list(PAYLOADS))
async def test_a_hostile_json_answer_is_refused_clearly_without_a_traceback_and_the_question_stays_answerable(
    way: str, mode: str, payload: str, logs: Logs
) -> None:
    hitl = size_server()
    async with serving(hitl) as url:
        if way == "retry":
            done = await through_a_retry(url, PAYLOADS[payload], payload)
        elif way == "model":
            done = await through_the_model(url, PAYLOADS[payload], payload, mode)
        else:
            done = await through_a_native_reply(url, PAYLOADS[payload], payload)
    assert isinstance(done, CallToolResult)
    assert text_of(done) == "n=2.5"
    assert hitl.pending_questions == 0
    logs.assert_no_traceback()


async def through_a_retry(url: str, raw: bytes, payload: str) -> CallToolResult | InputRequiredResult:
    async with hostile_client(url, raw, "auto", elicitation_callback=ScriptedHuman()) as (client, _):
        first = await client.session.call_tool("size", {}, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        [key] = first.input_requests or {}

        async def retry(state: str | None, value: Any) -> CallToolResult | InputRequiredResult:
            responses = {key: accept({"n": value})}
            return await client.session.call_tool(
                "size", {}, allow_input_required=True, input_responses=responses, request_state=state
            )

        if payload in NOT_FINITE:
            again = await retry(first.request_state, PLACEHOLDER)
            assert isinstance(again, InputRequiredResult)
            [asked] = (again.input_requests or {}).values()
            assert "n: must be a finite number" in asked.params.message
            [key] = again.input_requests or {}
            return await retry(again.request_state, 2.5)
        with pytest.raises(MCPError, match=r"Parse error|Server returned an error response"):
            await retry(first.request_state, PLACEHOLDER)
        return await retry(first.request_state, 2.5)  # the refused bytes spent nothing


async def through_the_model(url: str, raw: bytes, payload: str, mode: str) -> CallToolResult:
    async with hostile_client(url, raw, mode) as (client, _):
        elicit_id = pending_id(await client.call_tool("size", {}))
        if payload in NOT_FINITE:
            refused = await send_answer(client, elicit_id, "accept", {"n": PLACEHOLDER})
            assert refused.is_error
            assert "n: must be a finite number" in text_of(refused)
            assert "The question is still open" in text_of(refused)
        else:
            with pytest.raises(MCPError, match=r"Parse error|Server returned an error response"):
                await send_answer(client, elicit_id, "accept", {"n": PLACEHOLDER})
        return await send_answer(client, elicit_id, "accept", {"n": 2.5})


async def through_a_native_reply(url: str, raw: bytes, payload: str) -> CallToolResult:
    asked: list[str] = []

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"n": PLACEHOLDER if len(asked) == 1 else 2.5})

    results: list[CallToolResult] = []
    finished = anyio.Event()
    async with (
        hostile_client(url, raw, "legacy", elicitation_callback=person) as (client, transport),
        anyio.create_task_group() as tg,
    ):

        async def call() -> None:
            results.append(await client.call_tool("size", {}))
            finished.set()

        tg.start_soon(call)
        await reached(transport.answered)
        assert transport.answer is not None
        status, body = transport.answer
        if payload in NOT_FINITE:
            assert status == 202  # taken as a message; the answer is refused and the question asked again
        else:
            # The reply never reaches elicitkit: the SDK refuses the bytes, and the question waits on.
            assert (status, body) in ((413, b"Request body too large"), (400, body)), (status, body[:200])
            if status == 400:
                assert json.loads(body)["error"]["message"].startswith("Parse error")
            assert await transport.resend(2.5) == 202
        await reached(finished, 10)
    if payload in NOT_FINITE:
        assert len(asked) == 2
        assert "n: must be a finite number" in asked[1]
    return results[0]
