"""Cross-node answers: a 2026-07-28 retry that lands on the node that does NOT hold the run.

What it measures
----------------
Real processes on loopback: one `redis-server` (no persistence) on a free port,
two elicitkit nodes (`bench/_node.py`: `MCPServer` + `Elicitation(store="redis://...",
secret=...)`, served over streamable HTTP by uvicorn), and this driver, which
talks to both nodes with `mcp.Client` over HTTP (2026-07-28). The nodes' tool
`ask` asks one question with `hitl.text` and returns the answer and the name of
the node that finished the run.

Runs come in *pairs* started on the same node, their *owner* (ownership
alternates between the two nodes from pair to pair, so both carry the same
load): `call_tool(..., allow_input_required=True)` returns an
`InputRequiredResult` and the body stays suspended on the owner. A phase first
starts all its pairs, so that all its runs are suspended at once, then answers
them, one pair after the other within a pair (alternating which goes first):

- run x is retried on its owner: the baseline, nothing forwarded;
- run y is retried on the other node, which does not hold it: that node opens
  the requestState (the shared secret), loads the run from Redis, claims the
  round, journals the answer, checks that the owner is alive and forwards the
  answer over Redis pub/sub; the owner resumes the suspended body and publishes
  the outcome back; the receiving node returns it to the client.

Latency = wall time of one retry `call_tool` in the client: from the answer
landing until its result is back. Every result is checked: it carries its own
run's answer, and was finished by the owner (so the answer really was
forwarded, not taken over and replayed).

Phases: a warm-up (`--warmup` pairs), then `loaded` (`--runs` pairs, so 1,000
answers land on the non-owner and 1,000 on the owner by default, with 2,000 runs
suspended at once, answered `--concurrency` pairs in flight, default 100), then
`light` (`--light` pairs, 10 in flight) and `unloaded` (`--serial` pairs, one at a
time).

Each node also times, from the outside (it wraps two elicitkit functions in its
own process; nothing under src/ changes), what elicitkit itself spends on a
retry: `Inbox.retry`, from elicitkit's middleware seeing the retry until the
outcome is ready (a local resume on the owner; Redis reads and writes plus the
forward on the other node), and `Cluster.forward` (publish to the owner -> its
outcome is back). Those rows exclude HTTP, the client and the SDK.

How to run
----------
From the repository root (needs `redis-server` on PATH, as the tests do)::

    .venv/bin/python bench/cross_node.py                      # about 30 s
    .venv/bin/python bench/cross_node.py --runs 200 --concurrency 20

How to read it
--------------
Percentiles are over all retries of a phase (linear interpolation). The
forwarding cost is given two ways: the difference of the percentiles
(p50(non-owner) - p50(owner), p99(non-owner) - p99(owner)), and the percentiles
of the paired difference (each pair's non-owner retry minus its owner retry,
measured back to back under the same load). Each phase also prints what
queueing alone predicts (pairs in flight / answers per second, Little's law):
when the measured latencies sit near it, the machine is saturated and the
figures measure throughput, not the forwarding hop.

The target (DESIGN.md) is that an answer landing on another node reaches its
run in < 5 ms p99 on loopback. The summary gives, per phase, the non-owner's
p99 end to end, server side, and as paired forwarding cost, each against 5 ms.
The last line is always ``p99_ms=<x>``: the end-to-end p99 of the retries that
landed on the non-owner in the `loaded` phase. A missed target is reported,
never a failing exit code.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, InputRequiredResult, TextContent

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.redis_server

from elicitkit.testing import accept  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

NODE_APP = Path(__file__).with_name("_node.py")
SECRET = "cross-node-bench-secret-0123456789abcdef0123"
TARGET_MS = 5.0
LIGHT_CONCURRENCY = 10
T = TypeVar("T")


# -- processes -----------------------------------------------------------------


class Node:
    """One server process (bench/_node.py)."""

    def __init__(self, store: str, name: str, log: Path) -> None:
        self.name = name
        self.args = [sys.executable, str(NODE_APP), "--store", store, "--node", name, "--secret", SECRET]
        self.log = log
        """The node's stderr (its warnings and errors)."""
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        with self.log.open("w") as stderr:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(  # noqa: ASYNC220
                self.args, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
            )
        assert self.process.stdout is not None
        with anyio.fail_after(30):
            line = await anyio.to_thread.run_sync(self.process.stdout.readline, abandon_on_cancel=True)
        if not line.startswith("READY "):
            tail = "\n".join(self.log.read_text().splitlines()[-20:])
            raise RuntimeError(f"node {self.name} did not start: {line!r}\n{tail}")
        self.port = int(line.split()[1])

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def notable(self) -> list[str]:
        """Warning and error lines the node logged."""
        if not self.log.exists():
            return []
        lines = self.log.read_text(errors="replace").splitlines()
        return [f"{self.name}: {line}" for line in lines if "WARNING" in line or "ERROR" in line]


