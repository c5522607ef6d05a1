"""The audit trail on a fastmcp server: a span per question under fastmcp's own span for the tool call, and the
audit log, on every route and both eras."""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("fastmcp")

from opentelemetry.sdk.trace import ReadableSpan

from tests.hook_scenes import ROUTE_IDS, ROUTES, ask, scene
from tests.telemetry import Telemetry

pytestmark = pytest.mark.anyio


@pytest.fixture
def telemetry(telemetry_installed: Telemetry, caplog: pytest.LogCaptureFixture) -> Telemetry:
    telemetry_installed.spans.clear()
    caplog.set_level(logging.DEBUG)
    return telemetry_installed


def question_spans(telemetry: Telemetry) -> list[ReadableSpan]:
    return [s for s in telemetry.spans.get_finished_spans() if s.name == "elicit deploy"]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_each_question_is_a_span_and_an_audit_record_on_a_fastmcp_server(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture, route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode, framework="fastmcp")
    assert await ask(s) == "accepted True"
    [span] = question_spans(telemetry)
    calls = {c.context.span_id: c.name for c in telemetry.spans.get_finished_spans()}
    assert span.parent is not None
    assert calls.get(span.parent.span_id, "").startswith("tools/call")  # under fastmcp's span for the call
    attributes = dict(span.attributes or {})
    assert attributes["elicitkit.route"] == reported
    assert attributes["elicitkit.outcome"] == "accept"
    assert attributes["gen_ai.tool.name"] == "deploy"
    records: list[dict[str, Any]] = [r.audit for r in caplog.records if r.name == "elicitkit.audit"]  # type: ignore[attr-defined]
    asked, answered = records
    assert (asked["event"], asked["message"], asked["route"], asked["tool"]) == (
        "question",
        "Deploy v2?",
        reported,
        "deploy",
    )
    assert (answered["event"], answered["outcome"], answered["content"]) == ("answer", "accept", {"approved": True})
