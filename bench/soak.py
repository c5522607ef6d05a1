"""Soak: many clients on both eras, dropping, cancelling and doubling requests for minutes; nothing lost, no leak.

What it measures
----------------
One server process (`bench/_soak_server.py`: uvicorn, streamable HTTP on a free
loopback port, elicitkit with short question, run and session-idle timeouts)
and this driver, whose `--clients` clients (half 2026-07-28, half 2025-11-25
with `--era both`) each run the `review` tool over and over for `--duration`
seconds. A run asks three questions in sequence, with one journaled step
between the first two; each client answers every question at once with a
fresh random word, and at every question, independently:

- with probability `--drop` it drops the connection mid-retry. 2026-07-28: the
  retry is sent on a connection closed right after it, then sent again on a
  fresh one; the resend must get the run's next outcome. 2025-11-25: the answer
  is sent, then the call's stream dropped and the session abandoned without a
  DELETE; the client starts the run over (a new run) in a new session;
- with probability `--cancel` it cancels the run. 2026-07-28: it never comes
  back; 2025-11-25: `notifications/cancelled` for the call;
- with probability `--double` it sends the same retry (2025-11-25: the same
  answer) twice at once; both copies must get the same outcome.

Every completed run's result is checked: its own three answers, in order.

- `lost`: runs the client did not cancel whose correct result never came back
  (an error, a wrong or foreign answer, no result), plus doubled retries
  whose two copies got different outcomes;
- `duplicated`: steps the server performed more than once for one run (its
  counters), plus results a 2025-11-25 call stream delivered twice;
- `pending_after`: the server's active runs and pending questions once the
  soak has ended and what its clients abandoned has expired (the server's
  short timeouts; waited for up to their sum plus 15 s);
- `rss_growth_pct`: the server's RSS once idle after the soak, against once
  idle after a warm-up (`--warmup` seconds of the same load): each time the
  load stops, abandoned runs and sessions expire, the server collects its
  garbage, then its `VmRSS` is read.

How to run
----------
From the repository root (needs `redis-server` on PATH only for `--store redis`)::

    .venv/bin/python bench/soak.py                                 # 50 clients, 5 minutes
    .venv/bin/python bench/soak.py --clients 10 --duration 30       # a short run
    .venv/bin/python bench/soak.py --store sqlite --era 2025-11-25 --drop 0.2

The last line is always ``lost=N duplicated=N pending_after=N
rss_growth_pct=X.X`` (goal: zeros, and growth <= 10).
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp_types import CallToolResult, InputRequiredResult, TextContent

sys.path.insert(0, str(Path(__file__).parent))
from cross_node import SECRET, Node

from tests.chaos.wire import Refused, call_body, post, posted_then_dropped, retry_body
from tests.legacy_wire import LegacySession
from tests.redis_server import RedisServer

TOOL = "review"
QUESTION = re.compile(r"Answer ([123]) for (\S+)\?")
JOB_LIMIT = 60.0
"""Seconds one run may take before the client counts it lost (answers come at once; a run takes milliseconds)."""
KEEPALIVE = httpx.Limits(keepalive_expiry=1.0)
"""Idle connections are not reused after 1 s: uvicorn closes them after 5 s, httpx's default, and a request sent
on a connection the server is closing at that moment fails with `ReadError` (a race of the two, not a loss)."""


class SoakServer(Node):
    """The soak server process (bench/_soak_server.py)."""

    def __init__(self, store: str, log: Path, timeouts: Timeouts) -> None:
        super().__init__(store, "soak", log)
        self.args = [sys.executable, str(Path(__file__).with_name("_soak_server.py")), "--store", store]
        self.args += ["--secret", SECRET] if not store.startswith("memory") else []
        self.args += ["--question-timeout", str(timeouts.question), "--run-expiry", str(timeouts.run)]
        self.args += ["--session-idle-timeout", str(timeouts.idle)]

    def rss_mb(self) -> float:
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kb = int(re.search(r"VmRSS:\s+(\d+) kB", status)[1])  # type: ignore[index]
        return kb / 1024

    async def stats(self, collect: bool = False) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.get(f"http://127.0.0.1:{self.port}/soak/stats", params={"collect": collect or ""})
        stats: dict[str, Any] = response.json()
        return stats


@dataclass(frozen=True)
class Timeouts:
    question: float = 5.0
    run: float = 5.0
    idle: float = 3.0

    @property
    def settle(self) -> float:
        return self.question + self.run + self.idle + 15


@dataclass
class Tally:
    """What the clients saw."""

    runs: int = 0
    completed: int = 0
    cancelled: int = 0
    drops: int = 0
    doubles: int = 0
    lost: int = 0
    results_twice: int = 0
    mismatched: int = 0
    problems: list[str] = field(default_factory=list)
    by_era: dict[str, int] = field(default_factory=lambda: {"2026-07-28": 0, "2025-11-25": 0})

    def lose(self, why: str) -> None:
        self.lost += 1
        if len(self.problems) < 10:
            self.problems.append(why)


@dataclass(frozen=True)
class Rates:
    drop: float
    cancel: float
    double: float

    def draw(self, rng: random.Random) -> str:
        x = rng.random()
        for what, p in (("cancel", self.cancel), ("drop", self.drop), ("double", self.double)):
            if x < p:
                return what
            x -= p
        return "answer"


class Run:
    """One run's answers, made up as its questions come, and the result it must end with."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.answers: dict[int, str] = {}

    def answer(self, message: str) -> str:
        match = QUESTION.fullmatch(message)
        if match is None or match[2] != self.tag:
            raise AssertionError(f"{self.tag} was asked someone else's question: {message!r}")
        return self.answers.setdefault(int(match[1]), secrets.token_hex(4))

    def check(self, text: str) -> str | None:
        expected = f"{self.tag}:{','.join(self.answers[n] for n in (1, 2, 3))}" if len(self.answers) == 3 else None
        return None if text == expected else f"{self.tag}: got {text!r}, expected {expected!r}"