@asynccontextmanager
async def connect(node: Node, concurrency: int) -> AsyncIterator[Client]:
    # Enough pooled keep-alive connections for every request in flight: no reconnects mid-benchmark.
    limits = httpx2.Limits(max_connections=4 * concurrency, max_keepalive_connections=4 * concurrency)
    timeout = httpx2.Timeout(60.0, read=300.0)
    async with httpx2.AsyncClient(limits=limits, timeout=timeout) as http:
        transport = streamable_http_client(node.url, http_client=http)
        async with Client(transport, mode="auto", elicitation_callback=never) as client:
            if client.session.protocol_version != "2026-07-28":
                raise RuntimeError(f"expected 2026-07-28, negotiated {client.session.protocol_version}")
            yield client


async def never(context: Any, params: Any) -> Any:
    """Declares that this client shows forms; the rounds themselves are driven by hand."""
    raise AssertionError("rounds are driven by the benchmark")


# -- one iteration -------------------------------------------------------------


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def start_run(client: Client, tag: str) -> InputRequiredResult:
    result = await client.session.call_tool("ask", {"tag": tag}, allow_input_required=True)
    if not isinstance(result, InputRequiredResult):
        raise RuntimeError(f"{tag}: expected an InputRequiredResult, got {str(result)[:300]}")
    return result


async def retry(client: Client, tag: str, previous: InputRequiredResult, word: str, owner: str) -> float:
    """Answer `previous` on `client`'s node; ms from sending the answer until the result is back."""
    answers = {key: accept({"value": word}) for key in previous.input_requests or {}}
    start = time.perf_counter()
    result = await client.session.call_tool(
        "ask", {"tag": tag}, input_responses=answers, request_state=previous.request_state, allow_input_required=True
    )
    elapsed = (time.perf_counter() - start) * 1000
    if not isinstance(result, CallToolResult) or result.is_error:
        raise RuntimeError(f"{tag}: unexpected result {str(result)[:300]}")
    if text(result) != f"{tag}={word}@{owner}":
        raise RuntimeError(f"{tag}: expected {tag}={word}@{owner}, got {text(result)!r}")
    return elapsed


@dataclass
class Phase:
    name: str
    pairs: int
    concurrency: int
    owner: list[float] = field(default_factory=list)
    """ms, retries on the run's owner, in pair order."""
    forwarded: list[float] = field(default_factory=list)
    """ms, retries on the other node (forwarded to the owner), in pair order."""
    start_seconds: float = 0.0
    seconds: float = 0.0
    """Wall time of the answering half (the retries)."""
    server: dict[str, list[float]] = field(default_factory=dict)
    """Server-side timings of both nodes, merged by kind."""

    @property
    def paired(self) -> list[float]:
        return [b - a for a, b in zip(self.owner, self.forwarded, strict=True)]


@dataclass(frozen=True)
class Pair:
    """Two runs started on the same node: `x` is answered there, `y` on the other node."""

    index: int
    owner: tuple[Client, str]
    other: tuple[Client, str]
    x: InputRequiredResult
    y: InputRequiredResult


async def start_pair(
    nodes: list[tuple[Client, str]], i: int, limiter: anyio.CapacityLimiter, into: dict[int, Pair]
) -> None:
    owner, other = nodes[i % 2], nodes[(i + 1) % 2]  # ownership alternates: both nodes carry the same load
    async with limiter:
        x = await start_run(owner[0], f"x{i}")
        y = await start_run(owner[0], f"y{i}")
    into[i] = Pair(i, owner, other, x, y)


