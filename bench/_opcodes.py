"""Counting the Python bytecode instructions a piece of work executes: a figure this machine's noise cannot move.

Wall time on a busy 2-core machine moves by 10 % and more from one run to the next, and so do the ratios the
benchmarks pair; the number of bytecode instructions the interpreter executes for the same work moves only
when the code does. `count(work, n)` runs `work()` once under a tracer that counts every instruction executed,
by the package of the code executing it (elicitkit, mcp, anyio, pydantic, the standard library, ...), and
gives the counts per unit of work (`n` units: questions, calls).

What it does not see is time spent outside Python bytecode: pydantic-core's validation, the OS, the memory
system. Wall time sees those, so the two figures are read side by side: an instruction count says how much
Python work a change saved, exactly; wall time says what that was worth on this machine. Tracing runs some
50 times slower than the work itself: count a few hundred units, not thousands.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from _paired import Comparison, Variant

import elicitkit

__all__ = ["Opcodes", "count", "count_each", "package_of", "report"]

_STDLIB = sysconfig.get_paths()["stdlib"]
# By where the package and this folder are, not by a name in the path: a repository cloned as `elicitkit/` holds
# its virtualenv's packages under that name too.
_ELICITKIT = str(Path(elicitkit.__file__).parent) + os.sep
_BENCH = str(Path(__file__).parent) + os.sep


def package_of(filename: str) -> str:
    """Who wrote the code in `filename`: `elicitkit`, an installed package's top-level name, `stdlib`, `bench`, or
    `generated` (a dataclass's or named tuple's generated methods)."""
    if filename.startswith(_ELICITKIT):
        return "elicitkit"
    if filename.startswith(_BENCH):
        return "bench"
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if filename.startswith((_STDLIB, "<frozen")):
        return "stdlib"
    return "generated" if filename.startswith("<") else "other"


class Opcodes:
    """Instructions executed per unit of work, by package."""

    def __init__(self, counts: Counter[str], units: int) -> None:
        self.by_package = {name: executed / units for name, executed in counts.items()}
        self.total = sum(self.by_package.values())

    def __getitem__(self, package: str) -> float:
        return self.by_package.get(package, 0.0)


async def count(work: Callable[[], Awaitable[Any]], units: int) -> Opcodes:
    """Run `work()` once, counting the bytecode instructions every frame of this thread executes meanwhile
    (the event loop's, every task's), and give them per unit (`units`: how many units `work` does)."""
    counts: Counter[str] = Counter()
    packages: dict[str, str] = {}

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            filename = frame.f_code.co_filename
            package = packages.get(filename)
            if package is None:
                package = packages[filename] = package_of(filename)
            counts[package] += 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True  # each frame's instructions, not its lines
        frame.f_trace_lines = False
        return local

    sys.settrace(calls)
    try:
        await work()
    finally:
        sys.settrace(None)
    return Opcodes(counts, units)


async def count_each(variants: Sequence[Variant], units: int) -> dict[int, Opcodes]:
    """Each variant's instructions per unit (by the variant's `id`), counted over `units` units after the timing."""
    return {id(v): await count(lambda v=v: v.sample(units), units) for v in variants}  # type: ignore[misc]


def report(variants: Sequence[Variant], comparisons: Sequence[Comparison], counted: dict[int, Opcodes]) -> None:
    """The instructions of each variant (all, and elicitkit's own, anyio's and the SDK's), and each comparison's
    ratio in instructions."""
    print()
    print("Python bytecode instructions per elicitation (counted, not timed: the same on every run):")
    head = f"{'era':<11} {'impl':<10} {'variant':<27} {'instructions':>12} {'elicitkit':>10} {'anyio':>8} {'mcp':>8}"
    print(head)
    print("-" * len(head))
    for v in variants:
        ops = counted[id(v)]
        row = f"{v.era:<11} {v.impl:<10} {v.label:<27} {ops.total:>12.0f}"
        print(f"{row} {ops['elicitkit']:>10.0f} {ops['anyio']:>8.0f} {ops['mcp']:>8.0f}")
    for c in comparisons:
        ratio = counted[id(c.elicitkit)].total / counted[id(c.baseline)].total
        print(f"{c.name}: {ratio:.3f} in instructions")
