"""``SpanObserver``: zagent's paired events as OpenTelemetry spans and GenAI client metrics.

A span's parent is its event's ``parent_id`` span (a top span's: the current OTel span); outcome ``error`` or
``cancelled`` sets status ``ERROR`` and ``error.type``; point events become span events. Spans are never made
current. ``ContentCapture`` adds the opt-in content.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Optional

import zagent
from zagent import current_span_id, mask_userinfo

from . import semconv

if TYPE_CHECKING:
    from zagent import RunContext
    from opentelemetry.trace import Status

log = logging.getLogger("zagent")

SCOPE = "zagent"
TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


class Open:
    """An OTel span between its zagent start and end events.

    ``own`` is false for a zagent span that got no OTel span of its own (a step span with
    ``steps`` off, anything inside an unsampled span): ``span`` and ``context`` are then its
    parent's, so its children attach there, and its end only records the chat metrics.
    """

    __slots__ = ("span", "kind", "parent_id", "context", "labels", "provider", "own")

    def __init__(self, span: Any, kind: str, parent_id: Optional[str], own: bool = True, context: Any = None):
        self.span, self.kind, self.parent_id, self.own = span, kind, parent_id, own
        self.context: Any = context  # the OTel context with this span, made when a child needs it
        self.labels: Optional[tuple[dict[str, Any], ...]] = None  # metric attributes (all, input, output): chat spans
        self.provider: Optional[str] = None  # gen_ai.provider.name of the first call inside (agent and workflow spans)


class SpanObserver:
    """The ``zagent_event`` observer of one kernel.

    Cost (bench/otel_overhead.py): beyond what the SDK itself takes per span, one dict
    lookup per event and attribute mappings cached per model and per tool. Unsampled
    spans get no children (nothing inside them is built: what ``ParentBased`` samplers,
    the SDK default, would decide anyway), and metrics are skipped on a no-op meter.
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, steps: bool = True,
                 describe_tool: Any = None):
        self._providers = (tracer_provider, meter_provider)
        self._describe_tool = describe_tool  # tool name -> its description (gen_ai.tool.description), once per tool
        self._steps = steps
        self._tracer: Any = None
        self._metrics = True
        self.spans: dict[str, Open] = {}  # zagent span id -> its open OTel span
        self._starts: dict[Any, tuple[str, Any, dict[str, Any], Any]] = {}  # cached (name, kind, attributes, labels)

    def zagent_event(self, event: Any) -> None:
        if event.span_id is None and event.parent_id is None:
            return  # a point event outside any span: nothing to attach it to
        try:
            if self._tracer is None:
                self._setup()
            self._event(event)
        except Exception:  # a tracing bug must never reach a run (the kernel would log it too)
            log.exception("zagent-otel: could not turn event %s into a span", event.type)

    def annotate(self, span_id: Optional[str], attributes: dict[str, Any]) -> None:
        """Set ``attributes`` on the OTel span of zagent span ``span_id`` (if it is open and its own)."""
        record = self.spans.get(span_id) if span_id is not None else None
        if record is not None and record.own:
            record.span.set_attributes(attributes)

    def _setup(self) -> None:
        from opentelemetry import metrics, trace

        tracer_provider, meter_provider = self._providers
        version = zagent.__version__
        self._tracer = trace.get_tracer(SCOPE, version, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, version, meter_provider=meter_provider)
        self._tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                              description="Number of input and output tokens used",
                                              explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self._duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                                description="GenAI operation duration",
                                                explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        # a no-op meter (an explicit NoOpMeterProvider) records nothing: skip building its attributes.
        # The global proxy meter is not skipped: an app may install a provider later.
        self._metrics = not isinstance(self._duration, metrics.NoOpHistogram)
        from opentelemetry.context import get_current
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

        self._current = get_current

        self._kinds = {semconv.CLIENT: SpanKind.CLIENT, semconv.INTERNAL: SpanKind.INTERNAL}
        self._error: Callable[[str], Status] = lambda text: Status(StatusCode.ERROR, mask_userinfo(text))
        self._in_context = set_span_in_context

    def _event(self, event: Any) -> None:
        span_id, type = event.span_id, event.type
        if span_id is None:
            parent = self.spans.get(event.parent_id) if event.parent_id else None
            if parent is not None and parent.span.is_recording():
                parent.span.add_event(type, _event_attributes(event.data), timestamp=_ns(event.time))
            return
        if type[-6:] == "_start":
            self._start(event, type[:-6])
        else:
            self._end(event)

    def _start(self, event: Any, kind: str) -> None:
        parent = self.spans.get(event.parent_id) if event.parent_id else None
        if parent is not None and (not parent.span.is_recording() or kind == "step" and not self._steps):
            self._alias(event, kind, parent)
            return
        name, span_kind, attrs, labels = self._describe(kind, event, parent is None)
        if parent is None:  # a top span starts in the app's current OTel context (nests under the app's span)
            context = self._current()
        else:
            context = parent.context
            if context is None:
                context = parent.context = self._in_context(parent.span)  # once per parent, shared by its children
        span = self._tracer.start_span(name, context=context, kind=span_kind, attributes=attrs,
                                       start_time=int(event.time * 1e9))
        record = Open(span, kind, event.parent_id)
        if labels is not None:
            record.labels = labels
            if parent is not None:
                self._provider_up(parent, attrs["gen_ai.provider.name"])
        self.spans[event.span_id] = record

    def _alias(self, event: Any, kind: str, parent: Open) -> None:
        """A zagent span without an OTel span of its own: its children attach to ``parent``'s OTel span."""
        if parent.context is None and parent.span.is_recording():
            parent.context = self._in_context(parent.span)
        record = Open(parent.span, kind, event.parent_id, own=False, context=parent.context)
        if kind == "llm" and self._metrics:
            record.labels = self._describe(kind, event, False)[3]
        self.spans[event.span_id] = record

    def _describe(self, kind: str, event: Any, top: bool) -> tuple[str, Any, dict[str, Any], Any]:
        """Span name, kind, start attributes and (chat spans) metric attribute sets; cached per model and per tool."""
        data = event.data
        if kind == "llm":
            key: Any = (kind, data.get("model"), data.get("provider"), event.agent, data.get("server"))
        elif kind == "tool":
            key = (kind, data.get("tool"))
        else:
            key = None
        found = self._starts.get(key) if key is not None else None
        if found is None:
            if kind == "tool" and self._describe_tool is not None:
                data = dict(data, description=self._describe_tool(data.get("tool")))
            name, start_kind, attrs = semconv.start(kind, data, event.agent, None)
            labels = None
            if kind == "llm":
                base = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": attrs["gen_ai.provider.name"],
                        "gen_ai.request.model": attrs["gen_ai.request.model"]}
                labels = (base, dict(base, **{"gen_ai.token.type": "input"}),
                          dict(base, **{"gen_ai.token.type": "output"}))
            found = (name, self._kinds[start_kind], attrs, labels)
            if key is not None and len(self._starts) < 256:  # bounded: model and tool names are few
                self._starts[key] = found
        name, span_kind, attrs, labels = found
        if key is not None:  # the cached mapping is shared: per-call attributes go on a copy
            call_id = data.get("call_id") if kind == "tool" else None
            settings = semconv.request_attributes(data) if kind == "llm" else None
            if call_id or settings or (top and event.run_id):
                attrs = dict(attrs, **(settings or {}))
                if call_id:
                    attrs["gen_ai.tool.call.id"] = str(call_id)
                if top and event.run_id:
                    attrs["gen_ai.conversation.id"] = event.run_id
        elif top and event.run_id:
            attrs["gen_ai.conversation.id"] = event.run_id
        return name, span_kind, attrs, labels

    def _provider_up(self, parent: Optional["Open"], provider: str) -> None:
        """Agent and workflow spans get ``gen_ai.provider.name`` of the first model call inside them (at their end)."""
        while parent is not None:
            if parent.kind in ("run", "workflow", "groupchat") and parent.own:
                if parent.provider is not None:
                    return  # set by an earlier call, and so were the spans around it
                parent.provider = provider
            parent = self.spans.get(parent.parent_id) if parent.parent_id else None

    def _end(self, event: Any) -> None:
        record = self.spans.pop(event.span_id, None)
        if record is None:
            return
        data = event.data
        failed = data.get("outcome") in ("error", "cancelled")
        labels = record.labels
        if labels is not None and self._metrics:
            self._record(data, labels, failed)
        if not record.own:
            return
        span = record.span
        if not span.is_recording():
            span.end()
            return
        attrs = semconv.end(record.kind, data)
        if record.provider is not None:
            attrs["gen_ai.provider.name"] = record.provider
        if failed:
            attrs["error.type"] = semconv.error_type(data)
            span.set_status(self._error(str(data.get("error") or data.get("outcome"))[:500]))
        if attrs:
            span.set_attributes(attrs)
        span.end(end_time=int(event.time * 1e9))

    def _record(self, data: dict[str, Any], labels: tuple[dict[str, Any], ...], failed: bool) -> None:
        """The GenAI client metrics of one chat call."""
        if failed:
            self._duration.record(float(data.get("duration") or 0.0),
                                  dict(labels[0], **{"error.type": semconv.error_type(data)}))
            return
        self._duration.record(float(data.get("duration") or 0.0), labels[0])
        self._tokens.record(int(data.get("input_tokens") or 0), labels[1])
        self._tokens.record(int(data.get("output_tokens") or 0), labels[2])

    def zagent_kernel_close(self) -> None:
        """Spans still open (a run the process gave up on) end now, marked unfinished."""
        for record in list(self.spans.values()):
            if not record.own:
                continue
            record.span.set_attribute("error.type", "unfinished")
            record.span.set_status(self._error("unfinished when the kernel closed"))
            record.span.end()
        self.spans.clear()

    def __repr__(self) -> str:
        return f"<zagent-otel observer: {len(self.spans)} open spans>"


