"""Hibernation: many more waiting questions than suspended bodies, on SQLite and on Redis (`bench/concurrency.py`'s
last phase runs the SQLite half).

What it measures
----------------
One process, the SDK's in-memory transport (2026-07-28), a store
(`--store`: SQLite in a temporary folder, a `redis-server` started on a free
port with no persistence, or both in turn; unsealed records, as the published
figures were measured) and `Elicitation(server, max_suspended=--max-suspended)`.
The tool is `bench/concurrency.py`'s `ask`: one question, the answer back.

1. start `--questions` calls (default 100,000), `--concurrency` in flight (a
   pool of that many workers, so the driver itself holds no per-call task):
   each returns an `InputRequiredResult`. Only `--max-suspended` bodies
   (default 1,000) stay in memory; the others hibernate (their task ends, their
   run and question records stay in the store). It checks `hitl.active_runs`;
2. process RSS (`/proc/self/statm`) before and after step 1, less the bench's
   own handles (the input key and requestState it keeps per call to answer
   later), over the number of waiting questions. That includes the live
   bodies; the row below it takes them out (`--max-suspended` x the live cost
   per run that `bench/concurrency.py` measured with tracemalloc) and divides
   the rest by the hibernated runs. The bare SDK's own RSS growth for as many
   calls (a tool that asks nothing, same transport and concurrency, measured
   in a fresh process first) is shown next to it, and the next row is the
   difference: what a hibernated run costs elicitkit's node. The store's own
   size per question follows (the SQLite files, or Redis's `used_memory`,
   which lives in the redis-server process, not in the node's RSS);
3. answer `--answer` of the oldest (hibernated) runs: each retry loads the run
   from the store and replays its body, whose question is answered from the
   journal at once; every answer is checked.

A million (`--questions 1000000`) is meant to run: the driver keeps one
handle per call (about half a KiB), nothing per call besides; expect a few GiB
of RSS in all and roughly the per-call start time times a million per store
(about an hour each here). Every question waits until the bench answers it:
no question timeout, and a `requestState` TTL and `run_expiry` of a day, where
the defaults (300 s, 600 s) would let the first questions expire long before
the last is asked.

How to run
----------
Alone (needs `redis-server` on PATH for Redis, as the tests do), or as the last
phase of `bench/concurrency.py`::

    .venv/bin/python bench/hibernation.py                   # 100,000 questions, SQLite then Redis: minutes
    .venv/bin/python bench/hibernation.py --questions 1000000 --store sqlite
    .venv/bin/python bench/hibernation.py --questions 1000000 --bare          # the bare SDK's part, once
    .venv/bin/python bench/hibernation.py --questions 1000000 --store redis --bare-kib <what --bare printed>
    .venv/bin/python bench/hibernation.py --questions 3000 --max-suspended 300 --answer 100   # a smoke run

The last line is ``kb_per_hibernated=<x>``: KiB of RSS per hibernated run,
less the bare SDK's growth per call, on the first store measured (SQLite with
``--store both``); the other store's figure is in its table (issue 31's goal:
<= 2 on both).
"""

from __future__ import annotations

import argparse
import gc
import logging
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.redis_server
from concurrency import KIB, answer_all, build, connect, handles_bytes, pool, rss, start_all, warm_up
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.redis_server import RedisServer

Store = Literal["sqlite", "redis"]
WAIT = 86_400.0
"""How long a waiting question may wait here: longer than starting a million of them takes."""
STORES: tuple[Store, ...] = ("sqlite", "redis")


@dataclass
class Hibernation:
    store: Store
    questions: int
    max_suspended: int
    concurrency: int
    answered: int
    active: int = 0
    rss_growth: int = 0
    handles: int = 0
    store_bytes: int = 0
    start_seconds: float = 0.0
    answer_seconds: float = 0.0
    bare_per_call: float = 0.0
    """KiB of RSS the bare SDK grows per call on the same rig (a tool that asks nothing)."""

    def per_question(self) -> float:
        """KiB of RSS per waiting question, the live bodies included."""
        return (self.rss_growth - self.handles) / self.questions / KIB

    def per_hibernated(self, live_kib: float) -> float:
        """KiB of RSS per hibernated run, once the live bodies (at `live_kib` each) are taken out."""
        hibernated = self.questions - self.active
        return (self.rss_growth - self.handles - self.active * live_kib * KIB) / max(hibernated, 1) / KIB


async def measure(store: Store, questions: int, max_suspended: int, concurrency: int, answered: int) -> Hibernation:
    res = Hibernation(store, questions, max_suspended, concurrency, min(answered, questions))
    with tempfile.TemporaryDirectory() as folder:
        redis = RedisServer(Path(folder) / "redis") if store == "redis" else None
        url = f"sqlite:///{Path(folder) / 'state.db'}" if redis is None else ""
        if redis is not None:
            await redis.start()
            url = redis.url
        try:
            # Unsealed on purpose, as the published figures were measured; sealing adds 32 bytes a record.
            # Every question waits until the bench answers it, however long starting them all takes (a million
            # take about an hour here): no question timeout, and a round and its run may wait a day.
            server, hitl = build(
                store=url,
                max_suspended=max_suspended,
                plaintext_store=True,
                timeout=None,
                run_expiry=WAIT,
                request_state_ttl=WAIT,
            )
            async with connect(server) as client:
                await warm_up(client, concurrency)
                gc.collect()
                before, store_before = rss(), await store_size(folder, redis)
                t0 = time.perf_counter()
                handles = await start_all(client, questions, concurrency, first=0)
                res.start_seconds = time.perf_counter() - t0
                res.active = hitl.active_runs
                if len(handles) != questions or res.active != min(max_suspended, questions):
                    raise RuntimeError(f"{len(handles)} calls waiting, {res.active} bodies in memory")
                gc.collect()
                res.rss_growth = rss() - before
                res.handles = handles_bytes(handles)
                res.store_bytes = await store_size(folder, redis) - store_before
                t0 = time.perf_counter()
                await answer_all(client, handles[: res.answered], concurrency, first=0)
                res.answer_seconds = time.perf_counter() - t0
        finally:
            if redis is not None:
                await redis.stop()
    return res


