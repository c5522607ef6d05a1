"""Throughput of two nodes: elicitkit answers per second against bare SDK tool calls per second, same rig.

What it measures
----------------
Real processes on loopback: one `redis-server` (no persistence), two elicitkit
nodes sharing it and two bare-SDK nodes (`bench/_node.py`, uvicorn, streamable
HTTP, 2026-07-28), and this driver, which keeps `--concurrency` requests in
flight, spread evenly over the two nodes of a pair, as a load balancer would.

- `bare SDK calls`: `tools/call plain` on the two bare-SDK nodes (an `MCPServer`
  without elicitkit; the tool asks nothing). The floor: what the SDK, HTTP and
  this driver cost per call.
- `elicitkit answers`: the person's answers to `--runs` runs that wait at once
  (started beforehand, not timed, owners alternating), each retried on the next
  node round robin, so half land on the owner (a local resume) and half on the
  other node (Redis: load, claim, journal, then forwarded to the owner over
  pub/sub and its outcome sent back). Every result is checked: its own answer,
  finished by its owner.
- `elicitkit plain calls` (for reference): `plain` on the elicitkit nodes,
  which hosts every 2026-07-28 call and so writes and deletes a run record.

Phases alternate, `--repeat` times each, and the ratio is taken per repeat
(elicitkit answers/s over the bare calls/s measured next to it), so a busy
moment of this 2-core machine weighs on both sides of one ratio.

How to run
----------
From the repository root (needs `redis-server` on PATH, as the tests do)::

    .venv/bin/python bench/throughput.py                   # about a minute
    .venv/bin/python bench/throughput.py --runs 500 --concurrency 20 --repeat 3

The last line is always ``ratio=<x>``: the median over repeats of elicitkit
answers/s divided by bare SDK calls/s (goal >= 0.8). The driver shares the
machine's two cores with the nodes, so absolute rates understate a real
deployment; the ratio compares like with like.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from importlib.metadata import version
from pathlib import Path

import anyio
from mcp import Client
from mcp_types import CallToolResult, InputRequiredResult

sys.path.insert(0, str(Path(__file__).parent))
from cross_node import Node, connect, redis_version, retry, start_run, text

from tests.redis_server import RedisServer

GOAL = 0.8


class BareNode(Node):
    """A node of the bare SDK: `MCPServer` with the plain tool, no elicitkit, no Redis."""

    def __init__(self, name: str, log: Path) -> None:
        super().__init__("", name, log)
        self.args = [sys.executable, str(Path(__file__).with_name("_node.py")), "--bare", "--node", name]


async def timed(count: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> float:
    """Operations per second: `one(i)` for i in range(count), `concurrency` at a time."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def limited(i: int) -> None:
        async with limiter:
            await one(i)

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(limited, i)
    return count / (time.perf_counter() - started)


async def plain_calls(clients: list[tuple[Client, str]], count: int, concurrency: int, base: int) -> float:
    async def one(i: int) -> None:
        client, node = clients[i % 2]
        result = await client.call_tool("plain", {"tag": f"p{base + i}"})
        if not isinstance(result, CallToolResult) or text(result) != f"p{base + i}@{node}":
            raise RuntimeError(f"plain call {base + i}: unexpected {str(result)[:300]}")

    return await timed(count, concurrency, one)


