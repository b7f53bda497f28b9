"""zagent-otel: OpenTelemetry spans and metrics of zagent runs, following the GenAI semantic conventions.

Installed, it is the plugin ``otel`` (``zagent_otel.plugin``): every kernel's paired events become spans on the
global tracer provider. ``ZAGENT_OTEL=1`` also sets up an OTLP/HTTP exporter. See README.md and
docs/observability.md.
"""

__version__ = "0.1.0"
