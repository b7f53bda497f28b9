"""Span trees and GenAI attributes of a ReAct run, a 3-node workflow and a group chat (in-memory exporter)."""

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from zagent.plugins.offline import scenarios

from .conftest import shape, tree

STEP_LEAF = ("step 1", [("chat offline", [])])


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def test_a_react_run_with_two_tool_calls_is_agent_step_chat_and_tools(make_kernel, exporter):
    """invoke_agent → step 1 → (chat, execute_tool ×2), step 2 → chat; GenAI attributes on each."""
    k = make_kernel()
    result = scenarios.react_two_tools(k)
    spans = exporter.get_finished_spans()
    assert shape(spans) == [("invoke_agent helper", [
        ("step 1", [("chat offline", []), ("execute_tool shout", []), ("execute_tool word_count", [])]),
        ("step 2", [("chat offline", [])])])]
    chat = by_name(spans, "chat offline")[0]
    assert chat.kind == SpanKind.CLIENT
    assert {k: chat.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")} == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "test", "gen_ai.request.model": "offline"}
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0 and chat.attributes["gen_ai.usage.output_tokens"] > 0
    tool = by_name(spans, "execute_tool shout")[0]
    call_ids = {s.call_id for s in result.steps if s.tool == "shout"}
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool" and tool.attributes["gen_ai.tool.name"] == "shout"
    assert tool.attributes["gen_ai.tool.call.id"] in call_ids and tool.kind == SpanKind.INTERNAL
    agent = by_name(spans, "invoke_agent helper")[0]
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent" and agent.attributes["gen_ai.agent.name"] == "helper"
    assert agent.attributes["gen_ai.provider.name"] == "test"
    assert agent.attributes["gen_ai.usage.input_tokens"] == sum(
        s.attributes["gen_ai.usage.input_tokens"] for s in by_name(spans, "chat offline"))
    assert all(s.status.status_code == StatusCode.UNSET for s in spans)


def test_a_three_node_workflow_is_workflow_nodes_agents(make_kernel, exporter):
    """invoke_workflow → node ×3 (left and right in parallel) → invoke_agent → step → chat."""
    scenarios.three_node_workflow(make_kernel())
    spans = exporter.get_finished_spans()
    node = lambda n, agent: (f"node {n}", [(f"invoke_agent {agent}", [STEP_LEAF])])  # noqa: E731
    assert shape(spans) == [("invoke_workflow report", sorted([
        node("left", "LeftWriter"), node("outline", "Outliner"), node("right", "RightWriter")]))]
    wf = by_name(spans, "invoke_workflow report")[0]
    assert wf.attributes["gen_ai.operation.name"] == "invoke_workflow" and wf.attributes["gen_ai.workflow.name"] == "report"
    outline = by_name(spans, "node outline")[0]
    later = [s for s in spans if s.name in ("node left", "node right")]
    assert all(s.start_time >= outline.end_time for s in later)


def test_a_group_chat_is_workflow_turns_agents_with_speaker_events(make_kernel, exporter):
    """invoke_workflow → turn A, turn B → invoke_agent → step → chat; speaker choices are span events."""
    scenarios.group_chat(make_kernel())
    spans = exporter.get_finished_spans()
    assert tree(spans) == [(0, "invoke_workflow groupchat"),
                           (1, "turn A"), (2, "invoke_agent A"), (3, "step 1"), (4, "chat offline"),
                           (1, "turn B"), (2, "invoke_agent B"), (3, "step 1"), (4, "chat offline")]
    chat = by_name(spans, "invoke_workflow groupchat")[0]
    selected = [e for e in chat.events if e.name == "speaker_selected"]
    assert [e.attributes["zagent.speaker"] for e in selected] == ["A", "B"]
    turn = by_name(spans, "turn B")[0]
    assert turn.attributes["zagent.groupchat.round"] == 2 and turn.attributes["gen_ai.agent.name"] == "B"


def test_a_failing_tool_and_model_call_are_error_spans(make_kernel, exporter):
    """A tool that raises and an LLM call that raises: status ERROR, error.type the exception's class."""
    k = make_kernel()

    def boom() -> str:
        """Fail."""
        raise RuntimeError("no")

    k.add_tool(boom)
    k.run_tool({"name": "boom", "arguments": {}})
    with pytest.raises(Exception):
        k.llm("scripted:empty", replies=[]).complete("hi")
    tool = by_name(exporter.get_finished_spans(), "execute_tool boom")[0]
    chat = by_name(exporter.get_finished_spans(), "chat empty")[0]
    assert tool.status.status_code == StatusCode.ERROR and tool.attributes["error.type"] == "RuntimeError"
    assert chat.status.status_code == StatusCode.ERROR and chat.attributes["error.type"] not in ("", "_OTHER")


def test_a_run_nests_under_the_application_s_current_span(make_kernel, exporter, tracer_provider):
    """A run started inside an app's span (a web request) becomes its child."""
    k = make_kernel()
    with tracer_provider.get_tracer("app").start_as_current_span("request") as outer:
        k.llm("test:offline").complete("hi")
    chat = by_name(exporter.get_finished_spans(), "chat offline")[0]
    assert chat.parent is not None and chat.parent.span_id == outer.get_span_context().span_id


def test_switched_off_no_observer_is_added(monkeypatch, tracer_provider):
    """config {"otel": False} or ZAGENT_OTEL=0: the kernel gets no event listener."""
    from zagent import Kernel

    from .conftest import PLUGINS

    k = Kernel(PLUGINS, entry_points=False, config={"otel": False})
    assert not k.hooks.active("zagent_event")
    k.close()
    monkeypatch.setenv("ZAGENT_OTEL", "0")
    k = Kernel(PLUGINS, entry_points=False)
    assert not k.hooks.active("zagent_event")
    k.close()
