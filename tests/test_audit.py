"""The audit trail: a span per question under the SDK's tool-call span, log records, metrics; never a secret."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from elicitkit import _audit
from tests.hook_scenes import ROUTE_IDS, ROUTES, ask, scene
from tests.telemetry import Telemetry

pytestmark = pytest.mark.anyio

SECRET = "sk-live-7Qx9-never-logged"


@pytest.fixture
def telemetry(telemetry_installed: Telemetry, caplog: pytest.LogCaptureFixture) -> Telemetry:
    telemetry_installed.spans.clear()
    caplog.set_level(logging.DEBUG)
    return telemetry_installed


def question_spans(telemetry: Telemetry) -> list[ReadableSpan]:
    return [s for s in telemetry.spans.get_finished_spans() if s.name == "elicit deploy"]


def audit_records(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [r.audit for r in caplog.records if r.name == "elicitkit.audit"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_each_question_is_a_span_under_the_sdks_tool_call_span(
    telemetry: Telemetry, route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode)
    assert await ask(s) == "accepted True"
    [span] = question_spans(telemetry)
    calls = {c.context.span_id: c for c in telemetry.spans.get_finished_spans() if c.name == "tools/call deploy"}
    assert span.parent is not None
    assert span.parent.span_id in calls  # nested under the call that started the run
    attributes = dict(span.attributes or {})
    assert attributes["elicitkit.route"] == reported
    assert attributes["elicitkit.mode"] == ("url" if route == "page" else "form")
    assert attributes["elicitkit.outcome"] == "accept"
    assert attributes["elicitkit.node"] == s.hitl.node_id
    assert attributes["gen_ai.tool.name"] == "deploy"
    events = [e.name for e in span.events]
    assert events[-2:] == ["elicitkit.question.sent", "elicitkit.answer"]
    assert span.status.status_code is not StatusCode.ERROR


@pytest.mark.parametrize(("route", "mode", "reported"), ROUTES, ids=ROUTE_IDS)
async def test_the_audit_log_says_who_was_asked_what_and_how_it_ended(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture, route: str, mode: str, reported: str
) -> None:
    s = scene(route, mode)
    assert await ask(s) == "accepted True"
    asked, answered = audit_records(caplog)
    assert asked["event"] == "question"
    assert asked["message"] == "Deploy v2?"
    assert asked["route"] == reported
    assert asked["tool"] == "deploy"
    assert answered["event"] == "answer"
    assert answered["question"] == asked["question"]
    assert answered["outcome"] == "accept"
    assert answered["content"] == {"approved": True}
    assert answered["seconds"] >= 0


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_secret_typed_on_elicitkits_page_appears_in_no_span_and_no_log(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    s = scene("page", mode, {"approved": True, "key": SECRET})
    assert await ask(s) == "accepted True"
    [_, answered] = audit_records(caplog)
    assert answered["content"] == {"approved": True, "key": "**********"}
    exported = [json.loads(span.to_json()) for span in telemetry.spans.get_finished_spans()]
    assert exported
    assert SECRET not in json.dumps(exported)
    for record in caplog.records:
        assert SECRET not in record.getMessage()
        assert SECRET not in json.dumps(getattr(record, "audit", {}), default=str)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_timeout_is_an_error_outcome_in_the_trail(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    s = scene("native" if mode == "legacy" else "mrtr", mode, timeout=0.2)
    ended = anyio.Event()
    s.hitl.after_answer(lambda question, outcome: ended.set())

    async def never_answers(context: Any, params: Any) -> Any:
        await anyio.sleep_forever()

    async with (
        Client(s.server, mode=mode, elicitation_callback=never_answers) as client,
        anyio.create_task_group() as tg,
    ):
        if mode == "auto":
            await client.session.call_tool("deploy", {}, allow_input_required=True)  # no retry ever follows
        else:
            tg.start_soon(client.call_tool, "deploy", {})  # the form is never filled in
        with anyio.fail_after(5):
            await ended.wait()
        tg.cancel_scope.cancel()
    [span] = question_spans(telemetry)
    assert dict(span.attributes or {})["elicitkit.outcome"] == "timeout"
    assert span.status.status_code is StatusCode.ERROR
    assert audit_records(caplog)[-1]["outcome"] == "timeout"


async def test_metrics_count_open_questions_answers_by_route_and_time_to_answer(telemetry: Telemetry) -> None:
    def total(name: str, **labels: str) -> float:
        return sum(
            getattr(p, "value", None) if hasattr(p, "value") else p.count
            for p in telemetry.points(name)
            if all(p.attributes.get(k) == v for k, v in labels.items())
        )

    before = total("elicitkit.answers", route="mrtr", outcome="accept")
    timed = total("elicitkit.answer.duration", route="mrtr", outcome="accept")
    assert await ask(scene("mrtr", "auto")) == "accepted True"
    assert total("elicitkit.answers", route="mrtr", outcome="accept") == before + 1
    assert total("elicitkit.answer.duration", route="mrtr", outcome="accept") == timed + 1
    assert total("elicitkit.questions.open") == 0


def unset_steps(*args: str) -> dict[str, dict[str, Any]]:
    """Run tests/audit_unset.py in a fresh interpreter (this one has the SDK installed for good)."""
    root = Path(__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    env.pop("OTEL_PYTHON_TRACER_PROVIDER", None)
    env.pop("OTEL_PYTHON_METER_PROVIDER", None)
    done = subprocess.run(
        [sys.executable, "-W", "error", str(root / "tests" / "audit_unset.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    return {step.pop("step"): step for step in steps}


def test_with_nothing_to_record_a_question_has_no_trail_until_an_sdk_or_the_audit_log_is_on() -> None:
    steps = unset_steps()
    nothing = {"trails": 0, "exchanges": 0, "tracer calls": 0, "meter calls": 0, "spans": 0, "points": 0}
    assert steps["nothing"] == {"recording": False, **nothing, "records": 0}
    # The audit logger enabled for INFO, then not: each takes effect with the next question.
    assert steps["audit log"]["recording"] is True
    assert steps["audit log"]["records"] == 4  # asked and answered, on each era
    assert steps["audit log"]["tracer calls"] == steps["audit log"]["meter calls"] == 0
    assert steps["audit log off again"] == {"recording": False, **nothing, "records": 0}
    # An SDK installed after elicitkit was imported and had asked: the next questions are spans and metrics.
    assert steps["sdk"]["recording"] is True
    assert steps["sdk"]["spans"] == 2
    assert steps["sdk"]["points"] >= 1


def test_the_apis_own_no_op_providers_record_nothing_and_cost_no_trail() -> None:
    steps = unset_steps("--noop")
    assert steps["no-op providers"] == {
        "recording": False,
        "trails": 0,
        "exchanges": 0,
        "tracer calls": 0,
        "meter calls": 0,
        "spans": 0,
        "points": 0,
        "records": 0,
    }


def test_the_opentelemetry_api_keeps_its_providers_where_elicitkit_looks_for_them() -> None:
    # Else every question pays for the API's public getters, which look an environment variable up each time.
    assert _audit._Sinks._FAST
