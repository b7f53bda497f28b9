"""Message content: absent unless switched on; when on, in the GenAI JSON shapes with secrets masked."""

import json

ATTRS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def login(user: str, token: str) -> str:
    """Log in.

    Args:
        user: who.
        token: the credential.
    """
    return f"welcome {user}"


def run_with_secrets(k):
    k.add_tool(login)
    k.run_tool({"name": "login", "arguments": {"user": "ann", "token": "tok-SECRET-123"}})
    k.llm("test:offline").complete("my key is sk-ENV-SECRET-789, hi")


def test_no_content_is_recorded_by_default(make_kernel, exporter):
    """Without the opt-in no span carries messages, tool arguments or results."""
    run_with_secrets(make_kernel())
    for span in exporter.get_finished_spans():
        assert not set(ATTRS) & set(span.attributes)


def test_opted_in_content_is_recorded_with_secrets_masked(make_kernel, exporter, monkeypatch):
    """capture_content: messages and tool data recorded; a secret argument and a secret env value are ***."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ENV-SECRET-789")
    run_with_secrets(make_kernel(capture_content=True))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool, chat = spans["execute_tool login"], spans["chat offline"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"user": "ann", "token": "***"}
    assert tool.attributes["gen_ai.tool.call.result"] == "welcome ann"
    inputs = json.loads(chat.attributes["gen_ai.input.messages"])
    assert inputs == [{"role": "user", "parts": [{"type": "text", "content": "my key is ***, hi"}]}]
    assert json.loads(chat.attributes["gen_ai.output.messages"])[0]["role"] == "assistant"
    assert all("SECRET" not in str(v) for s in spans.values() for v in s.attributes.values())


def test_the_standard_environment_variable_switches_content_on(make_kernel, exporter, monkeypatch):
    """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true turns capture on."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    make_kernel().llm("test:offline").complete("hello")
    assert "gen_ai.input.messages" in exporter.get_finished_spans()[0].attributes