# -- 2026-07-28 -------------------------------------------------------------------------------------------


async def send(http: httpx.AsyncClient, url: str, body: bytes) -> CallToolResult | InputRequiredResult:
    """`tests.chaos.wire.post` on a kept connection."""
    return await post(url, body, client=http)


async def modern_run(
    http: httpx.AsyncClient, url: str, tag: str, rates: Rates, rng: random.Random, t: Tally, trail: list[str]
) -> None:
    """One run on 2026-07-28; `trail` gets what the client did at each question, for the report."""
    run = Run(tag)
    arguments = {"tag": tag}
    result = await send(http, url, call_body(TOOL, arguments))
    last = "call"
    while isinstance(result, InputRequiredResult):
        [request] = (result.input_requests or {}).values()
        value = run.answer(request.params.message)  # type: ignore[union-attr]
        retry = retry_body(TOOL, arguments, result, value)
        last = rates.draw(rng)
        trail.append(last)
        match last:
            case "cancel":
                t.cancelled += 1
                return  # abandoned: the run expires after run_expiry
            case "drop":
                t.drops += 1
                async with posted_then_dropped(url, retry) as dropped:
                    await dropped.drop()
                result = await post(url, retry)  # the resend, on a fresh connection
            case "double":
                t.doubles += 1
                first, second = await doubled(url, retry)
                if outcome(first) != outcome(second):
                    t.mismatched += 1
                    t.lose(f"{tag}: a doubled retry got {outcome(first)!r} and {outcome(second)!r}")
                if isinstance(first, Refused):
                    first, second = second, first
                if isinstance(first, Refused):
                    raise first
                result = first
            case _:
                try:
                    result = await send(http, url, retry)
                except Refused as refused:
                    raise Refused(
                        {**refused.error, "message": f"after {last}: {refused.error.get('message')}"}
                    ) from None
    problem = run.check(text(result)) if not result.is_error else f"{tag}: error {text(result)!r}"
    if problem is None:
        t.completed += 1
    else:
        t.lose(f"{problem} (at: {' '.join(trail)})")


async def doubled(url: str, retry: bytes) -> list[CallToolResult | InputRequiredResult | Refused]:
    """The same retry sent twice at once, each on a connection of its own: both outcomes."""
    copies: list[CallToolResult | InputRequiredResult | Refused] = []

    async def copy() -> None:
        try:
            copies.append(await post(url, retry))
        except Refused as refused:
            copies.append(refused)

    async with anyio.create_task_group() as tg:
        tg.start_soon(copy)
        tg.start_soon(copy)
    return copies


