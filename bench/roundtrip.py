"""Round-trip cost of one elicitation: elicitkit vs the bare `mcp` SDK, side by side.

What it measures
----------------
Everything runs in one process over the SDK's in-memory transport
(`mcp.Client(server, mode=...)`), with an `elicitation_callback` that accepts
at once with fixed content, so the numbers are pure protocol + library
overhead. Every variant asks the same 3-field pydantic model (bool, str,
Literal choice) and gets the same answer.

2025-11-25 (`mode="legacy"`, the server sends `elicitation/create` mid-call):

- bare SDK:  one tool call whose body runs `await ctx.elicit(msg, Model)` N times;
- elicitkit: one tool call whose body runs `await hitl.elicit(ctx, msg, Model)` N times.

  µs per elicitation = wall time of the whole tool call / N.

2026-07-28 (`mode="auto"`, the call returns an `InputRequiredResult` and the
client retries with the answers):

- bare SDK:  the `Resolve`/`Elicit` parameter flow, one resolver asking Model;
- elicitkit: a tool body that asks once with `hitl.elicit` (the body stays
  suspended between the first call and the retry).

  Each tool call is call -> InputRequiredResult -> retry with answers -> result,
  i.e. exactly one elicitation; µs per elicitation = mean wall time of N calls.

Informational rows (skip them with ``--no-extras``):

- 2025-11-25 bare "floor": the same loop calling `session.elicit_form` with a
  schema rendered once and `Model.model_validate` on the answer - `ctx.elicit`
  minus its per-call schema rendering, i.e. what the transport itself costs.
  elicitkit / floor is elicitkit's own per-question overhead.
- 2025-11-25 bare floor "with deadline + _meta": the floor doing what
  elicitkit's questions do on the wire: each bounded by its own deadline (the
  SDK's `request_read_timeout_seconds`, set to elicitkit's default timeout)
  that the request's `_meta` tells the client (`elicitkit/expiresAt`), so the
  client parses the same request. elicitkit / this row is its bookkeeping
  beyond what any server bounding its questions pays.
- 2025-11-25 elicitkit with 4 no-op hooks (one at each of before_ask, after_ask,
  before_answer, after_answer): hooks / no hooks is what registering hooks costs
  (issue 9's target: <= 1.05).
- 2026-07-28 elicitkit: one call whose body asks N questions in a loop, so
  N + 1 rounds in one `call_tool`; µs per elicitation = call time / N. The bare
  SDK has no equivalent (resolvers run before the body), so it is compared with
  the bare one-per-call figure only for orientation.

Variants are warmed up first, then sampled `--repeats` times, interleaved and
in alternating order (forward, then reversed) so that drift on a noisy machine
hits every variant alike. Reported figures are MEDIANS over the repeats.

With the informational rows, each variant's Python bytecode instructions per
elicitation are also counted (`bench/_opcodes.py`, over 100 elicitations, after
the timing): the same figure on every run, however busy the machine, by package
(elicitkit's own, anyio's, the SDK's). It does not see time spent outside
Python (pydantic-core, the OS), which wall time does: read the two side by side.

How to run
----------
From the repository root::

    .venv/bin/python bench/roundtrip.py            # defaults: --n 300 --repeats 7
    .venv/bin/python bench/roundtrip.py --n 1000 --repeats 11

How to read it
--------------
The table lists, per protocol era, the median µs per elicitation of each
variant and the elicitkit/bare ratio. The ratio is the median of the per-repeat
ratios (each repeat pairs the two variants measured back to back), which is
more robust to drift than a ratio of medians (also shown). DESIGN.md's target
is ratio <= 1.05 on 2025-11-25 (elicitkit costs at most 5% more than the bare
SDK's `ctx.elicit`). The last line is always ``ratio=<x>``: that 2025-11-25
ratio, three decimals. A missed target is reported, never a failing exit code.

Expect elicitkit to come out *below* 1.0 against `ctx.elicit`: the SDK renders
the model's JSON schema (`model_json_schema`) on every call, elicitkit compiles
it once per type. The floor row removes that difference; elicitkit / floor
(1.17-1.28 before questions' deadlines shared one timer and the audit trail
cost nothing when nothing records it, 1.19-1.29 before a question's wait was
bounded without a cancel scope, 1.21 before a waiting call held two frames
fewer per request and one fewer per question; issue 31's goal is <= 1.15) is the cost of
elicitkit's own bookkeeping (the question's id, record and deadline, the
deadline told in `_meta`, its route, content checked against the schema the
client was shown, then the type). The
audit trail is off here (the `elicitkit.audit` logger is set to WARNING, and
there is no OpenTelemetry SDK), as it is on a server that records nothing. On
2026-07-28 the bare `Resolve` flow re-runs resolution and decodes
`requestState` on every retry, while elicitkit resumes a suspended body.
Min/max columns show the spread; on a busy 2-core machine expect +-10% run to
run, which is why the medians and the paired ratios are what count.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Annotated, Any, Literal

import anyio
from _opcodes import Opcodes, count_each
from _opcodes import report as report_opcodes
from _paired import Comparison, Variant, interleave, loop_call, side_by_side, single_calls
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.shared.message import ServerMessageMetadata
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitRequestParams, ElicitResult
from pydantic import BaseModel

from elicitkit import Accepted, Elicitation
from elicitkit._core.kinds import EXPIRES_AT_META
from elicitkit._elicitation import DEFAULT_TIMEOUT

TARGET = 1.05
OPCODE_UNITS = 100
"""Elicitations per variant whose bytecode instructions are counted (tracing runs ~50x slower)."""
MESSAGE = "Deploy v2.1 to production?"
TIMEOUT = DEFAULT_TIMEOUT
"""elicitkit's default timeout for a question, which the floor doing the same job gives each of its own."""
CONTENT: dict[str, Any] = {"approved": True, "note": "ship it", "color": "green"}
LEGACY, MODERN = "2025-11-25", "2026-07-28"


