"""The server bench/soak.py drives: streamable HTTP on 127.0.0.1, a free port, both protocol eras.

    python bench/_soak_server.py --store memory:// [--secret S] [--question-timeout 5] [--run-expiry 5]
                                 [--session-idle-timeout 3]

Prints `READY <port>` once it accepts connections (served by bench/_node.py's `serve`).

Short timeouts, so that a soak ends with what its clients abandoned already expired: a question waits
`--question-timeout` seconds (5), a 2026-07-28 run waits `--run-expiry` seconds (5) for its next retry, and a
2025-11-25 session with nothing in flight is closed after `--session-idle-timeout` seconds (3). The clients
answer at once, so none of these fires for a run they keep going.

Tools:

- `review(tag)` asks three questions in sequence (`Answer 1 for <tag>?`, ...) with one journaled step
  between the first and the second, and returns `<tag>:<a1>,<a2>,<a3>`;

and `GET /soak/stats[?collect=1]` returns what the server holds: active runs, pending questions, open
2025-11-25 sessions, the steps performed (how many, and the tags performed more than once); `collect` runs the
garbage collector first, so the RSS read next counts only what is still referenced or kept by the allocator.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
from collections import Counter
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse

from elicitkit import Accepted, Elicitation

sys.path.insert(0, str(Path(__file__).parent))
from _node import serve

STEPS: Counter[str] = Counter()


def build(store: str, secret: str | None, question_timeout: float, run_expiry: float, idle: float) -> MCPServer:
    server = MCPServer("soak-bench")
    hitl = Elicitation(
        server, store=store, secret=secret, timeout=question_timeout, run_expiry=run_expiry, session_idle_timeout=idle
    )

    @server.tool()
    async def review(tag: str, ctx: Context) -> str:
        """Three questions, one step between the first two: the step must run once per run, whatever happens."""
        answers: list[str] = []
        for n in (1, 2, 3):
            answer = await hitl.text(ctx, f"Answer {n} for {tag}?")
            if not isinstance(answer, Accepted):
                return f"{tag}: {type(answer).__name__} at {n}"
            answers.append(answer.data)
            if n == 1:
                await hitl.step(ctx, "count", lambda: STEPS.update([tag]) or 1)
        return f"{tag}:{','.join(answers)}"

    @server.custom_route("/soak/stats", methods=["GET"])
    async def soak_stats(request: Request) -> JSONResponse:
        """What the server holds now (see the module docstring); not a tool call, so it holds no run itself."""
        if request.query_params.get("collect"):
            gc.collect()
        sessions = server.session_manager._server_instances  # bench-only: the SDK's open stateful sessions
        return JSONResponse(
            {
                "active_runs": hitl.active_runs,
                "pending_questions": hitl.pending_questions,
                "sessions": len(sessions),
                "steps": sum(STEPS.values()),
                "steps_twice": sorted(tag for tag, count in STEPS.items() if count > 1),
            }
        )

    return server


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="memory://")
    parser.add_argument("--secret")
    parser.add_argument("--question-timeout", type=float, default=5.0)
    parser.add_argument("--run-expiry", type=float, default=5.0)
    parser.add_argument("--session-idle-timeout", type=float, default=3.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    server = build(args.store, args.secret, args.question_timeout, args.run_expiry, args.session_idle_timeout)
    await serve(server.streamable_http_app())


if __name__ == "__main__":
    asyncio.run(main())
