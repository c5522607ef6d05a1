"""Throughput of two nodes, the same work: a two-question tool, elicitkit against the bare SDK's own 2026-07-28 way.

What it measures
----------------
Real processes on loopback: one `redis-server` (no persistence), two elicitkit
nodes sharing it and two bare-SDK nodes (`bench/_node.py`, uvicorn, streamable
HTTP, 2026-07-28), and this driver. Both pairs run the same tool, `ask2(tag)`,
which asks two questions one after the other and returns both answers:

- elicitkit: a body doing `await hitl.text(ctx, ...)` twice. The body waits,
  suspended on the node that started it (its *owner*), between rounds; an answer
  that lands on the other node is journaled in Redis there and forwarded to
  the owner over pub/sub, which resumes the body and sends its outcome back;
- the bare SDK: two `Resolve` parameters, the second needing the first, so
  each round asks one question. Stateless: every round runs the resolvers
  again, and the answers so far ride the requestState, sealed with a key both
  bare nodes share, so either node can take any round;
- the bare SDK, each round taken once: the same two nodes' way, and a
  middleware that takes each round's requestState once across both nodes
  (`SET NX` of its digest in the same Redis) before the SDK opens it. The plain
  bare SDK takes a retry as often as it is sent: a doubled or replayed final
  retry runs the tool again. elicitkit spends every round once, and so does
  this side: the same work, shown next to the issue's pair.

With `--gc freeze`, every node, of either side, calls `gc.freeze()` once it
is built, as docs/durable.md recommends: what the process was built with (the
modules, the app, some 110,000 objects) is left out of every later full
collection, which otherwise scans all of it, on either side, each time. By
default the nodes keep Python's own settings.

Each phase runs `--runs` calls through all three of their requests, stage by
stage, `--concurrency` requests in flight, spread over the two nodes of a pair
the same way for both (the load balancer, round robin):

1. start every call (run i on node i % 2): each returns an `InputRequiredResult`
   with the first question, so `--runs` calls wait at once;
2. answer every first question, then 3. every second one. The answers of a run
   go one to each node, so half of all answers land on the elicitkit run's
   owner (a local resume) and half on the other node (forwarded).

The driver: each of the `--concurrency` request slots has its own client, and
its own HTTP connection, to each node, and sends its requests one after the
other. With one client per node, all slots shared its connection pool, which
(httpcore's) looks at every pooled connection on every request: the driver's
own cost per request grew with how many requests a side held in flight, so
the slower side was charged for the driver's work too (one node, 50 in
flight, the same requests: 1,272 us of driver CPU per request to elicitkit,
1,082 us to the bare SDK; with a connection per slot, 707 us and 701 us).

Every result is checked: each call gets its own two answers, and an elicitkit
run is finished by its owner (its answers really were forwarded, not taken
over and replayed). Answers per second = 2 x `--runs` / the wall time of the
three stages (the starts count: they are part of the same work, and where
elicitkit records a run).

The three phases alternate, bare SDK first on even repeats and elicitkit first
on odd ones, `--repeat` times; each repeat gives one ratio (elicitkit answers/s
over the bare SDK's measured next to it), so a busy moment of the machine
weighs on both sides of one ratio. `--plain` adds, for reference, tool calls
that ask nothing on each pair (the previous yardstick).

How to run
----------
From the repository root (needs `redis-server` on PATH, as the tests do)::

    .venv/bin/python bench/throughput.py                   # a minute or two
    .venv/bin/python bench/throughput.py --runs 200 --concurrency 20 --repeat 3

How to read it
--------------
Per side: the median answers/s over repeats, each repeat's figure, and each
stage's requests/s (medians). Then the per-repeat ratios. The last line is
always ``ratio=<x>``: the median of the per-repeat ratios of elicitkit
answers/s to bare SDK answers/s (goal >= 0.8, issue 31); the line before it
gives elicitkit over the bare SDK that takes each round once. The driver shares the
machine's cores with the nodes, so absolute rates understate a real
deployment; the ratio compares like with like. A missed goal is reported,
never a failing exit code.
"""

from __future__ import annotations

import argparse
import platform
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Literal

import anyio
from mcp import Client
from mcp_types import CallToolResult, InputRequiredResult

sys.path.insert(0, str(Path(__file__).parent))
from cross_node import SECRET, Node, connect, redis_version, text

from elicitkit.testing import accept
from tests.redis_server import RedisServer

GOAL = 0.8
STAGES = ("start", "first answer", "second answer")
Side = Literal["bare", "checked", "elicitkit"]


class BareNode(Node):
    """A node of the bare SDK: `MCPServer` with `ask2` and `plain`, no elicitkit; with `once` (a Redis URL), each
    round's requestState is taken once there."""

    def __init__(self, name: str, log: Path, once: str | None = None) -> None:
        super().__init__("", name, log)
        self.args = [sys.executable, str(Path(__file__).with_name("_node.py")), "--bare", "--node", name]
        self.args += ["--secret", SECRET, *(["--once", once] if once else [])]


