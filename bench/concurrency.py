"""Many suspended runs in one process: memory per waiting run against the bare SDK's, and the time to answer them.

What it measures
----------------
One process, the SDK's in-memory transport (`mcp.Client(server, mode="auto")`,
which negotiates 2026-07-28), the default in-memory store, no secret. The
server's tool `ask` asks one question with `hitl.text` and returns the answer.
The benchmark drives the rounds by hand:

1. start `--runs` calls (default 10,000), at most `--concurrency` in flight
   (default 100): each `client.session.call_tool(..., allow_input_required=True)`
   returns an `InputRequiredResult`, and its tool body stays suspended inside
   the server. Then it checks that `hitl.active_runs` and
   `hitl.pending_questions` both equal `--runs`: every run waits at once;
2. measure the memory they hold (below);
3. answer every run (a retry carrying its answer and requestState, at most
   `--concurrency` in flight), timing the whole batch, and check that each call
   got back its own answer and that `hitl.active_runs` drops to 0.

Memory per suspended run is measured in three passes, each on a fresh server
warmed up with 200 full round trips first:

- pass 1, untraced: process RSS (`/proc/self/statm`) before and after step 1,
  and all the timings (so tracemalloc's overhead touches none of them);
- pass 2, `tracemalloc` with one frame: Python-heap bytes allocated by step 1
  and still alive once garbage is collected, divided by `--runs`. That is the
  headline figure. It includes everything a waiting run keeps: its task and
  suspended coroutine frames, the request context and `Context` it holds, its
  `Run`/`Question` objects and what bounds their waits, and the in-memory store's records
  (a sealed run record and question record per run). The benchmark's own handle
  per run (the input key and requestState strings it needs to answer) is
  measured and subtracted;
- pass 3, `tracemalloc` with deep tracebacks on a `--sample` of runs (deep
  tracing is far too slow for 10,000): the same bytes attributed to source
  lines, (a) by the innermost frame inside elicitkit or the `mcp` SDK, and
  (b) by the innermost frame wherever it is; plus the heap still held per run
  after the sample has been answered (what answered runs leave behind);
- pass 4, the same work on both sides (2025-11-25): the bare `mcp` SDK and
  elicitkit each hold `--runs` suspended calls of the same tool, `ask(tag)`,
  whose body is `await ctx.elicit(msg, Word)` (bare) or
  `await hitl.elicit(ctx, msg, Word)` (elicitkit, default in-memory store),
  called all at once from one `Client(server, mode="legacy")` whose
  `elicitation_callback` waits on an event, so that every call stays
  suspended in the server until all its questions have reached the client.
  Each side on a fresh server, warmed up with 200 full round trips, measured
  as pass 2 is: tracemalloc with one frame, the heap allocated since the
  calls started and still alive (after `gc.collect()`) once every question
  has arrived, over `--runs`. The client lives in the same process, so its
  side of each call (the pending `call_tool`, the callback's wait) is in both
  figures alike; the ratio compares the two servers with that in common.

How to run
----------
From the repository root::

    .venv/bin/python bench/concurrency.py                  # 10,000 runs, then 100,000 hibernating: minutes
    .venv/bin/python bench/concurrency.py --runs 2000 --sample 200 --hibernate 10000
    .venv/bin/python bench/concurrency.py --runs 200 --sample 0 --hibernate 0   # a smoke run

How to read it
--------------
The first table gives, per suspended run, the Python heap (tracemalloc) and the
RSS growth; the second, the time to start and to answer all runs and the answer
throughput. Then the biggest allocation sites per suspended run. Then pass 4's
table: heap per suspended 2025-11-25 call, bare SDK and elicitkit, and their
difference. DESIGN.md's target is "10,000 concurrently suspended runs in one
process, a few KB each", read here as <= 8 KiB per run.
Then the hibernation phase (`bench/hibernation.py`, ``--hibernate`` questions
on SQLite with ``--max-suspended`` bodies in memory) prints
``kb_per_hibernated=<x>``: RSS per hibernated run beyond the bare SDK's own
growth per call (a tool that asks nothing, same transport), the live bodies
counted at pass 2's figure (issue 31's goal: <= 2).
Then ``ratio_vs_bare=<x>``: pass 4, elicitkit's heap per suspended call over
the bare SDK's, the same tool, client and era (issue 31's goal: <= 1.1), three
decimals. The last line is always ``kb_per_run=<x>``: pass 2's tracemalloc KiB
per suspended 2026-07-28 run (a hosted body waiting for its retry; the bare SDK
has no such body to compare with), two decimals. A missed target is reported,
never a failing exit code.
"""

