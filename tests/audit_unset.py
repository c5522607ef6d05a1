"""Questions in a process where nothing records the audit trail at first: run by tests/test_audit.py on its own.

The OpenTelemetry API's global providers can be set once per process, and the test session sets them, so this
runs in a fresh interpreter. Each step asks a question on both eras and prints what its trail did as one JSON
line: how many trails and exchanges (what hooks and the trail are told) were made, how often the tracer and
the meter's instruments were called, and the spans, metric points and audit records that came out. With
`--noop` the API's no-op providers are set instead of the SDK.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from opentelemetry import metrics, trace

from elicitkit import Accepted, Elicitation, _asking, _audit
from elicitkit.testing import accept
from tests.telemetry import install

made = {"trails": 0, "exchanges": 0, "tracer calls": 0, "meter calls": 0}


def counting(key: str, fn: Any) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        made[key] += 1
        return fn(*args, **kwargs)

    return counted


_audit.Audited.__init__ = counting("trails", _audit.Audited.__init__)  # type: ignore[method-assign]
_asking._Exchange.__init__ = counting("exchanges", _asking._Exchange.__init__)  # type: ignore[method-assign]
_audit._tracer.start_span = counting("tracer calls", _audit._tracer.start_span)  # type: ignore[method-assign]
for instrument, method in ((_audit._open, "add"), (_audit._answers, "add"), (_audit._duration, "record")):
    setattr(instrument, method, counting("meter calls", getattr(instrument, method)))


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def ask_both_eras() -> None:
    server = MCPServer("audit")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        return "yes" if isinstance(answer, Accepted) and answer.data else "no"

    async def human(context: Any, params: Any) -> Any:
        return accept({"value": True})

    for mode in ("legacy", "auto"):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            assert not (await client.call_tool("deploy", {})).is_error


def step(name: str, audit_log: Records, telemetry: Any) -> None:
    made.update(dict.fromkeys(made, 0))
    audit_log.records.clear()
    anyio.run(ask_both_eras)
    spans = len([s for s in telemetry.spans.get_finished_spans() if s.name.startswith("elicit")]) if telemetry else 0
    points = 0
    if telemetry is not None:
        points = len(telemetry.points("elicitkit.answers"))
    print(
        json.dumps(
            {
                "step": name,
                "recording": _audit.recording(),
                **made,
                "spans": spans,
                "points": points,
                "records": len(audit_log.records),
            }
        )
    )


def main(noop: bool) -> None:
    audit = logging.getLogger("elicitkit.audit")
    handler = Records()
    audit.addHandler(handler)
    audit.setLevel(logging.WARNING)
    audit.propagate = False  # the SDK's server logs to stderr at INFO
    step("nothing", handler, None)
    audit.setLevel(logging.INFO)
    step("audit log", handler, None)
    audit.setLevel(logging.WARNING)
    step("audit log off again", handler, None)
    if noop:
        # The API's own no-op providers, set on purpose: nothing records either.
        trace.set_tracer_provider(trace.NoOpTracerProvider())
        metrics.set_meter_provider(metrics.NoOpMeterProvider())
        step("no-op providers", handler, None)
        return
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider"
    telemetry = install()  # after elicitkit was imported and asked: the next question sees it
    step("sdk", handler, telemetry)


if __name__ == "__main__":
    main(noop="--noop" in sys.argv)
