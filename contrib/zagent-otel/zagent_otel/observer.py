"""``SpanObserver``: zagent's paired events as OpenTelemetry spans and GenAI metrics.

A ``*_start`` event starts an OTel span whose parent is the OTel span of the
event's ``parent_id`` (for a top span: whatever OTel span is current in the
emitting task, so a run inside a web request nests under it); the matching end
event sets the end attributes, the status (``ERROR`` with ``error.type`` for an
outcome ``error`` or ``cancelled``) and ends it at the event's time. Point events
(``speaker_selected``, ``paused``...) become span events of their parent. Chat
spans also feed ``gen_ai.client.token.usage`` and ``gen_ai.client.operation.duration``.
Spans are never made current (start and end come from separate hook calls).

``ContentCapture`` (only when content capture is on) adds the opt-in
``gen_ai.input.messages`` / ``gen_ai.output.messages`` and
``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``, masked.
"""

from __future__ import annotations

from typing import Any, Optional

import zagent
from zagent.spans import current_span_id

from . import semconv

SCOPE = "zagent"
TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


class SpanObserver:
    """The ``zagent_event`` observer of one kernel."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None):
        self._providers = (tracer_provider, meter_provider)
        self._tracer: Any = None
        self.spans: dict[str, Any] = {}  # zagent span id -> (otel span, kind, metric labels, parent id)

    def _setup(self) -> None:
        from opentelemetry import metrics, trace

        tracer_provider, meter_provider = self._providers
        version = getattr(zagent, "__version__", None)
        self._tracer = trace.get_tracer(SCOPE, version, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, version, meter_provider=meter_provider)
        self._tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                              description="Number of input and output tokens used",
                                              explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self._duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                                description="GenAI operation duration",
                                                explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

        self._kinds = {semconv.CLIENT: SpanKind.CLIENT, semconv.INTERNAL: SpanKind.INTERNAL}
        self._error = lambda text: Status(StatusCode.ERROR, text)
        self._in_context = set_span_in_context

    def zagent_event(self, event: Any) -> None:
        if self._tracer is None:
            self._setup()
        span_id, type = event.span_id, event.type
        if span_id is None:
            parent = self.spans.get(event.parent_id) if event.parent_id else None
            if parent is not None:
                parent[0].add_event(type, _event_attributes(event.data), timestamp=_ns(event.time))
            return
        if type.endswith("_start"):
            self._start(event, type[:-6])
        else:
            self._end(event)

    def _start(self, event: Any, kind: str) -> None:
        name, span_kind, attrs = semconv.start(kind, event.data, event.agent, event.run_id)
        parent = self.spans.get(event.parent_id) if event.parent_id else None
        context = self._in_context(parent[0]) if parent is not None else None
        span = self._tracer.start_span(name, context=context, kind=self._kinds[span_kind], attributes=attrs,
                                       start_time=_ns(event.time))
        metric = None
        if kind == "llm":
            metric = {k: attrs[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")}
            self._provider_up(event.parent_id, attrs["gen_ai.provider.name"])
        self.spans[event.span_id] = (span, kind, metric, event.parent_id)

    def _provider_up(self, parent_id: Optional[str], provider: str) -> None:
        """Agent and workflow spans get ``gen_ai.provider.name`` from the first model call inside them."""
        while parent_id is not None and parent_id in self.spans:
            span, kind, metric, parent_id_up = self.spans[parent_id]
            if kind in ("run", "workflow", "groupchat") and metric is None:
                span.set_attribute("gen_ai.provider.name", provider)
                self.spans[parent_id] = (span, kind, {}, parent_id_up)  # {}: provider set, no metric
            parent_id = parent_id_up

    def _end(self, event: Any) -> None:
        found = self.spans.pop(event.span_id, None)
        if found is None:
            return
        span, kind, metric, _parent = found
        data = event.data
        span.set_attributes(semconv.end(kind, data))
        failed = data.get("outcome") in ("error", "cancelled")
        if failed:
            error = semconv.error_type(data)
            span.set_attribute("error.type", error)
            span.set_status(self._error(str(data.get("error") or data.get("outcome"))[:500]))
        if kind == "llm" and metric:
            labels = dict(metric, **({"error.type": error} if failed else {}))
            self._duration.record(float(data.get("duration") or 0.0), labels)
            if not failed:
                self._tokens.record(int(data.get("input_tokens") or 0), dict(metric, **{"gen_ai.token.type": "input"}))
                self._tokens.record(int(data.get("output_tokens") or 0), dict(metric, **{"gen_ai.token.type": "output"}))
        span.end(end_time=_ns(event.time))

    def zagent_kernel_close(self) -> None:
        """Spans still open (a run the process gave up on) end now, marked unfinished."""
        for span, *_rest in list(self.spans.values()):
            span.set_attribute("error.type", "unfinished")
            span.set_status(self._error("unfinished when the kernel closed"))
            span.end()
        self.spans.clear()

    def __repr__(self) -> str:
        return f"<zagent-otel observer: {len(self.spans)} open spans>"


class ContentCapture:
    """Opt-in: prompts, replies, tool arguments and results on the spans (masked). Runs last of the rails."""

    def __init__(self, observer: SpanObserver):
        from .content import env_secrets

        self.observer = observer
        self.secrets = env_secrets()

    def _span(self) -> Any:
        found = self.observer.spans.get(current_span_id() or "")
        return found[0] if found is not None else None

    @zagent.hookimpl(trylast=True)
    def zagent_after_llm_call(self, request: Any, response: Any) -> None:
        span = self._span()
        if span is not None:
            from .content import messages_json

            span.set_attribute("gen_ai.input.messages", messages_json(request.messages, self.secrets))
            span.set_attribute("gen_ai.output.messages", messages_json([response.message], self.secrets))

    @zagent.hookimpl(trylast=True)
    def zagent_after_tool_call(self, call: Any, result: Any) -> None:
        span = self._span()
        if span is not None:
            from .content import masked, to_json

            span.set_attribute("gen_ai.tool.call.arguments", to_json(call.arguments, self.secrets))
            span.set_attribute("gen_ai.tool.call.result", masked(result.content or "", self.secrets))


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _event_attributes(data: dict[str, Any]) -> dict[str, Any]:
    """Scalar event data as span-event attributes (lists of scalars kept; nothing else, nothing secret)."""
    from zagent.secrets import looks_secret

    out: dict[str, Any] = {}
    for key, value in data.items():
        if looks_secret(key):
            continue
        if isinstance(value, (str, bool, int, float)):
            out[f"zagent.{key}"] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[f"zagent.{key}"] = list(value)
    return out
