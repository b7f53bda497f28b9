"""Fixtures: SDK providers with in-memory exporters, kernels with the plugin, span-tree helpers."""

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from zagent import Kernel
from zagent.plugins.offline import scenarios

PLUGINS = scenarios.PLUGINS + ["zagent_otel.plugin"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("ZAGENT_OTEL", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "ZAGENT_LOG"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def exporter():
    return InMemorySpanExporter()


@pytest.fixture
def tracer_provider(exporter):
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def metric_reader():
    return InMemoryMetricReader()


@pytest.fixture
def make_kernel(tracer_provider, metric_reader):
    """``make_kernel(**otel_settings)``: a kernel tracing to the in-memory providers; closed after the test."""
    made = []
    meter_provider = MeterProvider(metric_readers=[metric_reader])

    def make(**settings):
        otel = {"tracer_provider": tracer_provider, "meter_provider": meter_provider, **settings}
        k = Kernel(PLUGINS, entry_points=False, strict=True, config={"otel": otel})
        made.append(k)
        return k

    yield make
    for k in made:
        k.close()
    meter_provider.shutdown()


def tree(spans):
    """The spans as ``[(depth, name), ...]`` in depth-first order, children by start time."""
    by_parent = {}
    ids = {s.context.span_id for s in spans}
    for s in sorted(spans, key=lambda s: s.start_time):
        parent = s.parent.span_id if s.parent is not None and s.parent.span_id in ids else None
        by_parent.setdefault(parent, []).append(s)
    out = []

    def walk(span, depth):
        out.append((depth, span.name))
        for child in by_parent.get(span.context.span_id, []):
            walk(child, depth + 1)

    for root in by_parent.get(None, []):
        walk(root, 0)
    return out


def shape(spans):
    """``tree`` with siblings of the same parent sorted by name (parallel work has no fixed order)."""
    by_parent, ids = {}, {s.context.span_id for s in spans}
    for s in spans:
        parent = s.parent.span_id if s.parent is not None and s.parent.span_id in ids else None
        by_parent.setdefault(parent, []).append(s)

    def walk(span):
        return (span.name, sorted(walk(c) for c in by_parent.get(span.context.span_id, [])))

    return sorted(walk(r) for r in by_parent.get(None, []))
