"""The OpenTelemetry SDK with in-memory exporters, for the tests that read spans and metrics.

A process has one global tracer and meter provider, set once: the `telemetry_installed` session fixture
(tests/conftest.py) installs them the first time any test asks, whichever file it is in.
"""

from __future__ import annotations

import random
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator


class Telemetry:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()

    def points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found


class PrivateIdGenerator(RandomIdGenerator):
    """Span and trace ids from a generator of its own: the SDK's default draws from the `random` module's global
    state, which a server thread creating spans would then change under hypothesis's feet while it generates an
    example in the main thread (tests/properties/ reads that as a strategy using `random`)."""

    def __init__(self) -> None:
        self._random = random.Random()

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


def install() -> Telemetry:
    """Make the SDK's providers global, exporting to memory; call once per process."""
    telemetry = Telemetry()
    tracer_provider = TracerProvider(id_generator=PrivateIdGenerator())
    tracer_provider.add_span_processor(SimpleSpanProcessor(telemetry.spans))
    trace.set_tracer_provider(tracer_provider)
    # No exemplars: their reservoirs sample with the `random` module's global state too (the same trouble as the
    # span ids above, from a server thread recording a measurement inside a sampled span).
    provider = MeterProvider(metric_readers=[telemetry.metrics], exemplar_filter=AlwaysOffExemplarFilter())
    metrics.set_meter_provider(provider)
    return telemetry
