"""A server node for the multi-process tests: streamable HTTP on 127.0.0.1, a free port.

    python tests/node_app.py --store URL --node NAME --effects FILE [--secret S]
                             [--lease SECONDS] [--forward-timeout SECONDS] [--gates DIR] [--trace]
                             [--framework mcp|fastmcp]

Prints `READY <port>` once it accepts connections. Its `provision` tool asks,
performs a journaled side effect (appending a line to FILE), asks again, and
returns; `review` performs its side effect first, then asks twice. The tests
count FILE's lines to prove each step ran exactly once.

For the chaos tests (tests/chaos/):

- `--gates DIR`: `provision`'s step waits until the file DIR/<name> exists before
  its side effect, so a test can act (kill the node, drop the connection) while
  a step runs;
- `--trace`: prints what the node goes through on stdout, one line each:
  `HTTP <n> in <method>` when a POST arrives, `HTTP <n> dropped` when its
  client closes the connection before the response starts, `ASK <message>` as
  a tool asks, `STEP <name> <arg> waits` as a gated step waits;
- SIGUSR1 prints `STATS active_runs=<n> pending_questions=<n>`.

`--framework fastmcp` serves the same tools from a fastmcp `FastMCP` (tests/fastmcp/).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Accepted, Elicitation

GATE_POLL = 0.02  # seconds between looks at a step's gate file


def build(
    store: str,
    node: str,
    effects: str,
    secret: str | None,
    timing: dict[str, float],
    *,
    gates: Path | None = None,
    trace: Callable[[str], None] = lambda line: None,
    framework: str = "mcp",
) -> tuple[Any, Elicitation]:
    server: Any
    if framework == "fastmcp":
        # Run as a script, this file's folder comes first on sys.path, and tests/fastmcp/ would shadow fastmcp.
        here = str(Path(__file__).resolve().parent)
        sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != here]
        import fastmcp

        server, context = fastmcp.FastMCP("cluster-test"), fastmcp.Context

        def tool(fn: Any) -> Any:
            fn.__annotations__["ctx"] = context  # fastmcp injects its own Context by this annotation
            return server.tool(fn)
    else:
        server = MCPServer("cluster-test")
        tool = server.tool()
    hitl = Elicitation(server, store=store, node_id=node, secret=secret, **timing)

    def effect(line: str) -> None:
        with open(effects, "a") as f:
            f.write(f"{line} on {node}\n")
            f.flush()
            os.fsync(f.fileno())

    async def create_vm(name: str) -> str:
        gate = None if gates is None else gates / name
        if gate is not None and not gate.exists():
            trace(f"STEP create-vm {name} waits")
            while not gate.exists():  # noqa: ASYNC110 - the test opens the gate by creating a file
                await asyncio.sleep(GATE_POLL)
        effect(f"create-vm {name}")
        return f"vm-{name}"

    def open_ticket(name: str) -> str:
        effect(f"open-ticket {name}")
        return f"ticket-{name}"

    @tool
    async def provision(name: str, ctx: Context) -> str:
        trace(f"ASK Provision {name}?")
        go = await hitl.text(ctx, f"Provision {name}? Say a code word.")
        if not isinstance(go, Accepted):
            return f"{name}: not provisioned"
        vm = await hitl.step(ctx, "create-vm", lambda: create_vm(name))
        trace(f"ASK Size for {name}?")
        size = await hitl.choice(ctx, f"Size for {name}?", ["small", "large"])
        if not isinstance(size, Accepted):
            return f"{name}: {vm} without a size"
        return f"{name}: {vm} {size.data} (code {go.data}) finished on {node}"

    @tool
    async def review(name: str, ctx: Context) -> str:
        """Its one side effect comes first: no step follows its questions."""
        ticket = await hitl.step(ctx, "open-ticket", lambda: open_ticket(name))
        trace(f"ASK Reviewer for {name}?")
        reviewer = await hitl.text(ctx, f"Reviewer for {name}?")
        trace(f"ASK Verdict for {name}?")
        verdict = await hitl.choice(ctx, f"Verdict for {name}?", ["approve", "reject"])
        if not isinstance(reviewer, Accepted) or not isinstance(verdict, Accepted):
            return f"{name}: {ticket} not reviewed"
        return f"{name}: {ticket} {verdict.data} by {reviewer.data} finished on {node}"

    return server, hitl


def traced(app: Any, trace: Callable[[str], None]) -> Any:
    """`app`, printing each POST as it arrives and each one whose client went away before its response."""
    numbers = itertools.count(1)

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        n = next(numbers)
        headers = dict(scope["headers"])
        trace(f"HTTP {n} in {headers.get(b'mcp-method', b'?').decode()}")
        responded = False

        async def watched_receive() -> Any:
            message = await receive()
            if message["type"] == "http.disconnect" and not responded:
                trace(f"HTTP {n} dropped")
            return message

        async def watched_send(message: Any) -> None:
            nonlocal responded
            if message["type"] == "http.response.start":
                responded = True
            await send(message)

        await app(scope, watched_receive, watched_send)

    return wrapped


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--effects", required=True)
    parser.add_argument("--secret")
    parser.add_argument("--lease", type=float)
    parser.add_argument("--forward-timeout", type=float)
    parser.add_argument("--gates", type=Path)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--framework", choices=["mcp", "fastmcp"], default="mcp")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    def trace(line: str) -> None:
        if args.trace:
            print(line, flush=True)

    timing = {"lease": args.lease, "forward_timeout": args.forward_timeout}
    _, hitl = build(
        args.store,
        args.node,
        args.effects,
        args.secret,
        {k: v for k, v in timing.items() if v is not None},
        gates=args.gates,
        trace=trace,
        framework=args.framework,
    )
    asyncio.get_running_loop().add_signal_handler(
        signal.SIGUSR1,
        lambda: print(f"STATS active_runs={hitl.active_runs} pending_questions={hitl.pending_questions}", flush=True),
    )
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(traced(hitl.http_app(), trace), log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    original = http.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original(sockets=sockets)
        print(f"READY {port}", flush=True)

    http.startup = startup  # type: ignore[method-assign]
    await http.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