def outcome(result: CallToolResult | InputRequiredResult | Refused) -> object:
    if isinstance(result, Refused):
        return ("refused", result.reason or result.error.get("message"))
    if isinstance(result, InputRequiredResult):
        # Each copy is sealed afresh (its requestState differs byte for byte): the same round asks the same.
        asked = sorted((key, request.params.message) for key, request in (result.input_requests or {}).items())  # type: ignore[union-attr]
        return ("round", asked)
    return ("result", text(result), result.is_error)


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


# -- 2025-11-25 -------------------------------------------------------------------------------------------


@asynccontextmanager
async def legacy_session(url: str) -> AsyncIterator[LegacySession]:
    """A session with connections of its own; leaving the block abandons it (no DELETE), as a vanished client."""
    async with httpx.AsyncClient(timeout=JOB_LIMIT, limits=KEEPALIVE) as http:
        session = LegacySession(http, url)
        await session.open()
        yield session


async def legacy_run(session: LegacySession, tag: str, rates: Rates, rng: random.Random, t: Tally) -> bool:
    """One run on `session`; False when the client dropped the session mid-run (it starts over elsewhere)."""
    run = Run(tag)
    async with session.call(TOOL, {"tag": tag}) as call:
        results: list[dict[str, Any]] = []
        while (message := await call.next_message()) is not None:
            if message.get("method") == "elicitation/create":
                answer = {"action": "accept", "content": {"value": run.answer(message["params"]["message"])}}
                match rates.draw(rng):
                    case "cancel":
                        assert call.request_id is not None
                        await session.cancel(call.request_id)
                        await call.drop()
                        t.cancelled += 1
                        return True
                    case "drop":
                        t.drops += 1
                        await session.reply(message, answer)
                        await call.drop()
                        return False
                    case "double":
                        t.doubles += 1
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(session.reply, message, answer)
                            tg.start_soon(session.reply, message, answer)
                    case _:
                        await session.reply(message, answer)
            elif message.get("id") == call.request_id:
                results.append(message)
    if len(results) > 1:
        t.results_twice += 1
    if not results:
        t.lose(f"{tag}: the call's stream ended without a result")
    elif "result" not in results[0]:
        t.lose(f"{tag}: error {results[0].get('error')!r}")
    else:
        result = CallToolResult.model_validate(results[0]["result"])
        problem = run.check(text(result)) if not result.is_error else f"{tag}: error {text(result)!r}"
        if problem is None:
            t.completed += 1
        else:
            t.lose(problem)
    return True


# -- clients ----------------------------------------------------------------------------------------------


async def client(n: int, era: str, url: str, until: float, rates: Rates, t: Tally) -> None:
    rng = random.Random(n)
    count = 0

    def next_tag() -> str:
        nonlocal count
        count += 1
        return f"c{n}-{secrets.token_hex(3)}-{count}"

    if era == "2026-07-28":
        async with httpx.AsyncClient(timeout=JOB_LIMIT, limits=KEEPALIVE) as http:
            while time.monotonic() < until:
                tag = next_tag()
                t.runs += 1
                t.by_era[era] += 1
                try:
                    with anyio.fail_after(JOB_LIMIT):
                        await modern_run(http, url, tag, rates, rng, t, trail := [])
                except (Refused, httpx.HTTPError, TimeoutError, AssertionError) as exc:
                    t.lose(f"{tag}: {type(exc).__name__}: {exc} (at: {' '.join(trail)})")
        return
    while time.monotonic() < until:
        try:
            async with legacy_session(url) as session:
                while time.monotonic() < until:
                    tag = next_tag()
                    t.runs += 1
                    t.by_era[era] += 1
                    with anyio.fail_after(JOB_LIMIT):
                        kept = await legacy_run(session, tag, rates, rng, t)
                    if not kept:
                        break  # abandoned without a DELETE; the run starts over in a new session
        except (httpx.HTTPError, TimeoutError, AssertionError) as exc:
            request = exc.request if isinstance(exc, httpx.RequestError) else None
            during = f" ({request.method} {request.headers.get('content-length', '')} bytes)" if request else ""
            t.lose(f"c{n} (2025-11-25): {type(exc).__name__}: {exc!r}{during}")


async def load(url: str, clients: int, seconds: float, era: str, rates: Rates) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    eras = ["2026-07-28", "2025-11-25"] if era == "both" else [era]
    async with anyio.create_task_group() as tg:
        for n in range(clients):
            tg.start_soon(client, n, eras[n % len(eras)], url, until, rates, tally)
    return tally