Nodes = list[tuple[Client, str]]
"""A pair's two nodes, as one request slot reaches them: its own client (and connection) to each."""
Slots = list[Nodes]
"""A pair as the driver reaches it: one `Nodes` per request in flight."""


@dataclass
class Phase:
    """One side's figures over the repeats."""

    answers: list[float] = field(default_factory=list)
    """Answers per second, one per repeat."""
    stages: list[list[float]] = field(default_factory=lambda: [[] for _ in STAGES])
    """Requests per second of each stage, one per repeat."""
    plain: list[float] = field(default_factory=list)


async def timed(count: int, slots: Slots, one: Callable[[int, Nodes], Awaitable[None]]) -> float:
    """Seconds for `one(i, nodes)`, i in range(count), one request in flight per slot, each on its slot's clients."""
    jobs = iter(range(count))

    async def slot(nodes: Nodes) -> None:
        for i in jobs:  # one shared iterator: each i goes to exactly one slot
            await one(i, nodes)

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for nodes in slots[:count]:
            tg.start_soon(slot, nodes)
    return time.perf_counter() - started


async def ask2(
    client: Client, tag: str, previous: InputRequiredResult | None, word: str
) -> CallToolResult | InputRequiredResult:
    """One request of `ask2`: the first call, or a retry answering `previous`'s question with `word`."""
    if previous is None:
        return await client.session.call_tool("ask2", {"tag": tag}, allow_input_required=True)
    return await client.session.call_tool(
        "ask2",
        {"tag": tag},
        input_responses={key: accept({"value": word}) for key in previous.input_requests or {}},
        request_state=previous.request_state,
        allow_input_required=True,
    )