class ContentCapture:
    """Opt-in: prompts, replies, tool arguments and results on the spans (masked). Runs last of the rails."""

    def __init__(self, observer: SpanObserver):
        self.observer = observer

    @property
    def secrets(self) -> list[str]:
        """Secret environment values now (an app may load its ``.env`` after the kernel started)."""
        from zagent.agentkit.secrets import env_secrets

        return env_secrets()

    @zagent.hookimpl(trylast=True)
    def zagent_after_llm_call(self, request: Any, response: Any, ctx: "RunContext[Any]") -> None:
        from .content import messages_json

        try:  # a rail that raises would block the reply: tracing must never do that
            self.observer.annotate(current_span_id(ctx.kernel.span_owner), {
                "gen_ai.input.messages": messages_json(request.messages, secrets := self.secrets),
                "gen_ai.output.messages": messages_json([response.message], secrets)})
        except Exception:
            log.exception("zagent-otel: could not record the messages of an LLM call")

    @zagent.hookimpl(trylast=True)
    def zagent_after_tool_call(self, call: Any, result: Any, ctx: "RunContext[Any]") -> None:
        from .content import masked, to_json

        try:
            self.observer.annotate(current_span_id(ctx.kernel.span_owner), {
                "gen_ai.tool.call.arguments": to_json(call.arguments, secrets := self.secrets),
                "gen_ai.tool.call.result": masked(result.content or "", secrets)})
        except Exception:
            log.exception("zagent-otel: could not record a tool call's arguments and result")


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _event_attributes(data: dict[str, Any]) -> dict[str, Any]:
    """Scalar event data as span-event attributes (lists of scalars kept; nothing else, nothing secret)."""
    from zagent.agentkit.secrets import looks_secret

    out: dict[str, Any] = {}
    for key, value in data.items():
        if looks_secret(key):
            continue
        if isinstance(value, (str, bool, int, float)):
            out[f"zagent.{key}"] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[f"zagent.{key}"] = list(value)
    return out
