"""What zagent-otel does less of: unsampled runs, step spans switched off, no-op providers."""

import logging

from opentelemetry import metrics, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from zagent.plugins.offline import scenarios

from .conftest import shape
from .test_otel_metrics import points


class CountingProvider(trace.TracerProvider):
    """An API tracer provider that counts the spans asked of its tracers (then lets the SDK's make them)."""

    def __init__(self, inner):
        self.inner, self.started = inner, 0

    def get_tracer(self, *args, **kwargs):
        outer, tracer = self, self.inner.get_tracer(*args, **kwargs)

        class Counting(trace.Tracer):
            def start_span(self, *a, **k):
                outer.started += 1
                return tracer.start_span(*a, **k)

            def start_as_current_span(self, *a, **k):  # pragma: no cover - zagent-otel never makes spans current
                raise AssertionError("zagent-otel makes no span current")

        return Counting()


def test_an_unsampled_run_builds_no_spans_inside_it_but_keeps_its_metrics(make_kernel, exporter, metric_reader):
    """ParentBased(TraceIdRatioBased(0)): one (non-recording) top span asked for, nothing exported, metrics recorded."""
    sdk = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.0)))
    sdk.add_span_processor(SimpleSpanProcessor(exporter))
    counting = CountingProvider(sdk)
    scenarios.react_two_tools(make_kernel(tracer_provider=counting))
    assert exporter.get_finished_spans() == ()
    assert counting.started == 1  # the run span; its 2 steps, 2 chats and 2 tool calls cost no SDK span each
    [duration] = points(metric_reader, "gen_ai.client.operation.duration")
    assert duration.count == 2


def test_a_sampled_run_asks_one_span_per_zagent_span(make_kernel, exporter, tracer_provider):
    """The same run sampled: every zagent span is one SDK span (the count the unsampled test is compared to)."""
    counting = CountingProvider(tracer_provider)
    scenarios.react_two_tools(make_kernel(tracer_provider=counting))
    assert counting.started == len(exporter.get_finished_spans()) == 7


def test_steps_off_hangs_model_and_tool_calls_under_the_agent_span(make_kernel, exporter):
    """config otel.steps=False: invoke_agent → chat, execute_tool ×2, chat (no step spans)."""
    scenarios.react_two_tools(make_kernel(steps=False))
    assert shape(exporter.get_finished_spans()) == [("invoke_agent helper", [
        ("chat offline", []), ("chat offline", []), ("execute_tool shout", []), ("execute_tool word_count", [])])]


def test_step_spans_carry_no_token_usage_their_chat_spans_do(make_kernel, exporter):
    """Tokens are on chat spans and summed on the agent span, not repeated on the step spans."""
    scenarios.react_two_tools(make_kernel())
    spans = exporter.get_finished_spans()
    steps = [s for s in spans if s.name.startswith("step ")]
    assert steps and all("gen_ai.usage.input_tokens" not in s.attributes for s in steps)
    assert all(s.attributes["gen_ai.usage.input_tokens"] > 0 for s in spans if s.name.startswith("chat "))


def test_on_the_api_no_op_providers_a_run_completes_without_tracing_errors(make_kernel, caplog):
    """Installed but nothing set up (the API's no-op providers): runs work and nothing is logged as failed."""
    k = make_kernel(tracer_provider=trace.NoOpTracerProvider(), meter_provider=metrics.NoOpMeterProvider())
    with caplog.at_level(logging.WARNING):
        result = scenarios.react_two_tools(k)
        scenarios.three_node_workflow(k)
    assert result.steps
    assert not [r for r in caplog.records if "zagent-otel" in r.getMessage()]