from __future__ import annotations

import argparse
import gc
import linecache
import logging
import os
import platform
import secrets
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, InputRequiredResult, TextContent
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit.testing import accept

TARGET_KB = 8.0  # "a few KB each": generous reading
TARGET_RATIO = 1.1  # issue 31: heap per suspended call at most 1.1x the bare SDK's, the same work
WARMUP = 200
KIB = 1024
TOP = 16

Handle = tuple[str, str]
"""What the client keeps per suspended run to answer it later: (input request key, requestState)."""


# -- the server and the two halves of a round trip ------------------------------


def build(*, request_state_ttl: float | None = None, **options: Any) -> tuple[MCPServer, Elicitation]:
    """The bench's server; `request_state_ttl`: how long a 2026-07-28 round may wait for its retry (the SDK's
    600 s by default, which also caps `run_expiry`)."""
    security = None
    if request_state_ttl is not None:
        security = RequestStateSecurity(keys=[secrets.token_bytes(32)], ttl=request_state_ttl)
    server = MCPServer("bench-concurrency", request_state_security=security)
    hitl = Elicitation(server, **options)

    @server.tool()
    async def ask(tag: str, ctx: Context) -> str:
        """One question; the answer comes back tagged, so each caller can check it got its own."""
        answer = await hitl.text(ctx, f"Code word for {tag}?")
        return f"{tag}={answer.data}" if isinstance(answer, Accepted) else f"{tag}: not answered"

    return server, hitl


async def never(context: Any, params: Any) -> Any:
    """Declares that this client shows forms; the rounds themselves are driven by hand."""
    raise AssertionError("rounds are driven by the benchmark")


@asynccontextmanager
async def connect(server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server, mode="auto", elicitation_callback=never) as client:
        if client.session.protocol_version != "2026-07-28":
            raise RuntimeError(f"expected 2026-07-28, negotiated {client.session.protocol_version}")
        yield client


def word(i: int) -> str:
    return f"word-{i}"


async def start(client: Client, i: int, limiter: anyio.CapacityLimiter) -> Handle:
    async with limiter:
        result = await client.session.call_tool("ask", {"tag": f"t{i}"}, allow_input_required=True)
    if not isinstance(result, InputRequiredResult) or not result.input_requests or not result.request_state:
        raise RuntimeError(f"call {i}: expected an InputRequiredResult, got {str(result)[:300]}")
    (key,) = result.input_requests
    return key, result.request_state


async def answer(client: Client, i: int, handle: Handle, limiter: anyio.CapacityLimiter) -> None:
    key, state = handle
    async with limiter:
        result = await client.session.call_tool(
            "ask",
            {"tag": f"t{i}"},
            input_responses={key: accept({"value": word(i)})},
            request_state=state,
            allow_input_required=True,
        )
    got = " ".join(c.text for c in result.content if isinstance(c, TextContent)) if result.content else ""
    if not isinstance(result, CallToolResult) or result.is_error or got != f"t{i}={word(i)}":
        raise RuntimeError(f"call {i}: expected t{i}={word(i)}, got {str(result)[:300]}")


