"""The entry-point module: adds the tracing observer to each kernel, on by default when installed.

Off with ``config={"otel": False}``, ``{"otel": {"enabled": False}}`` or ``ZAGENT_OTEL=0``; settings in
``config["otel"]``: ``capture_content``, ``tracer_provider``/``meter_provider``, ``steps`` (README.md).
``ZAGENT_OTEL=1`` also installs the OTLP/HTTP pipeline (``zagent_otel.setup``). OpenTelemetry is imported at the
first event.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

OBSERVER = "otel.observer"
CONTENT = "otel.content"
_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")


def settings(kernel: "Kernel") -> dict[str, Any]:
    """The plugin's settings for ``kernel`` (``config["otel"]`` and the environment)."""
    value = kernel.config.get("otel", {})
    found = dict(value) if isinstance(value, dict) else {"enabled": bool(value)}
    env = os.environ.get("ZAGENT_OTEL", "").strip().lower()
    found.setdefault("enabled", env not in _OFF)
    capture = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower()
    found.setdefault("capture_content", capture in _ON)
    found["setup"] = env in _ON
    return found


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``otel``."""
    return ("otel",)


def zagent_kernel_start(kernel: "Kernel") -> None:
    found = settings(kernel)
    if not found["enabled"] or kernel.has_plugin(OBSERVER):
        return
    if found["setup"]:
        from .setup import configure_from_env

        configure_from_env()
    from .observer import ContentCapture, SpanObserver

    def describe_tool(name: Any) -> Any:
        try:
            return kernel.tool(name).description
        except Exception:  # not a registered tool (a blocked call names anything): no description
            return None

    observer = SpanObserver(tracer_provider=found.get("tracer_provider"), meter_provider=found.get("meter_provider"),
                            steps=bool(found.get("steps", True)), describe_tool=describe_tool)
    kernel.add_plugin(observer, name=OBSERVER)
    if found["capture_content"]:
        kernel.add_plugin(ContentCapture(observer), name=CONTENT)
