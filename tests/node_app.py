"""A server node for the multi-process tests: streamable HTTP on 127.0.0.1, a free port.

    python tests/node_app.py --store URL --node NAME --effects FILE [--secret S]
                             [--lease SECONDS] [--forward-timeout SECONDS]

Prints `READY <port>` once it accepts connections. Its `provision` tool asks,
performs a journaled side effect (appending a line to FILE), asks again, and
returns; the tests count FILE's lines to prove each step ran exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Accepted, Elicitation


def build(store: str, node: str, effects: str, secret: str | None, timing: dict[str, float]) -> MCPServer:
    server = MCPServer("cluster-test")
    hitl = Elicitation(server, store=store, node_id=node, secret=secret, **timing)

    def create_vm(name: str) -> str:
        with open(effects, "a") as f:
            f.write(f"create-vm {name} on {node}\n")
            f.flush()
            os.fsync(f.fileno())
        return f"vm-{name}"

    @server.tool()
    async def provision(name: str, ctx: Context) -> str:
        go = await hitl.text(ctx, f"Provision {name}? Say a code word.")
        if not isinstance(go, Accepted):
            return f"{name}: not provisioned"
        vm = await hitl.step(ctx, "create-vm", lambda: create_vm(name))
        size = await hitl.choice(ctx, f"Size for {name}?", ["small", "large"])
        if not isinstance(size, Accepted):
            return f"{name}: {vm} without a size"
        return f"{name}: {vm} {size.data} (code {go.data}) finished on {node}"

    return server


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--effects", required=True)
    parser.add_argument("--secret")
    parser.add_argument("--lease", type=float)
    parser.add_argument("--forward-timeout", type=float)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    timing = {"lease": args.lease, "forward_timeout": args.forward_timeout}
    server = build(args.store, args.node, args.effects, args.secret, {k: v for k, v in timing.items() if v is not None})
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    original = http.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original(sockets=sockets)
        print(f"READY {port}", flush=True)

    http.startup = startup  # type: ignore[method-assign]
    await http.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