async def pool(n: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> None:
    """`one(j)` for j in range(n), `concurrency` at a time.

    `concurrency` workers take the next j in turn, rather than n tasks queueing on a limiter: a million waiting
    tasks would hold a million coroutine frames at once, and the pages they leave behind would count as the
    server's RSS."""
    jobs = iter(range(n))

    async def worker() -> None:
        for j in jobs:  # one shared iterator: each j goes to exactly one worker
            await one(j)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, n)):
            tg.start_soon(worker)


async def start_all(client: Client, n: int, concurrency: int, first: int) -> list[Handle]:
    """Start calls `first` .. `first + n - 1`; each returns with its run suspended in the server."""
    limiter = anyio.CapacityLimiter(concurrency)
    handles: list[Handle | None] = [None] * n

    async def one(j: int) -> None:
        handles[j] = await start(client, first + j, limiter)

    await pool(n, concurrency, one)
    return [h for h in handles if h is not None]


async def answer_all(client: Client, handles: list[Handle], concurrency: int, first: int) -> None:
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(j: int) -> None:
        await answer(client, first + j, handles[j], limiter)

    await pool(len(handles), concurrency, one)


async def warm_up(client: Client, concurrency: int) -> None:
    handles = await start_all(client, WARMUP, concurrency, first=10**9)
    await answer_all(client, handles, concurrency, first=10**9)


async def settle(hitl: Elicitation, expected: int, timeout: float = 10.0) -> None:
    """Wait until `hitl.active_runs == expected` (finished runs leave after their result is taken)."""
    for _ in range(int(timeout / 0.01)):  # polled: nothing signals it
        if hitl.active_runs == expected:
            break
        await anyio.sleep(0.01)
    if hitl.active_runs != expected:
        raise RuntimeError(f"expected {expected} active runs, found {hitl.active_runs}")


def store_counts(hitl: Elicitation) -> dict[str, int]:
    """Entries in the in-memory store (bench-only peek at private tables)."""
    store: Any = hitl._engine.store
    store = getattr(store, "_store", store)  # unwrap a guard layer, if any
    tables = ("_runs", "_questions", "_journals", "_once")
    return {name.strip("_"): len(getattr(store, name, ())) for name in tables}


def handles_bytes(handles: list[Handle]) -> int:
    """Heap the client side keeps to answer later: the list, the tuples and their strings."""
    total = sys.getsizeof(handles)
    for handle in handles:
        total += sys.getsizeof(handle) + sum(sys.getsizeof(s) for s in handle)
    return total


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- the three passes ------------------------------------------------------------


@dataclass
class Results:
    runs: int
    concurrency: int
    sample: int
    # pass 1
    rss_before: int = 0
    rss_suspended: int = 0
    rss_after: int = 0
    start_seconds: float = 0.0
    answer_seconds: float = 0.0
    store_suspended: dict[str, int] = field(default_factory=dict)
    store_after: dict[str, int] = field(default_factory=dict)
    # pass 2
    heap_delta: int = 0
    heap_handles: int = 0
    heap_peak: int = 0
    tracemalloc_overhead: int = 0
    # pass 3
    sample_per_run: float = 0.0
    sample_after_per_run: float = 0.0
    sites: list[Site] = field(default_factory=list)
    by_innermost: list[tuple[str, int]] = field(default_factory=list)
    by_package: list[tuple[str, int]] = field(default_factory=list)
    # pass 4 (2025-11-25, the same work on both sides)
    legacy_bare: int = 0
    legacy_elicitkit: int = 0

    @property
    def kb_per_run(self) -> float:
        return (self.heap_delta - self.heap_handles) / self.runs / KIB

    @property
    def ratio_vs_bare(self) -> float:
        """Pass 4: elicitkit's heap per suspended 2025-11-25 call over the bare SDK's, the same tool and client."""
        return self.legacy_elicitkit / self.legacy_bare


