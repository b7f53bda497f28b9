"""The same spans reach an OTLP/HTTP receiver on 127.0.0.1 (protobuf decoded), in-process and via ZAGENT_OTEL=1."""

import os
import subprocess
import sys
import textwrap

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from zagent.plugins.offline import scenarios

from .conftest import shape
from .otlp_receiver import Receiver, attributes, proto_shape


def test_the_three_scenarios_arrive_at_the_receiver_as_the_in_memory_exporter_saw_them(
        make_kernel, exporter, tracer_provider):
    """ReAct run, workflow and group chat: identical trees and GenAI attributes over OTLP/HTTP protobuf."""
    with Receiver() as receiver:
        tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint + "/v1/traces")))
        k = make_kernel()
        scenarios.react_two_tools(k)
        scenarios.three_node_workflow(k)
        scenarios.group_chat(k)
        local = exporter.get_finished_spans()
        tracer_provider.force_flush()
        received = receiver.spans()
    assert len(received) == len(local) and proto_shape(received) == shape(local)
    chat = next(s for s in received if s.name == "chat offline")
    attrs = attributes(chat)
    assert attrs["gen_ai.operation.name"] == "chat" and attrs["gen_ai.provider.name"] == "test"
    assert attrs["gen_ai.request.model"] == "offline" and attrs["gen_ai.usage.input_tokens"] > 0
    tool = next(s for s in received if s.name == "execute_tool word_count")
    assert attributes(tool)["gen_ai.tool.name"] == "word_count" and attributes(tool)["gen_ai.tool.call.id"]
    names = {s.name for s in received}
    assert {"invoke_agent helper", "invoke_workflow report", "invoke_workflow groupchat", "turn A"} <= names


SCRIPT = textwrap.dedent("""
    from zagent import Kernel
    from zagent.plugins.offline import scenarios
    k = Kernel()  # installed plugins, zagent-otel among them (entry point)
    assert k.pm.has_plugin("otel.observer"), k.plugins()
    scenarios.react_two_tools(k)
    k.close()
""")


def run_child(env_extra, script=SCRIPT):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ZAGENT_"))}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)


def test_zagent_otel_1_sets_up_an_otlp_exporter_from_the_standard_variables():
    """ZAGENT_OTEL=1 + OTEL_EXPORTER_OTLP_ENDPOINT: a plain script's run arrives at the receiver, with its service name."""
    with Receiver() as receiver:
        out = run_child({"ZAGENT_OTEL": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                         "OTEL_SERVICE_NAME": "agent-test", "OTEL_METRIC_EXPORT_INTERVAL": "100000"})
        assert out.returncode == 0, out.stderr[-2000:]
        spans = receiver.spans()
        assert proto_shape(spans) == [("invoke_agent helper", [
            ("step 1", [("chat offline", []), ("execute_tool shout", []), ("execute_tool word_count", [])]),
            ("step 2", [("chat offline", [])])])]
        assert {r["service.name"] for r in receiver.resources()} == {"agent-test"}
        assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= receiver.metric_names()


def test_an_application_s_own_global_provider_is_used_as_it_is():
    """An app that set the global tracer provider (ZAGENT_OTEL unset) gets zagent's spans there."""
    script = textwrap.dedent("""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    """) + SCRIPT + "print(sorted(s.name for s in exporter.get_finished_spans()))\n"
    out = run_child({}, script)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == str(sorted([
        "chat offline", "chat offline", "execute_tool shout", "execute_tool word_count", "invoke_agent helper",
        "step 1", "step 2"]))


def test_another_otlp_protocol_is_refused_with_what_to_do():
    """ZAGENT_OTEL=1 with OTEL_EXPORTER_OTLP_PROTOCOL=grpc: a clear error, not a silent no-export."""
    out = run_child({"ZAGENT_OTEL": "1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "ZAGENT_STRICT": "1"})
    assert out.returncode != 0 and "http/protobuf" in out.stderr