async def answers(clients: list[tuple[Client, str]], count: int, concurrency: int, base: int) -> float:
    """Start `count` runs (not timed), then answer them all, round robin over the nodes; answers per second."""
    waiting: dict[int, InputRequiredResult] = {}
    limiter = anyio.CapacityLimiter(concurrency)

    async def start(i: int) -> None:
        async with limiter:
            waiting[i] = await start_run(clients[i % 2][0], f"r{base + i}")

    async with anyio.create_task_group() as tg:
        for i in range(count):
            tg.start_soon(start, i)

    async def one(i: int) -> None:
        owner = clients[i % 2][1]
        # Runs alternate owners, answers alternate nodes every two: half land on the owner, half on the other.
        await retry(clients[(i // 2) % 2][0], f"r{base + i}", waiting[i], f"w{base + i}", owner)

    return await timed(count, concurrency, one)


async def bench(runs: int, concurrency: int, repeat: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {"bare": [], "answers": [], "plain": []}
    with tempfile.TemporaryDirectory(prefix="elicitkit-throughput-") as tmp:
        redis = RedisServer(Path(tmp) / "redis")
        await redis.start()
        nodes = [
            *(Node(redis.url, name, Path(tmp) / f"{name}.log") for name in ("node-a", "node-b")),
            *(BareNode(name, Path(tmp) / f"{name}.log") for name in ("bare-a", "bare-b")),
        ]
        try:
            for node in nodes:
                await node.start()
            async with AsyncExitStack() as stack:
                clients = [(await stack.enter_async_context(connect(n, concurrency)), n.name) for n in nodes]
                elicitkit, bare = clients[:2], clients[2:]
                await plain_calls(bare, 50, 10, -1000)  # warm-up: connections, imports, first requests
                await plain_calls(elicitkit, 50, 10, -1000)
                await answers(elicitkit, 50, 10, -1000)
                for r in range(repeat):
                    base = r * 10 * runs
                    rates["bare"].append(await plain_calls(bare, runs, concurrency, base))
                    rates["answers"].append(await answers(elicitkit, runs, concurrency, base + runs))
                    rates["plain"].append(await plain_calls(elicitkit, runs, concurrency, base + 2 * runs))
        except BaseException:
            # A request failed (seen rarely: httpx2.ReadError); what the nodes said goes with the traceback.
            for node in nodes:
                code = node.process.poll() if node.process is not None else None
                state = "still running" if code is None else f"exited with {code}"
                tail = node.log.read_text(errors="replace").splitlines()[-15:] if node.log.exists() else []
                print(f"--- {node.name} ({state}), the end of its log:", *tail, sep="\n", file=sys.stderr)
            raise
        finally:
            for node in nodes:
                node.stop()
            await redis.stop()
        logged = [line for node in nodes for line in node.notable()]
    if logged:
        print("nodes logged:", *logged[:20], sep="\n  ", file=sys.stderr)
    return rates


def report(rates: dict[str, list[float]], runs: int, concurrency: int) -> float:
    print(
        f"elicitkit throughput: 2 nodes (uvicorn, streamable HTTP, 2026-07-28) + redis-server {redis_version()}, "
        f"python {platform.python_version()}, mcp {version('mcp')}; {runs} operations per phase, "
        f"{concurrency} in flight, {len(rates['bare'])} repeats"
    )
    rows = [
        ("bare SDK calls (plain, asks nothing)", "bare"),
        ("elicitkit answers (half forwarded over Redis)", "answers"),
        ("elicitkit plain calls (reference)", "plain"),
    ]
    for label, key in rows:
        values = ", ".join(f"{v:.0f}" for v in rates[key])
        print(f"  {label:<48} median {statistics.median(rates[key]):7.1f}/s   ({values})")
    ratios = [a / b for a, b in zip(rates["answers"], rates["bare"], strict=True)]
    ratio = statistics.median(ratios)
    plain = statistics.median(p / b for p, b in zip(rates["plain"], rates["bare"], strict=True))
    print(f"  paired ratios, answers / bare calls: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"  plain calls with elicitkit / bare calls: {plain:.2f}")
    print(f"  goal ratio >= {GOAL}: {'met' if ratio >= GOAL else 'missed'}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="operations per phase (default 1000)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests in flight (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="repeats of each phase (default 3)")
    args = parser.parse_args()
    rates = anyio.run(bench, args.runs, args.concurrency, args.repeat)
    ratio = report(rates, args.runs, args.concurrency)
    print(f"ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
