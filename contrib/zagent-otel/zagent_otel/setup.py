"""``configure_from_env``: the OTLP/HTTP pipeline ``ZAGENT_OTEL=1`` installs for the CLI and scripts, once.

It sets global tracer and meter providers where none is set, from the standard ``OTEL_*`` variables; a protocol
other than ``http/protobuf`` is a ``ConfigError``. The exit flush takes at most ``EXIT_GRACE`` seconds.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Any

_lock = threading.Lock()
_done = False
EXIT_GRACE = 1.0
"""Seconds the exit flush may take before the exporters give up (no collector listening)."""
EXPORTER_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.trace_exporter",
                    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
                    "opentelemetry.sdk.metrics._internal.export", "opentelemetry.sdk.trace.export")


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
        owned: list[tuple[Any, Any]] = []  # (provider, exporter) this set-up made, shut down at exit
        if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            span_exporter = OTLPSpanExporter()
            provider = TracerProvider(resource=resource, shutdown_on_exit=False)
            provider.add_span_processor(BatchSpanProcessor(span_exporter))
            trace.set_tracer_provider(provider)
            owned.append((provider, span_exporter))
            installed = True
        if type(metrics.get_meter_provider()).__name__ == "_ProxyMeterProvider":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            metric_exporter = OTLPMetricExporter()
            meter_provider = MeterProvider(resource=resource, shutdown_on_exit=False, metric_readers=[
                PeriodicExportingMetricReader(metric_exporter)])
            metrics.set_meter_provider(meter_provider)
            owned.append((meter_provider, metric_exporter))
            installed = True
        if owned:
            _quiet_exporters()
            atexit.register(shutdown_within, owned, EXIT_GRACE)
        _done = True
        return installed


def shutdown_within(owned: list[tuple[Any, Any]], grace: float) -> None:
    """Shut the providers down (flushing what is left); after ``grace`` seconds the exporters stop retrying."""
    def give_up() -> None:
        for _provider, exporter in owned:
            try:
                exporter.shutdown()
            except Exception:  # already shut down: nothing to stop
                pass

    timer = threading.Timer(grace, give_up)
    timer.daemon = True
    timer.start()
    try:
        for provider, _exporter in owned:
            try:
                provider.shutdown()
            except Exception:  # an exporter stopped mid-flush: what was left is dropped
                pass
    finally:
        timer.cancel()


class _OneNotice(logging.Filter):
    """The exporters' retry and failure warnings as one line, once: the collector is not reachable."""

    said = False

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "shutdown" in text.lower() or "Transient error" in text or "Failed to export" in text:
            if not _OneNotice.said:
                _OneNotice.said = True
                endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318"
                logging.getLogger("zagent").warning(
                    "zagent-otel: no OpenTelemetry collector answered at %s; spans and metrics are not exported "
                    "(set OTEL_EXPORTER_OTLP_ENDPOINT, or unset ZAGENT_OTEL)", endpoint)
            return False
        return True


def _quiet_exporters() -> None:
    notice = _OneNotice()
    for name in EXPORTER_LOGGERS:
        logging.getLogger(name).addFilter(notice)
