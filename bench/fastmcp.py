"""elicitkit on a fastmcp server vs fastmcp's own elicitation, side by side in one run.

What it measures
----------------
Everything runs in one process over fastmcp's in-memory transport
(`fastmcp.Client(server, mode=...)`), with an `elicitation_handler` that
accepts at once with fixed content, so the numbers are protocol + framework +
library overhead. Every variant asks the same 3-field pydantic model (bool,
str, Literal choice) and gets the same answer; both servers are plain
`FastMCP` servers driven by the same fastmcp `Client`.

2025-11-25 (`mode="legacy"`, the server sends `elicitation/create` mid-call):

- fastmcp:   one tool call whose body runs `await ctx.elicit(msg, Approval)` N times;
- elicitkit: one tool call whose body runs `await hitl.elicit(ctx, msg, Approval)` N times.

  µs per elicitation = wall time of the whole tool call / N.

2026-07-28 (`mode="auto"`, fastmcp's default; the call returns an
`InputRequiredResult` and the client retries with the answers). fastmcp's own
`ctx.elicit` raises here, so its way to ask is the guard pattern:

- fastmcp:   a guard tool - the first run returns an `InputRequiredResult`
  asking for Approval (its schema built once, at import), the client answers,
  the tool runs *again* and reads `ctx.input_responses`;
- elicitkit: a tool body that asks once with `hitl.elicit` (the body stays
  suspended between the first call and the retry; it runs once);
- fastmcp, checked: the guard pattern as a careful author writes it. The plain
  guard takes any `inputResponses` it is sent, so a client can skip the
  question by sending an answer with its first call, or replay one approval
  into many calls. elicitkit takes an answer only with the sealed
  `requestState` of the round that asked it, once. The checked guard does the
  same work: it mints a `requestState` per question (sealed by the SDK, as
  elicitkit's is), takes an answer only with one it minted, and spends it.

  Each tool call is call -> InputRequiredResult -> retry with answers -> result,
  i.e. exactly one elicitation; µs per elicitation = mean wall time of N calls.

Variants are warmed up, then sampled `--repeats` times, interleaved in
alternating order so drift on a noisy machine hits every variant alike.
Each variant's Python bytecode instructions per elicitation are then counted
(`bench/_opcodes.py`, over 50 elicitations): the same on every run, however
busy the machine; read them beside the times, which also see pydantic-core and
the OS.
Figures are MEDIANS; the ratio is the median of the per-repeat ratios
(elicitkit ÷ fastmcp, measured back to back).

How to run
----------
From the repository root (fastmcp is in the `fastmcp` extra, installed by `./dev`)::

    .venv/bin/python bench/fastmcp.py              # defaults: --n 200 --repeats 7

How to read it
--------------
One row per variant, then elicitkit ÷ fastmcp per era, and on 2026-07-28 also
elicitkit ÷ the checked guard (the same work). The goal (issue 26) is <= 1.0
on both eras: elicitkit on a fastmcp server costs no more than fastmcp's own
way to ask. The last line is always ``ratio=<x>``: the larger (worse) of the
two eras' ratios against the plain guard and `ctx.elicit`, three decimals. A
missed goal is reported, never a failing exit code. Expect +-10% run to run
on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import secrets
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import anyio
from _opcodes import Opcodes, count_each
from _opcodes import report as report_opcodes
from _paired import Call, Comparison, Variant, interleave, loop_call, side_by_side, single_calls
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation

# This file is named like the package it measures: run as a script, its folder is first on sys.path and
# `import fastmcp` would find this file. Take the folder off the path before importing fastmcp.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
from fastmcp import Client, Context, FastMCP  # noqa: E402
from fastmcp.server.elicitation import get_elicitation_schema  # noqa: E402

GOAL = 1.0
OPCODE_UNITS = 50
"""Elicitations per variant whose bytecode instructions are counted (tracing runs ~50x slower)."""
MESSAGE = "Deploy v2.1 to production?"
CONTENT: dict[str, Any] = {"approved": True, "note": "ship it", "color": "green"}
LEGACY, MODERN = "2025-11-25", "2026-07-28"


class Approval(BaseModel):
    approved: bool
    note: str
    color: Literal["red", "green", "blue"]


async def person(message: str, response_type: Any, params: ElicitRequestParams, context: Any) -> ElicitResult:
    """The person (fastmcp's handler shape): accepts every question at once with the same content."""
    return ElicitResult(action="accept", content=CONTENT)


# -- servers -------------------------------------------------------------------

GUARD_SCHEMA = get_elicitation_schema(Approval)
"""The guard tool's schema, built once (a careful fastmcp author would; it favours fastmcp)."""


def fastmcp_server() -> FastMCP:
    server = FastMCP("bench-fastmcp")

    @server.tool
    async def loop(n: int, ctx: Context) -> int:
        """Ask n questions in a row with fastmcp's own ctx.elicit (2025-11-25 only)."""
        accepted = 0
        for _ in range(n):
            result = await ctx.elicit(MESSAGE, Approval)
            if result.action == "accept" and result.data.approved:
                accepted += 1
        return accepted

    @server.tool
    async def once(ctx: Context) -> int | InputRequiredResult:
        """fastmcp's guard pattern: ask by returning, read the answer when the tool runs again."""
        answer = (ctx.input_responses or {}).get("approval")
        if not isinstance(answer, ElicitResult):
            ask = ElicitRequest(params=ElicitRequestFormParams(message=MESSAGE, requested_schema=GUARD_SCHEMA))
            return InputRequiredResult(input_requests={"approval": ask})
        return int(answer.action == "accept" and Approval.model_validate(answer.content).approved)

    minted: set[str] = set()
    """The requestStates `checked` handed out and not yet spent (one process: a set does)."""

    @server.tool
    async def checked(ctx: Context) -> int | InputRequiredResult:
        """The guard pattern as a careful author writes it: an answer counts only with the requestState minted
        when it was asked, and only once; anything else (inputResponses sent unasked, a replayed retry) asks
        again. The SDK seals the requestState on the way out and opens it on the way in, as for elicitkit."""
        answer = (ctx.input_responses or {}).get("approval")
        state = ctx.request_state
        if not isinstance(answer, ElicitResult) or state is None or state not in minted:
            state = secrets.token_urlsafe(16)
            minted.add(state)
            ask = ElicitRequest(params=ElicitRequestFormParams(message=MESSAGE, requested_schema=GUARD_SCHEMA))
            return InputRequiredResult(input_requests={"approval": ask}, request_state=state)
        minted.discard(state)
        return int(answer.action == "accept" and Approval.model_validate(answer.content).approved)

    return server


def elicitkit_server() -> FastMCP:
    server = FastMCP("bench-elicitkit")
    hitl = Elicitation(server)

    @server.tool
    async def loop(n: int, ctx: Context) -> int:
        """Ask n questions in a row (both eras)."""
        accepted = 0
        for _ in range(n):
            result = await hitl.elicit(ctx, MESSAGE, Approval)
            if isinstance(result, Accepted) and result.data.approved:
                accepted += 1
        return accepted

    @server.tool
    async def once(ctx: Context) -> int:
        """One question, asked from the body (which runs once)."""
        result = await hitl.elicit(ctx, MESSAGE, Approval)
        return int(isinstance(result, Accepted) and result.data.approved)

    return server


# -- measurement ---------------------------------------------------------------


def calls_of(client: Client) -> Call:
    """fastmcp's client calls a tool and hands back an error result instead of raising (as the SDK's does)."""

    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        return await client.call_tool(tool, arguments, raise_on_error=False)

    return call


async def bench(n: int, repeats: int) -> tuple[list[Variant], list[Comparison], dict[int, Opcodes]]:
    plain, kit = fastmcp_server(), elicitkit_server()
    async with side_by_side(
        Client(plain, mode="legacy", elicitation_handler=person),
        Client(kit, mode="legacy", elicitation_handler=person),
        Client(plain, mode="auto", elicitation_handler=person),
        Client(kit, mode="auto", elicitation_handler=person),
    ) as (plain_legacy, kit_legacy, plain_modern, kit_modern):
        for client, era in [(plain_legacy, LEGACY), (kit_legacy, LEGACY), (plain_modern, MODERN), (kit_modern, MODERN)]:
            if client.protocol_version != era:
                raise RuntimeError(f"expected protocol {era}, negotiated {client.protocol_version}")

        def variant(era: str, impl: str, label: str, client: Client, sample: Any) -> Variant:
            return Variant(era, impl, label, lambda k: sample(calls_of(client), k, f"{era} {impl} {label}"))

        variants = [
            plain_loop := variant(LEGACY, "fastmcp", "ctx.elicit x N, one call", plain_legacy, loop_call),
            kit_loop := variant(LEGACY, "elicitkit", "hitl.elicit x N, one call", kit_legacy, loop_call),
            guard := variant(MODERN, "fastmcp", "guard pattern, 1 per call", plain_modern, single_calls),
            kit_once := variant(MODERN, "elicitkit", "hitl.elicit, 1 per call", kit_modern, single_calls),
            checked := variant(MODERN, "fastmcp", "guard, requestState checked", plain_modern, checked_calls),
        ]
        await interleave(variants, n, repeats)
        # Counted once each, after the timing (tracing is slow): a figure the machine's noise cannot move.
        counted = await count_each(variants, min(n, OPCODE_UNITS))
        return (
            variants,
            [
                Comparison(LEGACY, kit_loop, plain_loop),
                Comparison(MODERN, kit_once, guard),
                Comparison(f"{MODERN} vs checked guard", kit_once, checked),
            ],
            counted,
        )


async def checked_calls(call: Call, n: int, label: str) -> float:
    return await single_calls(call, n, label, tool="checked")


# -- report --------------------------------------------------------------------


def report(
    variants: list[Variant],
    comparisons: list[Comparison],
    counted: dict[int, Opcodes],
    n: int,
    repeats: int,
    seconds: float,
) -> float:
    print(
        f"elicitkit on fastmcp vs fastmcp's own elicitation (in memory): N={n}, {repeats} repeats, medians; "
        f"python {platform.python_version()}, fastmcp {version('fastmcp')}, mcp {version('mcp')}, "
        f"elicitkit {version('elicitkit')}, {os.cpu_count()} CPUs"
    )
    print()
    head = f"{'era':<11} {'impl':<10} {'variant':<27} {'median µs/elicit':>16} {'min':>9} {'max':>9}"
    print(head)
    print("-" * len(head))
    for v in variants:
        print(f"{v.era:<11} {v.impl:<10} {v.label:<27} {v.median:>16.1f} {min(v.samples):>9.1f} {max(v.samples):>9.1f}")
    print()
    print("elicitkit/fastmcp (median of per-repeat ratios; range):")
    for c in comparisons:
        paired = c.paired
        verdict = "met" if c.ratio <= GOAL else "MISSED"
        print(f"{c.name}  {c.ratio:.3f}  (range {min(paired):.3f}..{max(paired):.3f}; goal <= {GOAL:.1f}: {verdict})")
    report_opcodes(variants, comparisons, counted)
    print(f"total {seconds:.1f} s")
    # The goal is on the two pairs; the checked guard's pair is the like-for-like figure next to them.
    return max(c.ratio for c in comparisons if c.name in (LEGACY, MODERN))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=200, help="elicitations per sample (default 200)")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved samples per variant (default 7)")
    args = parser.parse_args(argv)
    if args.n < 1 or args.repeats < 1:
        parser.error("--n and --repeats must be at least 1")
    for name in ("mcp", "fastmcp", "elicitkit.audit"):
        # Log lines are not what is measured (the audit trail's records included; its spans are no-ops here).
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.simplefilter("ignore")  # fastmcp's deprecation notices are not what is measured either

    start = time.perf_counter()
    variants, comparisons, counted = anyio.run(bench, args.n, args.repeats)
    ratio = report(variants, comparisons, counted, args.n, args.repeats, time.perf_counter() - start)
    print(f"ratio={ratio:.3f}")


if __name__ == "__main__":
    main()