async def pass_untraced(res: Results) -> None:
    server, hitl = build()
    async with connect(server) as client:
        await warm_up(client, res.concurrency)
        gc.collect()
        res.rss_before = rss()
        t0 = time.perf_counter()
        handles = await start_all(client, res.runs, res.concurrency, first=0)
        res.start_seconds = time.perf_counter() - t0
        check_suspended(hitl, res.runs, len(handles))
        gc.collect()
        res.rss_suspended = rss()
        res.store_suspended = store_counts(hitl)
        t0 = time.perf_counter()
        await answer_all(client, handles, res.concurrency, first=0)
        res.answer_seconds = time.perf_counter() - t0
        await settle(hitl, 0)
        if hitl.pending_questions:
            raise RuntimeError(f"{hitl.pending_questions} questions still pending after every answer")
        gc.collect()
        res.rss_after = rss()
        res.store_after = store_counts(hitl)


def check_suspended(hitl: Elicitation, runs: int, handles: int) -> None:
    if handles != runs or hitl.active_runs != runs or hitl.pending_questions != runs:
        raise RuntimeError(
            f"expected {runs} suspended runs, got {handles} handles, {hitl.active_runs} active runs, "
            f"{hitl.pending_questions} pending questions"
        )


async def pass_heap(res: Results) -> None:
    server, hitl = build()
    async with connect(server) as client:
        await warm_up(client, res.concurrency)
        gc.collect()
        tracemalloc.start(1)
        try:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            handles = await start_all(client, res.runs, res.concurrency, first=0)
            check_suspended(hitl, res.runs, len(handles))
            gc.collect()
            current, res.heap_peak = tracemalloc.get_traced_memory()
            res.heap_delta = current - before
            res.heap_handles = handles_bytes(handles)
            res.tracemalloc_overhead = tracemalloc.get_tracemalloc_memory()
        finally:
            tracemalloc.stop()
        # Leaving the client ends the server's lifespan, which cancels the suspended runs.
    if hitl.active_runs:
        raise RuntimeError(f"{hitl.active_runs} runs left after the server's lifespan ended")


def _is_source(filename: str) -> bool:
    parts = Path(filename).parts
    return "elicitkit" in parts or "mcp" in parts or "mcp_types" in parts


def _short(filename: str) -> str:
    parts = Path(filename).parts
    for anchor in ("elicitkit", "mcp", "mcp_types", "site-packages"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            rest = parts[i + 1 :] if anchor == "site-packages" else parts[i:]
            return "/".join(rest)
    return "/".join(parts[-2:])


def _package(filename: str) -> str:
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].removesuffix(".py")
    if "elicitkit" in parts:
        return "elicitkit"
    stdlib = [i for i, part in enumerate(parts) if part.startswith("python3")]
    if stdlib and stdlib[-1] + 1 < len(parts):
        return parts[stdlib[-1] + 1].removesuffix(".py") + " (stdlib)"
    return Path(filename).stem


@dataclass
class Site:
    """Bytes attributed to one source line, and what was allocated under it."""

    where: str
    code: str
    size: int = 0
    inner: Counter[str] = field(default_factory=Counter)


