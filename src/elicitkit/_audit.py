"""The audit trail: every question and its outcome, as OpenTelemetry spans, metrics and log records.

Each question is one span, `elicit {tool}`, a child of whatever span is
current where the tool asks (the SDK's `tools/call` span), with an event at
each stage it reaches on its route and the outcome when it ends. Two
structured log records go to the `elicitkit.audit` logger at INFO: one when
the question is sent, one with its outcome, each carrying a dict under the
record's `audit` attribute. Metrics: questions open, answers by route and
outcome, and time to answer. Without an OpenTelemetry SDK configured, spans
and metrics are no-ops; without a handler on `elicitkit.audit`, so are logs.
When none of them records (no SDK provider, or the API's no-op ones, and the
`elicitkit.audit` logger not enabled for INFO), `recording()` says so and a
question has no trail at all: nothing is built, called or allocated for it.

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
from opentelemetry.metrics import _internal as metrics_api
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, Status, StatusCode

from elicitkit._core.kinds import Stage
from elicitkit._engine.question import Question
from elicitkit._hookdata import Outcome, QuestionInfo
from elicitkit._results import Accepted, Declined

__all__ = ["Audited", "recording"]

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


class _Sinks:
    """Whether spans and metrics record, worked out again only when the API's global providers change.

    The public getters look an environment variable up on every call until a provider is set (a raised and
    caught KeyError each, microseconds: most of what a server without an SDK would pay per question), so the
    providers are read from the API's own slots, None until one is set; the getters are called when those
    change (they also load a provider the environment names). Should a later API move the slots, the getters
    are called every time instead: slower, still right.
    """

    __slots__ = ("metering", "seen", "tracing")

    _TRACE = vars(trace)
    _METRICS = vars(metrics_api)
    _FAST = "_TRACER_PROVIDER" in _TRACE and "_METER_PROVIDER" in _METRICS

    def __init__(self) -> None:
        self.seen: tuple[object, object] | None = None
        self.tracing = False
        self.metering = False

    def check(self) -> _Sinks:
        if self._FAST:
            seen = self.seen
            if (
                seen is not None
                and self._TRACE["_TRACER_PROVIDER"] is seen[0]
                and self._METRICS["_METER_PROVIDER"] is seen[1]
            ):
                return self
        tracer_provider, meter_provider = trace.get_tracer_provider(), metrics.get_meter_provider()
        self.tracing = not isinstance(tracer_provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)
        # Until a meter provider is set, the API hands out a placeholder of its own (a class it does not export)
        # whose instruments record nothing.
        self.metering = not isinstance(meter_provider, metrics.NoOpMeterProvider) and (
            type(meter_provider).__name__ != "_ProxyMeterProvider"
        )
        if self._FAST:
            self.seen = (self._TRACE["_TRACER_PROVIDER"], self._METRICS["_METER_PROVIDER"])
        return self


_sinks = _Sinks()


def recording() -> bool:
    """Whether anything records a question's trail now: spans, metrics, or the `elicitkit.audit` logger at INFO.

    Cheap enough to ask per question (a few dictionary reads); a provider set later, or a logging level changed,
    counts from the next question on.
    """
    sinks = _sinks.check()
    return sinks.tracing or sinks.metering or audit_log.isEnabledFor(logging.INFO)


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
        sinks = _sinks.check()
        self._metered = sinks.metering
        # Without an OpenTelemetry SDK there is nothing to record: skip even the no-op span.
        self._span: Span = _tracer.start_span("elicit", kind=SpanKind.INTERNAL) if sinks.tracing else INVALID_SPAN
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
