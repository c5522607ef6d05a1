"""A server node for bench/cross_node.py and bench/throughput.py: streamable HTTP on 127.0.0.1, a free port.

    python bench/_node.py --store redis://127.0.0.1:PORT/0 --node NAME --secret S
    python bench/_node.py --bare --node NAME --secret S  # the bare SDK: no elicitkit at all
    python bench/_node.py --bare --once redis://127.0.0.1:PORT/0 --node NAME --secret S  # each round taken once
    python bench/_node.py ... --freeze-gc  # gc.freeze() once built, as docs/durable.md recommends for any server

Prints `READY <port>` once it accepts connections. Modelled on tests/node_app.py.

Tools:

- `ask(tag)` asks one question with `hitl.text` and returns `"<tag>=<answer>@<node>"`,
  so the caller can check that every run got its own answer and which node finished it;
- `ask2(tag)` asks two questions, one after the other, and returns `"<tag>=<first>+<second>@<node>"`; on a
  `--bare` node it is the SDK's own 2026-07-28 way: two `Resolve` parameters, the second needing the first, so
  each round asks one; the call is stateless (every round runs the resolvers again, the answers so far ride the
  requestState, sealed with a key derived from `--secret` that both bare nodes share); with `--once`, a round's
  requestState is taken once across both nodes (`SET NX` of its digest in that Redis, before the SDK opens it),
  so a retry sent twice, or replayed, is refused: what elicitkit does with every round;
- `plain(tag)` asks nothing and returns `"<tag>@<node>"`;
- `bench_stats(reset)` (not on `--bare`) returns this node's server-side timings (ms) and clears them.

Server-side timings, taken without touching elicitkit's source: the node wraps
two of elicitkit's functions from the outside, in this process only.

- `retry`: the engine's `Inbox.retry` (a retry carrying a requestState,
  from the moment elicitkit's middleware sees it until the outcome is ready to
  return), split by whether the run was held here (`retry_local`) or elsewhere
  (`retry_remote`, i.e. load + claim + journal in Redis, then forwarding);
- `forward`: `Cluster.forward` on this node (publish to the owner, wait for its
  acknowledgement and the run's next outcome on a reply channel).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import logging
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Annotated, Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit._core.codec import decode_state

TIMINGS: dict[str, list[float]] = {"retry_local": [], "retry_remote": [], "forward": []}


def build(store: str, node: str, secret: str) -> MCPServer:
    server = MCPServer("cross-node-bench")
    hitl = Elicitation(server, store=store, node_id=node, secret=secret)
    engine = hitl._engine  # bench-only: read which runs are held here, wrap the forwarder

    answers = engine.answers
    original_retry = answers.retry

    async def timed_retry(rctx: Any, params: Mapping[str, Any], call_next: Any) -> Any:
        decoded = decode_state(str(params.get("requestState")))
        kind = "retry_local" if decoded and decoded[0] in engine.registry.runs else "retry_remote"
        start = time.perf_counter()
        try:
            return await original_retry(rctx, params, call_next)
        finally:
            TIMINGS[kind].append((time.perf_counter() - start) * 1000)

    answers.retry = timed_retry  # type: ignore[method-assign]

    cluster = engine.cluster
    original_forward = cluster.forward

    async def timed_forward(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await original_forward(*args, **kwargs)
        finally:
            TIMINGS["forward"].append((time.perf_counter() - start) * 1000)

    cluster.forward = timed_forward  # type: ignore[method-assign]

    add_plain(server, node)

    @server.tool()
    async def ask(tag: str, ctx: Context) -> str:
        """One question; the answer comes back with the node that finished the run."""
        answer = await hitl.text(ctx, f"Code word for {tag}?")
        if not isinstance(answer, Accepted):
            return f"{tag}: not answered"
        return f"{tag}={answer.data}@{node}"

    @server.tool()
    async def ask2(tag: str, ctx: Context) -> str:
        """Two questions, one after the other; the answers come back with the node that finished the run."""
        first = await hitl.text(ctx, f"First word for {tag}?")
        second = await hitl.text(ctx, f"Second word for {tag}?")
        if not isinstance(first, Accepted) or not isinstance(second, Accepted):
            return f"{tag}: not answered"
        return f"{tag}={first.data}+{second.data}@{node}"

    @server.tool()
    async def bench_stats(reset: bool = True) -> dict[str, list[float]]:
        """This node's server-side timings in ms (see the module docstring)."""
        snapshot = {k: list(v) for k, v in TIMINGS.items()}
        if reset:
            for samples in TIMINGS.values():
                samples.clear()
        return snapshot

    return server


def add_plain(server: MCPServer, node: str) -> None:
    @server.tool()
    async def plain(tag: str) -> str:
        """Asks nothing: the cost of a tool call alone."""
        return f"{tag}@{node}"