async def pass_attribution(res: Results) -> None:
    server, hitl = build()
    async with connect(server) as client:
        await warm_up(client, res.concurrency)
        gc.collect()
        tracemalloc.start(64)
        try:
            before = tracemalloc.take_snapshot()
            handles = await start_all(client, res.sample, res.concurrency, first=2 * 10**9)
            check_suspended(hitl, res.sample, len(handles))
            gc.collect()
            during = tracemalloc.take_snapshot()
            own = handles_bytes(handles)
            await answer_all(client, handles, res.concurrency, first=2 * 10**9)
            await settle(hitl, 0)
            del handles
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__)]
    before, during, after = (s.filter_traces(ignore) for s in (before, during, after))
    res.sample_per_run = (_total(during) - _total(before) - own) / res.sample / KIB
    res.sample_after_per_run = (_total(after) - _total(before)) / res.sample / KIB
    sites: dict[str, Site] = {}
    by_innermost: Counter[str] = Counter()
    by_package: Counter[str] = Counter()
    for stat in during.compare_to(before, "traceback"):
        size = stat.size_diff
        if size <= 0:
            continue
        frames = list(stat.traceback)  # oldest first
        inner = frames[-1]
        inner_at = f"{_short(inner.filename)}:{inner.lineno}"
        by_innermost[inner_at] += size
        by_package[_package(inner.filename)] += size
        source = next((f for f in reversed(frames) if _is_source(f.filename)), None)
        if source is None:
            where, code = f"(no elicitkit/mcp frame: {_package(inner.filename)})", ""
        else:
            where, code = (
                f"{_short(source.filename)}:{source.lineno}",
                linecache.getline(source.filename, source.lineno),
            )
        site = sites.setdefault(where, Site(where, code.strip()))
        site.size += size
        site.inner[inner_at] += size
    res.sites = sorted(sites.values(), key=lambda site: site.size, reverse=True)
    res.by_innermost = by_innermost.most_common(8)
    res.by_package = by_package.most_common(8)


def _total(snapshot: tracemalloc.Snapshot) -> int:
    return sum(stat.size for stat in snapshot.statistics("filename"))


# -- 2025-11-25: the same suspended calls, bare SDK and elicitkit ------------------


class Word(BaseModel):
    value: str


Kind = Literal["bare", "elicitkit"]


def legacy_server(kind: Kind) -> tuple[MCPServer, Elicitation | None]:
    """The same tool twice: the bare SDK's `ctx.elicit`, or elicitkit's `hitl.elicit`; nothing else differs."""
    server = MCPServer(f"bench-concurrency-{kind}")
    if kind == "bare":

        @server.tool()
        async def ask(tag: str, ctx: Context) -> str:
            answer = await ctx.elicit(f"Code word for {tag}?", Word)
            return f"{tag}={answer.data.value}" if answer.action == "accept" else f"{tag}: not answered"

        return server, None
    hitl = Elicitation(server)

    @server.tool()
    async def ask(tag: str, ctx: Context) -> str:
        answer = await hitl.elicit(ctx, f"Code word for {tag}?", Word)
        return f"{tag}={answer.data.value}" if isinstance(answer, Accepted) else f"{tag}: not answered"

    return server, hitl


class Person:
    """The client's `elicitation_callback`: each question waits for `release`, so every call stays suspended
    in the server (its `elicitation/create` unanswered) until the benchmark lets them all go."""

    def __init__(self) -> None:
        self.expect(0)

    def expect(self, questions: int) -> None:
        self.expected, self.arrived = questions, 0
        self.all_here, self.release = anyio.Event(), anyio.Event()

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        self.arrived += 1
        if self.arrived == self.expected:
            self.all_here.set()
        await self.release.wait()
        tag = params.message.removeprefix("Code word for ").removesuffix("?")
        return ElicitResult(action="accept", content={"value": f"word-{tag}"})


async def legacy_batch(client: Client, person: Person, n: int, first: int, measure: Callable[[], None]) -> None:
    """n calls at once; once every question has reached the person, `measure()`; then answer them all."""
    person.expect(n)
    got: list[str] = [""] * n

    async def one(j: int) -> None:
        result = await client.call_tool("ask", {"tag": f"t{first + j}"})
        got[j] = " ".join(c.text for c in result.content if isinstance(c, TextContent))

    async with anyio.create_task_group() as tg:
        tg.start_soon(pool, n, n, one)
        with anyio.fail_after(max(60.0, n / 100)):
            await person.all_here.wait()
        measure()
        person.release.set()
    bad = [(j, text) for j, text in enumerate(got) if text != f"t{first + j}=word-t{first + j}"]
    if bad:
        raise RuntimeError(f"{len(bad)} calls got the wrong answer, e.g. call {bad[0][0]}: {bad[0][1]!r}")