async def store_size(folder: str, redis: RedisServer | None) -> int:
    """Bytes the store holds: the SQLite files (database and write-ahead log), or Redis's `used_memory`."""
    if redis is None:
        return sum(p.stat().st_size for p in Path(folder).iterdir() if p.is_file())  # noqa: ASYNC240 - a few files
    from redis.asyncio import Redis

    client = Redis.from_url(redis.url)
    try:
        return int((await client.info("memory"))["used_memory"])
    finally:
        await client.aclose()


async def bare_growth(calls: int, concurrency: int) -> float:
    """KiB of RSS per call the bare SDK's in-memory transport grows by: `calls` calls of a tool that asks nothing."""
    server = MCPServer("bench-bare")

    @server.tool()
    async def plain(tag: str) -> str:
        return tag

    async with Client(server, mode="auto") as client:
        for i in range(200):
            await client.call_tool("plain", {"tag": f"w{i}"})
        gc.collect()
        before = rss()

        async def one(i: int) -> None:
            await client.session.call_tool("plain", {"tag": f"t{i}"})

        await pool(calls, concurrency, one)  # as start_all drives the elicitkit calls
        gc.collect()
        return (rss() - before) / calls / KIB


def bare_in_fresh_process(calls: int, concurrency: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", "--questions", str(calls), "--concurrency", str(concurrency)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(out.strip().splitlines()[-1].split("=")[1])


def report(res: Hibernation, live_kib: float) -> float:
    n, live = res.questions, res.active
    print(
        f"hibernation ({LABELS[res.store]}, max_suspended={res.max_suspended}): {n} questions waiting, "
        f"{live} bodies in memory, {n - live} hibernated"
    )
    per_hibernated = res.per_hibernated(live_kib)
    own = per_hibernated - res.bare_per_call
    rows = [
        ("RSS per waiting question (live bodies included)", res.per_question(), "KiB"),
        (f"RSS per hibernated run (less {live} live x {live_kib:.2f} KiB)", per_hibernated, "KiB"),
        (f"  the bare SDK's own RSS growth per call ({n} calls that ask nothing)", res.bare_per_call, "KiB"),
        ("  elicitkit's cost per hibernated run (the difference)", own, "KiB"),
        (f"{STORE_SIZE[res.store]} per waiting question", res.store_bytes / n / KIB, "KiB"),
        ("start, per call (store writes, evictions)", res.start_seconds / n * 1e6, "µs"),
        (
            f"answer {res.answered} hibernated runs, per answer (load, replay)",
            res.answer_seconds / max(res.answered, 1) * 1e6,
            "µs",
        ),
    ]
    for label, value, unit in rows:
        print(f"  {label:<72} {value:>9.2f} {unit}")
    print(f"  every answered run got its own answer; total RSS growth {res.rss_growth / KIB / KIB:.1f} MiB")
    return own


LABELS: dict[Store, str] = {"sqlite": "SQLite", "redis": "Redis"}
STORE_SIZE: dict[Store, str] = {"sqlite": "SQLite files (database and WAL)", "redis": "Redis used_memory"}


def phase(
    questions: int,
    max_suspended: int,
    concurrency: int,
    answered: int,
    live_kib: float,
    stores: tuple[Store, ...] = ("sqlite",),
    bare: float | None = None,
) -> float:
    """Measure and report each store; elicitkit's KiB per hibernated run on the first.

    `bare` is the bare SDK's RSS growth per call if already measured (`--bare` prints it); else it is measured first.
    """
    if bare is None:
        bare = bare_in_fresh_process(questions, concurrency)
    own: list[float] = []
    for i, store in enumerate(stores):
        if i:
            print()
        res = anyio.run(measure, store, questions, max_suspended, concurrency, answered)
        res.bare_per_call = bare
        own.append(report(res, live_kib))
    return own[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=100_000, help="questions waiting at once (default 100000)")
    parser.add_argument("--max-suspended", type=int, default=1000, help="bodies kept in memory (default 1000)")
    parser.add_argument("--concurrency", type=int, default=100, help="calls in flight (default 100)")
    parser.add_argument("--answer", type=int, default=1000, help="hibernated runs answered (default 1000)")
    parser.add_argument("--live-kib", type=float, default=24.0, help="heap per live body, for the second row")
    parser.add_argument(
        "--store",
        choices=[*STORES, "both"],
        default="both",
        help="where hibernated runs wait: sqlite, redis (a redis-server on a free port), or both (default)",
    )
    parser.add_argument("--bare", action="store_true", help="only the bare SDK's growth per call (a fresh process)")
    parser.add_argument(
        "--bare-kib",
        type=float,
        help="the bare SDK's growth per call as `--bare` printed it for as many questions: skips measuring it again",
    )
    args = parser.parse_args(argv)
    if args.bare:
        print(f"bare_kib_per_call={anyio.run(bare_growth, args.questions, args.concurrency):.3f}")
        return
    logging.getLogger("mcp").setLevel(logging.WARNING)
    logging.getLogger("elicitkit").setLevel(logging.WARNING)
    stores = STORES if args.store == "both" else (args.store,)
    own = phase(args.questions, args.max_suspended, args.concurrency, args.answer, args.live_kib, stores, args.bare_kib)
    print(f"kb_per_hibernated={own:.2f}")


if __name__ == "__main__":
    main()