class Approval(BaseModel):
    approved: bool
    note: str
    color: Literal["red", "green", "blue"]


async def human(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
    """The person: accepts every question at once with the same content."""
    return ElicitResult(action="accept", content=CONTENT)


# -- servers -------------------------------------------------------------------


FLOOR_SCHEMA = render_elicitation_schema(Approval)


async def ask_approval(ctx: Context) -> Elicit[Approval]:
    """The bare SDK's resolver (module level: tool annotations are evaluated by name)."""
    return Elicit(MESSAGE, Approval)


def bare_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench-bare")

    @server.tool()
    async def loop(n: int, ctx: Context) -> int:
        """Ask n questions in a row (2025-11-25 only: needs the back channel)."""
        accepted = 0
        for _ in range(n):
            result = await ctx.elicit(MESSAGE, Approval)
            if result.action == "accept" and result.data.approved:
                accepted += 1
        return accepted

    @server.tool()
    async def loop_floor(n: int, ctx: Context) -> int:
        """ctx.elicit minus its per-call schema rendering: the transport's floor."""
        session, request_id = ctx.request_context.session, ctx.request_id
        accepted = 0
        for _ in range(n):
            result = await session.elicit_form(MESSAGE, FLOOR_SCHEMA, related_request_id=request_id)
            if result.action == "accept" and Approval.model_validate(result.content).approved:
                accepted += 1
        return accepted

    @server.tool()
    async def loop_floor_bounded(n: int, ctx: Context) -> int:
        """The floor doing what elicitkit does on the wire: each question bounded by a deadline (the SDK's own
        request timeout) that `_meta` tells the client, as elicitkit's questions carry theirs."""
        session, metadata = ctx.request_context.session, ServerMessageMetadata(related_request_id=ctx.request_id)
        accepted = 0
        for _ in range(n):
            meta = {EXPIRES_AT_META: int((time.time() + TIMEOUT) * 1000)}
            params = ElicitRequestFormParams(message=MESSAGE, requested_schema=FLOOR_SCHEMA, _meta=meta)
            result = await session.send_request(
                ElicitRequest(params=params), ElicitResult, request_read_timeout_seconds=TIMEOUT, metadata=metadata
            )
            if result.action == "accept" and Approval.model_validate(result.content).approved:
                accepted += 1
        return accepted

    @server.tool()
    async def once(approval: Annotated[Approval, Resolve(ask_approval)]) -> int:
        """One question, asked by a resolver before the body runs."""
        return int(approval.approved)

    return server


def elicitkit_server(hooks: int = 0) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench-elicitkit")
    hitl = Elicitation(server)
    # No-op hooks, one per point in turn (before_ask, after_ask, before_answer, after_answer).
    points = [hitl.before_ask, hitl.after_ask, hitl.before_answer, hitl.after_answer]
    for i in range(hooks):
        points[i % len(points)](lambda *args: None)

    @server.tool()
    async def loop(n: int, ctx: Context) -> int:
        """Ask n questions in a row (both eras)."""
        accepted = 0
        for _ in range(n):
            result = await hitl.elicit(ctx, MESSAGE, Approval)
            if isinstance(result, Accepted) and result.data.approved:
                accepted += 1
        return accepted

    @server.tool()
    async def once(ctx: Context) -> int:
        """One question, asked from the body."""
        result = await hitl.elicit(ctx, MESSAGE, Approval)
        return int(isinstance(result, Accepted) and result.data.approved)

    return server


# -- measurement ---------------------------------------------------------------


@dataclass
class Results:
    variants: list[Variant]
    headline: list[Comparison]
    """Like-for-like elicitkit/bare SDK, one per era; the first is the 2025-11-25 target."""
    extra: list[Comparison]
    """Informational comparisons (the transport floor, elicitkit's multi-question MRTR call)."""
    opcodes: dict[int, Opcodes] = field(default_factory=dict)
    """Python bytecode instructions per elicitation, by variant (its `id`; with the extras)."""


async def bench(n: int, repeats: int, extras: bool) -> Results:
    bare, kit, hooked = bare_server(), elicitkit_server(), elicitkit_server(hooks=4)
    rounds = n + 10  # the elicitkit multi-question call needs n + 1 rounds
    async with side_by_side(
        Client(bare, mode="legacy", elicitation_callback=human),
        Client(kit, mode="legacy", elicitation_callback=human),
        Client(hooked, mode="legacy", elicitation_callback=human),
        Client(bare, mode="auto", elicitation_callback=human),
        Client(kit, mode="auto", elicitation_callback=human, input_required_max_rounds=rounds),
    ) as (bare_legacy, kit_legacy, hooked_legacy, bare_modern, kit_modern):
        for client, era in [(bare_legacy, LEGACY), (kit_legacy, LEGACY), (bare_modern, MODERN), (kit_modern, MODERN)]:
            if client.session.protocol_version != era:
                raise RuntimeError(f"expected protocol {era}, negotiated {client.session.protocol_version}")

        def variant(era: str, impl: str, label: str, client: Client, sample: Any, *args: Any) -> Variant:
            return Variant(era, impl, label, lambda k: sample(client.call_tool, k, f"{era} {impl} {label}", *args))

        bare_loop = variant(LEGACY, "bare", "ctx.elicit x N, one call", bare_legacy, loop_call)
        kit_loop = variant(LEGACY, "elicitkit", "hitl.elicit x N, one call", kit_legacy, loop_call)
        bare_once = variant(MODERN, "bare", "Resolve/Elicit, 1 per call", bare_modern, single_calls)
        kit_once = variant(MODERN, "elicitkit", "hitl.elicit, 1 per call", kit_modern, single_calls)
        results = Results(
            [bare_loop, kit_loop, bare_once, kit_once],
            [Comparison(LEGACY, kit_loop, bare_loop), Comparison(MODERN, kit_once, bare_once)],
            [],
        )
        if extras:
            floor = variant(LEGACY, "bare", "elicit_form x N (floor)", bare_legacy, loop_call, "loop_floor")
            bounded = variant(LEGACY, "bare", "… with deadline + _meta", bare_legacy, loop_call, "loop_floor_bounded")
            kit_multi = variant(MODERN, "elicitkit", "hitl.elicit x N, one call", kit_modern, loop_call)
            kit_hooked = variant(LEGACY, "elicitkit", "… with 4 no-op hooks", hooked_legacy, loop_call)
            results.variants[2:2] = [kit_hooked, floor, bounded]
            results.variants.append(kit_multi)
            results.extra += [
                Comparison(f"{LEGACY}  elicitkit loop / transport floor (schema pre-rendered)", kit_loop, floor),
                Comparison(f"{LEGACY}  elicitkit loop / floor with a deadline told in _meta", kit_loop, bounded),
                Comparison(f"{LEGACY}  elicitkit with 4 no-op hooks / without hooks", kit_hooked, kit_loop),
                Comparison(f"{MODERN}  elicitkit N-question call / bare Resolve 1 per call", kit_multi, bare_once),
            ]

        await interleave(results.variants, n, repeats)
        if extras:
            # Counted once each, after the timing (tracing is slow): a figure the machine's noise cannot move.
            results.opcodes = await count_each(results.variants, min(n, OPCODE_UNITS))
        return results


# -- report --------------------------------------------------------------------


def report(results: Results, n: int, repeats: int, seconds: float) -> float:
    print(
        f"elicitkit round-trip benchmark (in memory): N={n}, {repeats} repeats, medians; "
        f"python {platform.python_version()}, mcp {version('mcp')}, elicitkit {version('elicitkit')}, "
        f"{os.cpu_count()} CPUs"
    )
    print()
    head = f"{'era':<11} {'impl':<10} {'variant':<27} {'median µs/elicit':>16} {'min':>9} {'max':>9}"
    print(head)
    print("-" * len(head))
    for v in results.variants:
        print(f"{v.era:<11} {v.impl:<10} {v.label:<27} {v.median:>16.1f} {min(v.samples):>9.1f} {max(v.samples):>9.1f}")
    print()
    print("elicitkit/bare (median of per-repeat ratios; range; ratio of medians):")
    for c in results.headline:
        paired = c.paired
        print(
            f"{c.name}  {c.ratio:.3f}  (range {min(paired):.3f}..{max(paired):.3f}; "
            f"ratio of medians {c.ratio_of_medians:.3f})"
        )
    if results.extra:
        print("informational:")
        for c in results.extra:
            print(f"{c.name}: {c.ratio:.3f}")
    if results.opcodes:
        report_opcodes(results.variants, results.headline + results.extra, results.opcodes)
    legacy = results.headline[0]
    verdict = "met" if legacy.ratio <= TARGET else "MISSED"
    print(f"target (DESIGN.md): {LEGACY} elicitkit/bare <= {TARGET:.2f}: {verdict}; total {seconds:.1f} s")
    return legacy.ratio


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=300, help="elicitations per sample (default 300)")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved samples per variant (default 7)")
    parser.add_argument(
        "--no-extras",
        action="store_true",
        help="skip the informational variants (transport floor; elicitkit N-question call on 2026-07-28)",
    )
    args = parser.parse_args(argv)
    if args.n < 1 or args.repeats < 1:
        parser.error("--n and --repeats must be at least 1")
    logging.getLogger("mcp").setLevel(logging.WARNING)
    # The audit trail's log records are off here (its spans and metrics are no-ops without an OpenTelemetry SDK):
    # what is measured is elicitkit's own work, not the cost of writing two lines per question to stderr.
    logging.getLogger("elicitkit.audit").setLevel(logging.WARNING)

    start = time.perf_counter()
    results = anyio.run(bench, args.n, args.repeats, not args.no_extras)
    ratio = report(results, args.n, args.repeats, time.perf_counter() - start)
    print(f"ratio={ratio:.3f}")


if __name__ == "__main__":
    main()