async def pass_legacy(kind: Kind, runs: int) -> tuple[int, int]:
    """Pass 4 (2025-11-25): tracemalloc heap held by `runs` suspended calls, as pass 2 measures it; and the peak."""
    server, hitl = legacy_server(kind)
    person = Person()
    heap = peak = 0
    async with Client(server, mode="legacy", elicitation_callback=person) as client:
        if client.session.protocol_version != "2025-11-25":
            raise RuntimeError(f"expected 2025-11-25, negotiated {client.session.protocol_version}")
        for k in range(WARMUP // 100):
            await legacy_batch(client, person, 100, 10**9 + k * 100, lambda: None)
        gc.collect()
        tracemalloc.start(1)
        try:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]

            def measure() -> None:
                nonlocal heap, peak
                if hitl is not None and (hitl.active_runs, hitl.pending_questions) != (runs, runs):
                    raise RuntimeError(
                        f"expected {runs} runs and questions waiting, found {hitl.active_runs} runs, "
                        f"{hitl.pending_questions} questions"
                    )
                gc.collect()
                current, peak = tracemalloc.get_traced_memory()
                heap = current - before

            await legacy_batch(client, person, runs, 0, measure)
        finally:
            tracemalloc.stop()
    return heap, peak


async def bench(runs: int, concurrency: int, sample: int) -> Results:
    res = Results(runs, concurrency, sample)
    await pass_untraced(res)
    await pass_heap(res)
    if sample:
        await pass_attribution(res)
    res.legacy_bare = (await pass_legacy("bare", runs))[0]
    res.legacy_elicitkit = (await pass_legacy("elicitkit", runs))[0]
    return res


# -- report --------------------------------------------------------------------