async def two_questions(slots: Slots, side: Side, runs: int, base: int, into: Phase) -> None:
    """`runs` calls of `ask2`, stage by stage; appends answers/s and each stage's requests/s to `into`."""
    waiting: list[InputRequiredResult | None] = [None] * runs
    words = [(f"a-{secrets.token_hex(4)}", f"b-{secrets.token_hex(4)}") for _ in range(runs)]

    def node(i: int, stage: int) -> int:
        # The load balancer: runs start on alternate nodes; a run's two answers go one to each node, so that on
        # elicitkit half of all answers land on the run's owner (i % 2) and half on the other node.
        return i % 2 if stage == 0 else (i // 2 + stage - 1) % 2

    def stage(k: int) -> Callable[[int, Nodes], Awaitable[None]]:
        async def one(i: int, nodes: Nodes) -> None:
            tag = f"q{base + i}"
            client, name = nodes[node(i, k)]
            result = await ask2(client, tag, waiting[i], words[i][k - 1] if k else "")
            if k < 2:
                if not isinstance(result, InputRequiredResult) or len(result.input_requests or {}) != 1:
                    raise RuntimeError(f"{side} {tag}, {STAGES[k]}: expected one question, got {str(result)[:300]}")
                waiting[i] = result
                return
            finisher = nodes[i % 2][1] if side == "elicitkit" else name
            expected = f"{tag}={words[i][0]}+{words[i][1]}@{finisher}"
            if not isinstance(result, CallToolResult) or result.is_error or text(result) != expected:
                raise RuntimeError(f"{side} {tag}: expected {expected!r}, got {str(result)[:300]}")

        return one

    total = 0.0
    for k in range(len(STAGES)):
        seconds = await timed(runs, slots, stage(k))
        into.stages[k].append(runs / seconds)
        total += seconds
    into.answers.append(2 * runs / total)


async def plain_calls(slots: Slots, count: int, base: int) -> float:
    """Tool calls that ask nothing, round robin over the nodes; calls per second."""

    async def one(i: int, nodes: Nodes) -> None:
        client, node = nodes[i % 2]
        result = await client.call_tool("plain", {"tag": f"p{base + i}"})
        if not isinstance(result, CallToolResult) or text(result) != f"p{base + i}@{node}":
            raise RuntimeError(f"plain call {base + i}: unexpected {str(result)[:300]}")

    return count / await timed(count, slots, one)


async def bench(runs: int, concurrency: int, repeat: int, plain: bool, freeze_gc: bool = False) -> dict[Side, Phase]:
    phases: dict[Side, Phase] = {"bare": Phase(), "checked": Phase(), "elicitkit": Phase()}
    with tempfile.TemporaryDirectory(prefix="elicitkit-throughput-") as tmp:
        redis = RedisServer(Path(tmp) / "redis")
        await redis.start()
        nodes = [
            *(Node(redis.url, name, Path(tmp) / f"{name}.log") for name in ("node-a", "node-b")),
            *(BareNode(name, Path(tmp) / f"{name}.log") for name in ("bare-a", "bare-b")),
            *(BareNode(name, Path(tmp) / f"{name}.log", once=redis.url) for name in ("checked-a", "checked-b")),
        ]
        for node in nodes if freeze_gc else ():
            node.args.append("--freeze-gc")
        try:
            for node in nodes:
                await node.start()
            async with AsyncExitStack() as stack:
                # Each request slot has its own client, and connection, to each node (see "The driver" above).
                slots = [
                    [(await stack.enter_async_context(connect(n, 1)), n.name) for n in nodes]
                    for _ in range(concurrency)
                ]
                pairs: dict[Side, Slots] = {
                    side: [clients[2 * j : 2 * j + 2] for clients in slots]
                    for j, side in enumerate(("elicitkit", "bare", "checked"))
                }
                for side, pair in pairs.items():  # warm-up: connections, imports, first requests
                    await two_questions(pair[:10], side, 50, -1000, Phase())
                    if plain:
                        await plain_calls(pair[:10], 50, -1000)
                for r in range(repeat):
                    order: list[Side] = ["bare", "checked", "elicitkit"]
                    order = order if r % 2 == 0 else order[::-1]
                    for j, side in enumerate(order):
                        base = (len(order) * r + j) * runs
                        await two_questions(pairs[side], side, runs, base, phases[side])
                    if plain:
                        for side in order:
                            phases[side].plain.append(await plain_calls(pairs[side], runs, r * runs))
        except BaseException:
            # A request failed; what the nodes said goes with the traceback.
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
    return phases


def report(phases: dict[Side, Phase], runs: int, concurrency: int, freeze_gc: bool = False) -> float:
    bare, kit = phases["bare"], phases["elicitkit"]
    print(
        f"throughput, two nodes a side (uvicorn, streamable HTTP, 2026-07-28), elicitkit on redis-server "
        f"{redis_version()}; python {platform.python_version()}, mcp {version('mcp')}, "
        f"elicitkit {version('elicitkit')}; "
        f"{runs} two-question calls per phase, {concurrency} requests in flight, {len(bare.answers)} repeats; "
        f"every node's garbage collector {'frozen once built (gc.freeze)' if freeze_gc else 'as Python sets it'}"
    )
    labels: dict[Side, str] = {
        "bare": "bare SDK (Resolve x2, answers in requestState)",
        "checked": "bare SDK, each round taken once (Redis SET NX)",
        "elicitkit": "elicitkit (hitl.text x2, half forwarded)",
    }
    for side, phase in phases.items():
        values = ", ".join(f"{v:.0f}" for v in phase.answers)
        print(f"  {labels[side]:<48} median {statistics.median(phase.answers):7.1f} answers/s   ({values})")
        stages = ", ".join(
            f"{name} {statistics.median(rates):.0f}/s" for name, rates in zip(STAGES, phase.stages, strict=True)
        )
        print(f"  {'':<48} requests by stage: {stages}")
    ratios = [k / b for k, b in zip(kit.answers, bare.answers, strict=True)]
    ratio = statistics.median(ratios)
    print(f"  paired ratios, elicitkit / bare SDK answers/s: {', '.join(f'{r:.2f}' for r in ratios)}")
    checked = [k / c for k, c in zip(kit.answers, phases["checked"].answers, strict=True)]
    print(
        f"  paired ratios, elicitkit / bare SDK taking each round once: {', '.join(f'{r:.2f}' for r in checked)} "
        f"(median {statistics.median(checked):.2f})"
    )
    if bare.plain:
        print(
            f"  for reference, calls that ask nothing: bare SDK {statistics.median(bare.plain):.0f}/s, "
            f"elicitkit {statistics.median(kit.plain):.0f}/s"
        )
    print(f"  goal ratio >= {GOAL}: {'met' if ratio >= GOAL else 'missed'}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="two-question calls per phase (default 1000)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests in flight (default 50)")
    parser.add_argument("--repeat", type=int, default=5, help="repeats, each giving one ratio (default 5)")
    parser.add_argument("--plain", action="store_true", help="also time calls that ask nothing, for reference")
    parser.add_argument(
        "--gc",
        choices=("freeze", "default"),
        default="default",
        help="every node keeps Python's GC settings (default), or calls gc.freeze() once built (docs/durable.md)",
    )
    args = parser.parse_args()
    if args.runs < 1 or args.concurrency < 1 or args.repeat < 1:
        parser.error("--runs, --concurrency and --repeat must be at least 1")
    freeze_gc = args.gc == "freeze"
    phases = anyio.run(bench, args.runs, args.concurrency, args.repeat, args.plain, freeze_gc)
    ratio = report(phases, args.runs, args.concurrency, freeze_gc)
    print(f"ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
