"""``configure_from_env``: the OTLP/HTTP pipeline ``ZAGENT_OTEL=1`` installs for the CLI and scripts.

Sets global tracer and meter providers (only where none is set yet: an
application's own set-up always wins) with an OTLP/HTTP span exporter behind a
``BatchSpanProcessor`` and a periodic metric reader. The exporters read the
standard variables themselves: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
``http://localhost:4318``), ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_EXPORTER_OTLP_TIMEOUT``...; the resource
reads ``OTEL_SERVICE_NAME`` (default ``zagent``) and ``OTEL_RESOURCE_ATTRIBUTES``.
Only the ``http/protobuf`` protocol is built in; another
``OTEL_EXPORTER_OTLP_PROTOCOL`` is refused with what to do. Both providers
flush at interpreter exit.
"""

from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_done = False


def configure_from_env() -> bool:
    """Install the pipeline once per process; ``False`` if it was already there (or another one is)."""
    global _done
    with _lock:
        if _done:
            return False
        protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        if protocol and protocol != "http/protobuf":
            from zagent import ConfigError

            raise ConfigError(f"ZAGENT_OTEL=1 exports with OTLP http/protobuf, not {protocol!r}; unset "
                              "OTEL_EXPORTER_OTLP_PROTOCOL, or set up your own tracer provider (then leave ZAGENT_OTEL unset)")
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.resources import OTELResourceDetector, Resource

        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "zagent"}).merge(
            OTELResourceDetector().detect())
        installed = False
        if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            provider = TracerProvider(resource=resource)
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            trace.set_tracer_provider(provider)
            installed = True
        if type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[
                PeriodicExportingMetricReader(OTLPMetricExporter())]))
            installed = True
        _done = True
        return installed