def report(res: Results, seconds: float) -> float:
    n = res.runs
    kb = res.kb_per_run
    print(
        f"elicitkit concurrency benchmark (in memory, 2026-07-28, memory store, no secret): {n} runs suspended "
        f"at once, "
        f"{res.concurrency} calls in flight; python {platform.python_version()}, mcp {version('mcp')}, "
        f"elicitkit {version('elicitkit')}, {os.cpu_count()} CPUs"
    )
    print()
    head = f"{'memory per suspended run':<62} {'KiB/run':>9} {'total MiB':>10}"
    print(head)
    print("-" * len(head))
    rows = [
        ("Python heap, tracemalloc (pass 2)  <- headline", kb),
        ("  the bench's own handle per run (not in the line above)", res.heap_handles / n / KIB),
        (f"Python heap, deep-traced sample of {res.sample} runs (pass 3)", res.sample_per_run),
        ("RSS growth while suspended (pass 1, untraced)", (res.rss_suspended - res.rss_before) / n / KIB),
        ("heap still held per run after answering (sample, pass 3)", res.sample_after_per_run),
        (
            "RSS growth after answering all (pass 1; freed pages are kept)",
            (res.rss_after - res.rss_before) / n / KIB,
        ),
    ]
    for label, per_run in rows:
        if "pass 3" in label and not res.sample:
            continue
        print(f"{label:<62} {per_run:>9.2f} {per_run * n / KIB:>10.1f}")
    print(
        f"tracemalloc: peak {res.heap_peak / KIB / KIB:.1f} MiB while starting; its own bookkeeping "
        f"{res.tracemalloc_overhead / KIB / KIB:.1f} MiB (not counted)"
    )
    print(f"in-memory store entries while suspended: {res.store_suspended}; after answering: {res.store_after}")
    print()
    head = f"{'time':<62} {'seconds':>9} {'per call':>10} {'calls/s':>9}"
    print(head)
    print("-" * len(head))
    for label, secs in [
        (f"start {n} calls -> {n} suspended runs (pass 1)", res.start_seconds),
        (f"answer all {n} (retries, {res.concurrency} in flight) (pass 1)", res.answer_seconds),
    ]:
        print(f"{label:<62} {secs:>9.2f} {secs / n * 1e6:>8.0f}µs {n / secs:>9.0f}")
    print(f"every call got its own answer; active_runs {n} while suspended, 0 after")
    if res.sites:
        per = res.sample
        total = sum(site.size for site in res.sites)
        print()
        print(
            f"where a suspended run's heap goes (pass 3, {per} runs, bytes per run still alive while suspended; "
            f"{total / per / KIB:.2f} KiB/run in all):"
        )
        print("  by the innermost elicitkit / mcp frame of each allocation [and what it mostly allocated]:")
        for site in res.sites[:TOP]:
            top_inner, top_size = site.inner.most_common(1)[0]
            line = f"{site.size / per:>7.0f} B  {site.where:<44} {site.code[:58]:<58}"
            print(f"    {line} [{top_inner} {top_size / per:.0f} B]")
        rest = sum(site.size for site in res.sites[TOP:])
        print(f"    {rest / per:>7.0f} B  ({len(res.sites) - TOP} other lines)")
        print("  by the innermost frame:")
        for where, size in res.by_innermost:
            print(f"    {size / per:>7.0f} B  {where}")
        print("  by package of the innermost frame:")
        for where, size in res.by_package:
            print(f"    {size / per:>7.0f} B  {where}")
    print()
    head = f"{'2025-11-25, the same work (pass 4): heap per suspended call':<62} {'KiB/call':>9} {'total MiB':>10}"
    print(head)
    print("-" * len(head))
    for label, held in [
        ("bare SDK: `await ctx.elicit(...)` in the tool", res.legacy_bare),
        ("elicitkit: `await hitl.elicit(ctx, ...)` in the same tool", res.legacy_elicitkit),
        ("  difference: elicitkit's own", res.legacy_elicitkit - res.legacy_bare),
    ]:
        print(f"{label:<62} {held / n / KIB:>9.2f} {held / KIB / KIB:>10.1f}")
    ratio = res.ratio_vs_bare
    print(
        f'both: {n} calls from one `Client(server, mode="legacy")` in the same process (its side of each call is '
        f"in both figures), each question held by the client's callback; elicitkit / bare = {ratio:.3f} "
        f"(goal <= {TARGET_RATIO:g}: {'met' if ratio <= TARGET_RATIO else 'MISSED'})"
    )
    print()
    verdict = "met" if kb <= TARGET_KB else "MISSED"
    print(
        f"target (DESIGN.md): 10,000 suspended runs in one process, a few KB each (read as <= {TARGET_KB:g} KiB): "
        f"{kb:.2f} KiB/run -> {verdict}; total {seconds:.1f} s"
    )
    return kb


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10_000, help="runs suspended at once (default 10000)")
    parser.add_argument("--concurrency", type=int, default=100, help="calls in flight (default 100)")
    parser.add_argument(
        "--sample", type=int, default=300, help="runs in the deep-traced attribution pass (default 300; 0 skips)"
    )
    parser.add_argument(
        "--hibernate",
        type=int,
        default=100_000,
        help="questions waiting in the hibernation phase, on SQLite (default 100000; 0 skips; bench/hibernation.py)",
    )
    parser.add_argument("--max-suspended", type=int, default=1000, help="bodies in memory in that phase (default 1000)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.concurrency < 1 or args.sample < 0:
        parser.error("--runs and --concurrency must be at least 1, --sample at least 0")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    logging.getLogger("elicitkit").setLevel(logging.WARNING)

    t0 = time.perf_counter()
    res = anyio.run(bench, args.runs, args.concurrency, args.sample)
    kb = report(res, time.perf_counter() - t0)
    if args.hibernate:
        from hibernation import phase

        print()
        hibernated = phase(args.hibernate, args.max_suspended, args.concurrency, 1000, live_kib=kb)
        print(f"kb_per_hibernated={hibernated:.2f}")
    print(f"ratio_vs_bare={res.ratio_vs_bare:.3f}")
    print(f"kb_per_run={kb:.2f}")


if __name__ == "__main__":
    main()