async def settle(server: SoakServer, within: float) -> dict[str, Any]:
    """Wait for what the clients abandoned to expire (runs, questions, sessions); the server's stats then."""
    deadline = time.monotonic() + within
    while True:
        stats = await server.stats()
        idle = not (stats["active_runs"] or stats["pending_questions"] or stats["sessions"])
        if idle or time.monotonic() > deadline:
            return await server.stats(collect=True)
        await anyio.sleep(0.5)  # polled: the server process signals nothing


async def bench(args: argparse.Namespace) -> tuple[Tally, dict[str, Any], list[float], list[str]]:
    timeouts = Timeouts(args.question_timeout, args.run_expiry, args.session_idle_timeout)
    rates = Rates(args.drop, args.cancel, args.double)
    with tempfile.TemporaryDirectory(prefix="elicitkit-soak-") as tmp:
        redis: RedisServer | None = None
        store = "memory://"
        if args.store == "sqlite":
            store = f"sqlite:///{tmp}/soak.db"
        elif args.store == "redis":
            redis = RedisServer(Path(tmp) / "redis")
            await redis.start()
            store = redis.url
        server = SoakServer(store, Path(tmp) / "server.log", timeouts)
        try:
            await server.start()
            await load(server.url, args.clients, args.warmup, args.era, rates)
            await settle(server, timeouts.settle)
            rss = [server.rss_mb()]
            peak = 0.0

            async def watch() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, server.rss_mb())
                    await anyio.sleep(1)

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                tally = await load(server.url, args.clients, args.duration, args.era, rates)
                tg.cancel_scope.cancel()
            stats = await settle(server, timeouts.settle)
            rss += [peak, server.rss_mb()]
        finally:
            server.stop()
            if redis is not None:
                await redis.stop()
        return tally, stats, rss, server.notable()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of soak (after the warm-up)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds of warm-up (default: a tenth, 5..30)")
    parser.add_argument("--drop", type=float, default=0.05, help="chance a question's answer is sent and dropped")
    parser.add_argument("--cancel", type=float, default=0.05, help="chance the run is cancelled at a question")
    parser.add_argument("--double", type=float, default=0.05, help="chance a question's answer is sent twice")
    parser.add_argument("--era", choices=["both", "2026-07-28", "2025-11-25"], default="both")
    parser.add_argument("--store", choices=["memory", "sqlite", "redis"], default="memory")
    parser.add_argument("--question-timeout", type=float, default=5.0, help="the server's, in seconds")
    parser.add_argument("--run-expiry", type=float, default=5.0, help="the server's, in seconds")
    parser.add_argument("--session-idle-timeout", type=float, default=3.0, help="the server's, in seconds")
    args = parser.parse_args(argv)
    if args.warmup is None:
        args.warmup = min(30.0, max(5.0, args.duration / 10))

    print(
        f"soak: {args.clients} clients ({args.era}), {args.duration:g} s after {args.warmup:g} s of warm-up, "
        f"store {args.store}; drop {args.drop:g}, cancel {args.cancel:g}, double {args.double:g} per question; "
        f"server timeouts: question {args.question_timeout:g} s, run {args.run_expiry:g} s, "
        f"session idle {args.session_idle_timeout:g} s"
    )
    print(f"python {platform.python_version()}, mcp {version('mcp')}, elicitkit from {Path(__file__).parents[1]}")
    started = time.monotonic()
    tally, stats, (baseline, peak, end), logged = anyio.run(bench, args)
    took = time.monotonic() - started
    print(
        f"runs: {tally.runs} ({', '.join(f'{e}: {n}' for e, n in tally.by_era.items())}), "
        f"{tally.runs / args.duration:.1f}/s; completed {tally.completed}, cancelled {tally.cancelled}; "
        f"{tally.drops} dropped and {tally.doubles} doubled answers"
    )
    print(f"server after: {stats}")
    print(f"rss: {baseline:.1f} MB idle after warm-up, {peak:.1f} MB peak, {end:.1f} MB idle after the soak")
    for problem in tally.problems:
        print(f"  lost: {problem}")
    for line in logged[:10]:
        print(f"  logged: {line}")
    print(f"({took:.0f} s in all)")
    duplicated = len(stats["steps_twice"]) + tally.results_twice
    pending = stats["active_runs"] + stats["pending_questions"]
    growth = (end - baseline) / baseline * 100
    print(f"lost={tally.lost} duplicated={duplicated} pending_after={pending} rss_growth_pct={growth:.1f}")


if __name__ == "__main__":
    main()
