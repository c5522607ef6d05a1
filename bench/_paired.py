"""Side-by-side sampling for the benchmarks that compare elicitkit with a baseline in one run.

Each variant is sampled `repeats` times, interleaved with the others and in alternating order (forward, then
reversed), so drift on a noisy machine hits every variant alike; ratios are taken repeat by repeat (each pairs two
variants measured back to back) and their median reported, which is more robust than a ratio of medians.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "Comparison", "Variant", "check", "interleave", "loop_call", "single_calls"]

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
