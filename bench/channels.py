"""Push, not poll: how fast an answer given on a human channel resumes the tool that asked.

What it measures
----------------
One process on loopback: an `MCPServer` with `Elicitation(channels=[...])`
served over streamable HTTP by uvicorn, an `mcp.Client` calling its tool over
HTTP (both eras), and a channel whose callback is a real HTTP endpoint next to
elicitkit's pages (`POST /elicit/channels/bench/answer`, what a chat service's
interaction webhook is). The tool asks one question per call with
`hitl.confirm(..., via=Via("bench", ...))`; the driver waits until the
question is posted, then POSTs the answer to the callback with httpx.

Latency = from just before the callback POST is sent until the tool body
resumes with the answer (a timestamp taken inside the tool, same clock): the
callback's HTTP round, the desk (token, approvers, validation, the one-time
take), and delivery to the suspended body. A single-process memory store: the
cross-node path is measured by `bench/cross_node.py`.

The reference line is mcp.do's `elicit` tool, which polls its Human Functions
backend every 5 s (its documented interval): an answer waits for the next poll,
on average half an interval, so its p50 is ~2,500 ms however fast the person is.

Run: `python bench/channels.py [--n 200] [--warmup 20] [--mode legacy|auto]`.
The last line is `p50_ms=<median>`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import httpx
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from elicitkit import Elicitation
from elicitkit.channels.base import Closing, Desk, Prompt, Responder, Via
from elicitkit.testing import serve_http

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
MCP_DO_POLL_S = 5.0


class BenchChannel:
    """A channel whose interaction callback is a plain JSON POST (no signature: the bench times elicitkit)."""

    name = "bench"

    def __init__(self) -> None:
        self.desk: Desk | None = None
        self.posted: anyio.Event = anyio.Event()
        self.prompt: Prompt | None = None

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        self.desk = desk

    def routes(self) -> Sequence[Route]:
        return [Route("/elicit/channels/bench/answer", self.answer, methods=["POST"])]

    async def answer(self, request: Request) -> JSONResponse:
        body = await request.json()
        assert self.desk is not None
        verdict = await self.desk.reply(body["token"], Responder("bench", "U1"), "accept", {"value": True})
        return JSONResponse({"status": verdict.status})

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        self.prompt = prompt
        self.posted.set()
        return {}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        return None


async def bench(n: int, warmup: int, mode: str) -> list[float]:
    server = MCPServer("bench-channels")
    channel = BenchChannel()
    hitl = Elicitation(server, channels=[channel], timeout=30)
    resumed: list[float] = []

    @server.tool()
    async def approve(ctx: Context) -> str:
        result = await hitl.confirm(ctx, "Approve?", via=Via("bench", "#bench"))
        resumed.append(time.perf_counter())
        return result.action

    samples: list[float] = []
    async with serve_http(server) as url, Client(url, mode=mode) as client, httpx.AsyncClient() as http:
        callback = url.removesuffix("/mcp") + "/elicit/channels/bench/answer"
        for i in range(warmup + n):
            channel.posted = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "approve", {})
                with anyio.fail_after(10):
                    await channel.posted.wait()
                assert channel.prompt is not None
                sent = time.perf_counter()
                reply = await http.post(callback, json={"token": channel.prompt.token})
                assert reply.json() == {"status": "answered"}, reply.text
            if i >= warmup:
                samples.append((resumed[-1] - sent) * 1000)
    return samples


def report(samples: list[float], n: int, mode: str, took: float) -> float:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    reference = MCP_DO_POLL_S * 1000 / 2
    print(f"channel answer -> tool resumed, {ERAS[mode]} client over HTTP, {n} questions ({took:.1f} s)")
    print(f"  elicitkit (push)           p50 {p50:8.2f} ms   p90 {p90:8.2f} ms   p99 {p99:8.2f} ms")
    print(f"  mcp.do (5 s poll, ref.)    p50 {reference:8.2f} ms   (half its documented poll interval)")
    print(f"  ratio reference/elicitkit  {reference / p50:8.0f}x")
    return p50


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="questions measured (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="questions before measuring (default 20)")
    parser.add_argument("--mode", choices=sorted(ERAS), default="legacy", help="client era (default legacy)")
    args = parser.parse_args(argv)
    if args.n < 1 or args.warmup < 0:
        parser.error("--n must be at least 1 and --warmup at least 0")
    logging.disable(logging.INFO)  # the server's request logs and the audit trail would drown the figures
    start = time.perf_counter()
    samples = anyio.run(bench, args.n, args.warmup, args.mode)
    p50 = report(samples, args.n, args.mode, time.perf_counter() - start)
    print(f"p50_ms={p50:.2f}")


if __name__ == "__main__":
    main()
