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
redacted (as `Accepted.content` has them), and never in spans, which often
leave the organisation; links, which are bearer tokens, are never recorded.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from elicitkit._core.kinds import Stage
from elicitkit._hooks import Outcome, QuestionInfo
from elicitkit._results import Accepted

__all__ = ["Audit", "Audited"]

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
    return {f"elicitkit.{k}": v for k, v in _facts(question).items() if v is not None}


class Audited:
    """One question's trail, from its span's start to its outcome."""

    __slots__ = ("_sent", "_span", "_started", "question")

    def __init__(self, question: QuestionInfo) -> None:
        self.question = question
        self._started = time.monotonic()
        self._sent = False
        attributes = _attributes(question)
        if question.tool is not None:
            attributes["gen_ai.tool.name"] = question.tool
        name = f"elicit {question.tool}" if question.tool else "elicit"
        self._span: Span = _tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self._started

    def reached(self, question: QuestionInfo, stage: Stage) -> None:
        self.question = question
        self._span.add_event(f"elicitkit.question.{stage}", _attributes(question))
        if stage != "sent" or self._sent:
            return
        self._sent = True
        _open.add(1, {"route": str(question.route), "mode": question.mode})
        if audit_log.isEnabledFor(logging.INFO):
            facts = {"event": "question", **_facts(question), "message": question.message}
            audit_log.info("question %s sent via %s", question.id, question.route, extra={"audit": facts})

    def finish(self, question: QuestionInfo, outcome: Outcome) -> None:
        self.question = question
        name = outcome.name
        labels = {"route": str(question.route), "mode": question.mode, "outcome": name}
        if self._sent:
            _open.add(-1, {"route": str(question.route), "mode": question.mode})
        _answers.add(1, labels)
        _duration.record(outcome.seconds, labels)
        span = self._span
        span.set_attributes({**_attributes(question), "elicitkit.outcome": name})
        span.add_event("elicitkit.answer", {"elicitkit.outcome": name})
        if outcome.error is not None:
            span.set_status(Status(StatusCode.ERROR, type(outcome.error).__name__))
        span.end()
        if audit_log.isEnabledFor(logging.INFO):
            facts = {"event": "answer", **_facts(question), "outcome": name, "seconds": round(outcome.seconds, 6)}
            result = outcome.result
            if isinstance(result, Accepted):
                facts["content"] = json.loads(json.dumps(result.content, default=str))
            elif result is not None and getattr(result, "reason", None):
                facts["reason"] = result.reason  # type: ignore[union-attr]
            elif outcome.error is not None:
                facts["error"] = type(outcome.error).__name__
            audit_log.info("question %s: %s", question.id, name, extra={"audit": facts})


class Audit:
    """Starts a trail per question; the place to add sinks later."""

    def start(self, question: QuestionInfo) -> Audited:
        return Audited(question)
