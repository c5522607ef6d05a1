"""Side-by-side sampling for the benchmarks that compare elicitkit with a baseline in one run.

Each variant is sampled `repeats` times, interleaved with the others and in alternating order (forward, then
reversed), so drift on a noisy machine hits every variant alike; ratios are taken repeat by repeat (each pairs two
variants measured back to back) and their median reported, which is more robust than a ratio of medians.

The clients a benchmark compares are opened `side_by_side`: each in a task of its own, so that no variant's server
runs nested inside another variant's client (see `side_by_side`).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

__all__ = ["Call", "Comparison", "Variant", "check", "interleave", "loop_call", "side_by_side", "single_calls"]

C = TypeVar("C")

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""How a client calls a tool: `(name, arguments) -> result`."""


@dataclass
class Variant:
    era: str
    impl: str
    label: str
    sample: Callable[[int], Awaitable[float]]
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


@dataclass
class Comparison:
    """elicitkit over a baseline, paired repeat by repeat."""

    name: str
    elicitkit: Variant
    baseline: Variant

    @property
    def paired(self) -> list[float]:
        return [e / b for e, b in zip(self.elicitkit.samples, self.baseline.samples, strict=True)]

    @property
    def ratio(self) -> float:
        """Median of the per-repeat elicitkit/baseline ratios."""
        return statistics.median(self.paired)

    @property
    def ratio_of_medians(self) -> float:
        return self.elicitkit.median / self.baseline.median


@asynccontextmanager
async def side_by_side(*clients: AbstractAsyncContextManager[C]) -> AsyncIterator[list[C]]:
    """Open every client in a task of its own, all at the same depth; yield them in order; close them all at the end.

    An in-memory client runs its server in tasks it starts from the task that opens it, so clients opened one
    inside another (`async with A() as a, B() as b`) put B's server under A's cancel scopes too. anyio walks a
    task's whole chain of enclosing cancel scopes at every checkpoint and every scope's exit, so each scope
    above the server costs every request it handles: opened in a row, the second variant paid for the first
    one's scopes (some 80 instructions per question per scope on the 2025-11-25 loop), the third for both.
    Opened here, every variant's server sits under the same scopes, its own client's.
    """
    done = anyio.Event()

    async def hold(client: AbstractAsyncContextManager[C], *, task_status: TaskStatus[C]) -> None:
        async with client as entered:
            task_status.started(entered)
            await done.wait()

    async with anyio.create_task_group() as tg:
        opened = [await tg.start(hold, client) for client in clients]
        try:
            yield opened
        finally:
            done.set()


async def interleave(variants: Sequence[Variant], n: int, repeats: int) -> None:
    """Warm every variant up (caches, schema builds, first-call paths), then sample them in alternating order."""
    for v in variants:
        await v.sample(n)
        await v.sample(n)
    for r in range(repeats):
        for v in variants if r % 2 == 0 else reversed(variants):
            v.samples.append(await v.sample(n))


def check(result: Any, expected: int, label: str) -> None:
    """A tool result must be the structured `{"result": expected}`: a benchmark of failing calls measures nothing."""
    if result.is_error or result.structured_content != {"result": expected}:
        raise RuntimeError(f"{label}: unexpected tool result {result!r}")


async def loop_call(call: Call, n: int, label: str, tool: str = "loop") -> float:
    """One call that asks n questions; µs per elicitation."""
    gc.collect()
    start = time.perf_counter_ns()
    result = await call(tool, {"n": n})
    elapsed = time.perf_counter_ns() - start
    check(result, n, label)
    return elapsed / n / 1000


async def single_calls(call: Call, n: int, label: str, tool: str = "once") -> float:
    """n calls that each ask one question; µs per elicitation (= per call)."""
    results = []
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(n):
        results.append(await call(tool, {}))
    elapsed = time.perf_counter_ns() - start
    for result in results:
        check(result, 1, label)
    return elapsed / n / 1000
