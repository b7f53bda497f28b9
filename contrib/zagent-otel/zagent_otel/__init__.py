"""zagent-otel: OpenTelemetry spans and metrics for zagent runs (GenAI semantic conventions).

Installed, it is a zagent plugin (entry point ``otel``): every kernel turns its
paired events (``zagent._runs.spans``) into OpenTelemetry spans on the *global* tracer
provider, so an application's existing OpenTelemetry set-up just works.
``ZAGENT_OTEL=1`` (with the standard ``OTEL_EXPORTER_OTLP_*`` variables) sets up
an OTLP/HTTP exporter for the ``zagent`` command line and scripts. See README.md.
"""

__version__ = "0.1.0"