class Word(BaseModel):
    """What `hitl.text` asks for, as a model: `{"value": str}`."""

    value: str


async def first_word(tag: str) -> Elicit[Word]:
    return Elicit(f"First word for {tag}?", Word)


async def second_word(tag: str, first: Annotated[Word, Resolve(first_word)]) -> Elicit[Word]:
    """Needs the first answer, so it is asked in the round after it, as elicitkit's body asks its second."""
    return Elicit(f"Second word for {tag}?", Word)


def bare(node: str, secret: str, once: str | None = None) -> MCPServer:
    """The bare SDK: `plain`, and `ask2` in the SDK's own 2026-07-28 way (stateless: resolvers run again on every
    round, the answers so far ride the requestState, sealed with a key both nodes share). `once`: a Redis URL
    where each round's requestState is taken once."""
    security = RequestStateSecurity(keys=[hashlib.sha256(secret.encode()).digest()])
    server = MCPServer("bare-sdk-bench", request_state_security=security)
    if once is not None:
        server.middleware.insert(0, taken_once(once))  # outermost: it sees the sealed requestState as sent
    add_plain(server, node)

    @server.tool()
    async def ask2(
        tag: str,
        first: Annotated[Word, Resolve(first_word)],
        second: Annotated[Word, Resolve(second_word)],
    ) -> str:
        """Two questions, one round each; the node that answers the last round finishes the call."""
        return f"{tag}={first.value}+{second.value}@{node}"

    return server


ONCE_TTL = 600
"""How long a taken round is remembered: the SDK's requestState TTL, after which it cannot be opened anyway."""


def taken_once(url: str) -> Any:
    """Middleware that refuses a `tools/call` whose requestState was taken before, on any node sharing `url`."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS
    from redis.asyncio import Redis

    redis = Redis.from_url(url)

    async def middleware(ctx: Any, call_next: Any) -> Any:
        state = (ctx.params or {}).get("requestState") if ctx.method == "tools/call" else None
        if isinstance(state, str):
            digest = hashlib.sha256(state.encode()).hexdigest()[:32]
            if not await redis.set(f"round:{digest}", b"1", nx=True, ex=ONCE_TTL):
                raise MCPError(code=INVALID_PARAMS, message="This requestState was already used")
        return await call_next(ctx)

    return middleware


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store")
    parser.add_argument("--node", required=True)
    parser.add_argument("--secret")
    parser.add_argument("--bare", action="store_true", help="the bare SDK: no elicitkit (`plain` and `ask2`)")
    parser.add_argument("--once", help="with --bare: a Redis URL where each round's requestState is taken once")
    parser.add_argument("--freeze-gc", action="store_true", help="gc.freeze() once the server is built")
    args = parser.parse_args()
    if not args.secret or not (args.bare or args.store):
        parser.error("--secret is needed, and --store unless --bare")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    server = bare(args.node, args.secret, args.once) if args.bare else build(args.store, args.node, args.secret)
    if args.freeze_gc:  # what the server was built with lives as long as it does: no collection scans it again
        gc.collect()
        gc.freeze()
    # Idle keep-alive connections stay open: a pair idles while the others are measured, and uvicorn's default
    # (closing them after 5 s) raced the client reusing one, whose request then failed with a ReadError.
    await serve(server.streamable_http_app(), timeout_keep_alive=3600)


def bound_socket() -> socket.socket:
    """A TCP socket bound to 127.0.0.1 at a free port.

    proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and with
    proto 0 (socket.socket's default) Nagle holds uvicorn's response body behind its headers until the
    client's delayed ACK, ~40 ms on every back-to-back request.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


async def serve(app: Any, sock: socket.socket | None = None, **uvicorn_options: Any) -> None:
    """Serve `app` on `sock` (by default 127.0.0.1 at a free port), print `READY <port>`, and stop when the
    parent process is gone. `uvicorn_options` go to `uvicorn.Config` (quiet, lifespan on, backlog 4096)."""
    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    options: dict[str, Any] = {"log_level": "warning", "access_log": False, "lifespan": "on", "backlog": 4096}
    config = uvicorn.Config(app, **(options | uvicorn_options))
    http = uvicorn.Server(config)
    original = http.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original(sockets=sockets)
        print(f"READY {port}", flush=True)

    http.startup = startup  # type: ignore[method-assign]
    watchdog = asyncio.create_task(exit_with_parent(http))
    try:
        await http.serve(sockets=[sock])
    finally:
        watchdog.cancel()


async def exit_with_parent(http: uvicorn.Server) -> None:
    """Shut down when the benchmark that started this node is gone (killed before it could stop us)."""
    parent = os.getppid()
    while True:  # polled: the kernel signals nothing here
        await asyncio.sleep(1)
        if os.getppid() != parent:
            http.should_exit = True
            return


if __name__ == "__main__":
    asyncio.run(main())
