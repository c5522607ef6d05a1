"""The audit trail: every question and its outcome, as OpenTelemetry spans, metrics and log records.

Each question is one span, `elicit {tool}`, a child of whatever span is
current where the tool asks (the SDK's `tools/call` span), with an event at
each stage it reaches on its route and the outcome when it ends. Two
structured log records go to the `elicitkit.audit` logger at INFO: one when
the question is sent, one with its outcome, each carrying a dict under the
record's `audit` attribute. Metrics: questions open, answers by route and
outcome, and time to answer. Without an OpenTelemetry SDK configured, spans
and metrics are no-ops; without a handler on `elicitkit.audit`, so are logs.

Nothing secret is recorded: answers are recorded with `SecretStr` fields
redacted (as `Accepted.content` has them), a third-party flow's callback
parameters (`url_flow`: authorization codes, tokens) only by name, and answers
never in spans, which often leave the organisation; links, which are bearer
tokens, are never recorded. Replayed answers are not counted again in metrics.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, Status, StatusCode

from elicitkit._core.kinds import Stage
from elicitkit._engine.question import Question
from elicitkit._hookdata import Outcome, QuestionInfo
from elicitkit._results import Accepted, Declined

__all__ = ["Audited"]

audit_log = logging.getLogger("elicitkit.audit")

_tracer = trace.get_tracer("elicitkit")
_meter = metrics.get_meter("elicitkit")
_open = _meter.create_up_down_counter(
    "elicitkit.questions.open", unit="{question}", description="Questions put to a person and not yet answered"
)
_answers = _meter.create_counter(
    "elicitkit.answers", unit="{answer}", description="Outcomes of questions, by route, mode and outcome"
)
_duration = _meter.create_histogram(
    "elicitkit.answer.duration", unit="s", description="Time from asking a question to its outcome"
)


def _metering() -> bool:
    """Whether a meter provider is configured: until one is, the API hands out a placeholder (its own class,
    which the API does not export) whose instruments record nothing, and each question skips them."""
    return type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider"


def _facts(question: QuestionInfo) -> dict[str, Any]:
    return {
        "question": question.id,
        "run": question.run_id,
        "tool": question.tool,
        "principal": question.principal,
        "route": question.route,
        "mode": question.mode,
        "node": question.node,
        "replayed": question.replayed,
    }


def _attributes(question: QuestionInfo) -> dict[str, Any]:
    """Span attributes: OpenTelemetry takes no None values."""
    attributes = {f"elicitkit.{k}": v for k, v in _facts(question).items() if v is not None}
    if question.tool is not None:
        attributes["gen_ai.tool.name"] = question.tool
    return attributes


class Audited:
    """One question's trail, from its span's start to its outcome.

    `describe()` tells the question as it stands (after hooks, with its
    route); it is only called when a span records or the audit log is on, so a
    server that has neither pays for neither.
    """

    __slots__ = ("_describe", "_metered", "_question", "_sent", "_span", "_started")

    def __init__(self, question: Question, describe: Callable[[], QuestionInfo]) -> None:
        self._question = question
        self._describe = describe
        self._started = time.monotonic()
        self._sent = False
        self._metered = _metering()
        # Without an OpenTelemetry SDK there is nothing to record: skip even the no-op span.
        tracing = not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        self._span: Span = _tracer.start_span("elicit", kind=SpanKind.INTERNAL) if tracing else INVALID_SPAN
        if self._span.is_recording():
            info = describe()
            if info.tool is not None:
                self._span.update_name(f"elicit {info.tool}")
            self._span.set_attributes(_attributes(info))

    @property
    def seconds(self) -> float:
        return time.monotonic() - self._started

    def reached(self, stage: Stage) -> None:
        route = str(self._question.route)
        if self._span is not INVALID_SPAN and self._span.is_recording():
            self._span.add_event(f"elicitkit.question.{stage}", {"elicitkit.route": route})
        if stage != "sent" or self._sent:
            return
        self._sent = True
        if self._metered:
            _open.add(1, {"route": route, "mode": self._question.mode})
        if audit_log.isEnabledFor(logging.INFO):
            info = self._describe()
            facts = {"event": "question", **_facts(info), "message": info.message}
            audit_log.info("question %s sent via %s", info.id, route, extra={"audit": facts})

    def finish(self, outcome: Outcome) -> None:
        name = outcome.name
        if self._metered:
            route, mode = str(self._question.route), self._question.mode
            if self._sent:
                _open.add(-1, {"route": route, "mode": mode})
            if not self._question.replayed:  # a replayed answer is not a new one
                labels = {"route": route, "mode": mode, "outcome": name}
                _answers.add(1, labels)
                if self._sent:  # time to answer: only for questions a person was asked
                    _duration.record(outcome.seconds, labels)
        span = self._span
        if span.is_recording():
            span.set_attributes({**_attributes(self._describe()), "elicitkit.outcome": name})
            span.add_event("elicitkit.answer", {"elicitkit.outcome": name})
            if outcome.error is not None:
                span.set_status(Status(StatusCode.ERROR, type(outcome.error).__name__))
        if span is not INVALID_SPAN:
            span.end()
        if audit_log.isEnabledFor(logging.INFO):
            info = self._describe()
            facts = {"event": "answer", **_facts(info), "outcome": name, "seconds": round(outcome.seconds, 6)}
            result = outcome.result
            if isinstance(result, Accepted) and self._question.asked.content_private:
                facts["fields"] = sorted(result.content)  # a third party's callback: codes and tokens stay out
            elif isinstance(result, Accepted):
                facts["content"] = json.loads(json.dumps(result.content, default=str))
            elif isinstance(result, Declined) and result.reason:
                facts["reason"] = result.reason
            elif outcome.error is not None:
                facts["error"] = type(outcome.error).__name__
            if result is not None and result.meta:
                facts["meta"] = json.loads(json.dumps(result.meta, default=str))  # the `_meta` of the client's reply
            audit_log.info("question %s: %s", info.id, name, extra={"audit": facts})