async def answer_pair(pair: Pair, limiter: anyio.CapacityLimiter, owner_ms: list[float], other_ms: list[float]) -> None:
    i, (on_owner, owner), (on_other, _) = pair.index, pair.owner, pair.other
    x_word, y_word = f"w-{secrets.token_hex(6)}", f"w-{secrets.token_hex(6)}"
    async with limiter:
        if (i // 2) % 2 == 0:  # alternate which of the two goes first
            owner_ms[i] = await retry(on_owner, f"x{i}", pair.x, x_word, owner)
            other_ms[i] = await retry(on_other, f"y{i}", pair.y, y_word, owner)
        else:
            other_ms[i] = await retry(on_other, f"y{i}", pair.y, y_word, owner)
            owner_ms[i] = await retry(on_owner, f"x{i}", pair.x, x_word, owner)


async def run_phase(nodes: list[tuple[Client, str]], phase: Phase, base: int) -> None:
    """Start every run of the phase (all suspended at once), then answer them all."""
    limiter = anyio.CapacityLimiter(phase.concurrency)
    pairs: dict[int, Pair] = {}
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(base, base + phase.pairs):
            tg.start_soon(start_pair, nodes, i, limiter, pairs)
    phase.start_seconds = time.perf_counter() - start
    owner_ms = [math.nan] * (base + phase.pairs)
    other_ms = [math.nan] * (base + phase.pairs)
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(base, base + phase.pairs):
            tg.start_soon(answer_pair, pairs[i], limiter, owner_ms, other_ms)
    phase.seconds = time.perf_counter() - start
    phase.owner, phase.forwarded = owner_ms[base:], other_ms[base:]


async def server_stats(client: Client) -> dict[str, list[float]]:
    result = await client.call_tool("bench_stats", {"reset": True})
    content = result.structured_content or {}
    stats: dict[str, list[float]] = content.get("result", content)
    return stats


async def bench(runs: int, concurrency: int, warmup: int, light: int, serial: int) -> tuple[list[Phase], list[str]]:
    """The measured phases, and the warnings and errors the nodes logged."""
    phases: list[Phase] = []
    logged: list[str] = []
    nodes: list[Node] = []
    with tempfile.TemporaryDirectory(prefix="elicitkit-bench-") as tmp:
        redis = RedisServer(Path(tmp) / "redis")
        try:
            await redis.start()
            a, b = (Node(redis.url, name, Path(tmp) / f"{name}.log") for name in ("node-a", "node-b"))
            nodes += [a, b]
            async with anyio.create_task_group() as tg:
                tg.start_soon(a.start)
                tg.start_soon(b.start)
            async with AsyncExitStack() as stack:
                on_a = await stack.enter_async_context(connect(a, concurrency))
                on_b = await stack.enter_async_context(connect(b, concurrency))
                endpoints = [(on_a, a.name), (on_b, b.name)]
                plan = [Phase("warm-up", warmup, concurrency), Phase("loaded", runs, concurrency)]
                if light and concurrency > LIGHT_CONCURRENCY:
                    plan.append(Phase("light", light, LIGHT_CONCURRENCY))
                if serial:
                    plan.append(Phase("unloaded", serial, 1))
                base = 0
                for phase in plan:
                    if not phase.pairs:
                        continue
                    await run_phase(endpoints, phase, base)
                    for client, _ in endpoints:
                        for kind, samples in (await server_stats(client)).items():
                            phase.server.setdefault(kind, []).extend(samples)
                    base += phase.pairs
                    if phase.name != "warm-up":
                        phases.append(phase)
        finally:
            with anyio.CancelScope(shield=True):
                for node in nodes:
                    await anyio.to_thread.run_sync(node.stop)
                    logged += node.notable()
                await redis.stop()
    return phases, logged


async def interruptible(work: Coroutine[Any, Any, T]) -> T | None:
    """Run `work`; Ctrl-C or SIGTERM cancels it (its finally blocks stop every process) and returns None."""
    result: T | None = None

    async def cancel_on_signal(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                scope.cancel()
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_on_signal, tg.cancel_scope)
        result = await work
        tg.cancel_scope.cancel()
    return result


# -- report --------------------------------------------------------------------


def percentile(samples: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def row(label: str, samples: Sequence[float]) -> str:
    if not samples:
        return f"  {label:<50} {0:>6}"
    p50, p99 = percentile(samples, 50), percentile(samples, 99)
    mean, top = statistics.fmean(samples), max(samples)
    return f"  {label:<50} {len(samples):>6} {p50:>9.2f} {p99:>9.2f} {mean:>9.2f} {top:>9.2f}"


def redis_version() -> str:
    found = shutil.which("redis-server")
    if found is None:
        return "?"
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout
    return next((w[2:] for w in out.split() if w.startswith("v=")), "?")


def verdict(ms: float) -> str:
    return "met" if ms < TARGET_MS else "MISSED"


def report(phases: list[Phase], logged: list[str], warmup: int, seconds: float) -> float:
    loaded = phases[0]
    print(
        f"elicitkit cross-node benchmark: 2 nodes (uvicorn, streamable HTTP) + redis-server {redis_version()} "
        f"on loopback, secret set, run ownership alternating between the nodes; {warmup} warm-up pairs; "
        f"python {platform.python_version()}, mcp {version('mcp')}, redis-py {version('redis')}, "
        f"elicitkit {version('elicitkit')}, {os.cpu_count()} CPUs"
    )
    head = f"  {'':<50} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'mean ms':>9} {'max ms':>9}"
    for phase in phases:
        answers = 2 * phase.pairs
        queueing = phase.concurrency * phase.seconds / answers * 1000
        print()
        print(
            f"{phase.name}: {answers} runs suspended at once ({phase.pairs} answered on the non-owner, "
            f"{phase.pairs} on the owner; started in {phase.start_seconds:.1f} s), answered with "
            f"{phase.concurrency} pair(s) in flight: {answers / phase.seconds:.0f} answers/s; "
            f"queueing alone (in flight / throughput) predicts ~{queueing:.1f} ms per retry"
        )
        print(head)
        print("end to end, answer sent -> result back (client -> HTTP -> node [-> Redis -> owner] -> client):")
        print(row("retry on the owner (baseline, no forwarding)", phase.owner))
        print(row("retry on the non-owner (forwarded to the owner)", phase.forwarded))
        d50 = percentile(phase.forwarded, 50) - percentile(phase.owner, 50)
        d99 = percentile(phase.forwarded, 99) - percentile(phase.owner, 99)
        print(f"  {'forwarding cost, p(non-owner) - p(owner)':<50} {'':>6} {d50:>9.2f} {d99:>9.2f}")
        print(row("forwarding cost, paired non-owner - owner", phase.paired))
        print("server side, inside elicitkit (no HTTP, no client; both nodes):")
        print(row("owner: retry resumed locally", phase.server.get("retry_local", [])))
        print(row("non-owner: retry = Redis reads/writes + forward", phase.server.get("retry_remote", [])))
        print(row("non-owner: Cluster.forward (publish -> outcome)", phase.server.get("forward", [])))
        took = (len(phase.server.get("retry_local", [])), len(phase.server.get("retry_remote", [])))
        if took != (phase.pairs, phase.pairs):
            print(f"  note: expected {phase.pairs} local and {phase.pairs} forwarded retries, saw {took[0]}/{took[1]}")
    p99 = percentile(loaded.forwarded, 99)
    print()
    print(
        f"target (DESIGN.md): an answer landing on another node reaches its run in < {TARGET_MS:g} ms p99 on loopback"
    )
    for phase in phases:
        e2e = percentile(phase.forwarded, 99)
        server = percentile(phase.server.get("retry_remote") or [math.nan], 99)
        paired = percentile(phase.paired, 99)
        print(
            f"  {phase.name + ' (' + str(phase.concurrency) + ' in flight)':<20} non-owner p99: "
            f"end to end {e2e:8.2f} ms ({verdict(e2e)}), server side {server:7.2f} ms ({verdict(server)}); "
            f"paired forwarding cost p99 {paired:7.2f} ms ({verdict(paired)})"
        )
    print(f"node logs: {len(logged)} warning/error lines" + "".join(f"\n  {line[:200]}" for line in logged[:5]))
    checked = sum(2 * p.pairs for p in phases)
    print(
        f"all {checked} measured answers returned their own run's result, finished by the owner; total {seconds:.1f} s"
    )
    return p99


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000, help="answers on the non-owner under load (default 1000)")
    parser.add_argument("--concurrency", type=int, default=100, help="pairs in flight under load (default 100)")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up pairs, not measured (default 100)")
    parser.add_argument(
        "--light", type=int, default=200, help=f"pairs at {LIGHT_CONCURRENCY} in flight (default 200; 0 skips)"
    )
    parser.add_argument("--serial", type=int, default=100, help="pairs one at a time (default 100; 0 skips)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.concurrency < 1 or min(args.warmup, args.light, args.serial) < 0:
        parser.error("--runs and --concurrency must be at least 1; --warmup, --light and --serial at least 0")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    start = time.perf_counter()
    outcome = anyio.run(interruptible, bench(args.runs, args.concurrency, args.warmup, args.light, args.serial))
    if outcome is None:
        print("interrupted: redis-server and both nodes were stopped", file=sys.stderr)
        sys.exit(130)
    phases, logged = outcome
    p99 = report(phases, logged, args.warmup, time.perf_counter() - start)
    print(f"p99_ms={p99:.2f}")


if __name__ == "__main__":
    main()
