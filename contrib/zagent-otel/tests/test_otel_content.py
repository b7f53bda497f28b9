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


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


def _chat_inputs(exporter):
    chat = next(s for s in exporter.get_finished_spans() if s.name.startswith("chat"))
    return json.loads(chat.attributes["gen_ai.input.messages"])


def test_an_inline_image_is_a_blob_part_with_its_bytes(make_kernel, exporter):
    """A small inline image is recorded as a GenAI blob part (base64 content, image modality, MIME type)."""
    import base64

    from zagent.types import Message, Part

    make_kernel(capture_content=True).llm("test:offline").complete(
        [Message.user("what is this?", image=Part.image(PNG, "image/png"))])
    parts = _chat_inputs(exporter)[0]["parts"]
    assert parts[0] == {"type": "text", "content": "what is this?"}
    assert parts[1] == {"type": "blob", "modality": "image", "mime_type": "image/png",
                        "content": base64.b64encode(PNG).decode()}


def test_an_image_url_is_a_uri_part_with_its_userinfo_masked(make_kernel, exporter):
    """An image by URL is a uri part; a password in the URL does not reach the span."""
    from zagent.types import Message, Part

    make_kernel(capture_content=True).llm("test:offline").complete(
        [Message.user("see", image=Part.image("https://bob:hunter2pass@img.example/cat.png"))])
    part = _chat_inputs(exporter)[0]["parts"][1]
    assert part["type"] == "uri" and part["modality"] == "image" and part["uri"].endswith("img.example/cat.png")
    assert "hunter2pass" not in part["uri"]


def test_a_large_inline_file_keeps_its_size_and_digest_not_its_bytes(make_kernel, exporter):
    """Inline data over MAX_BLOB_BYTES: a blob part with size and sha256, empty content (no megabytes in spans)."""
    import hashlib

    from zagent.types import Message, Part
    from zagent_otel.content import MAX_BLOB_BYTES

    data = b"%PDF-1.7\n" + b"x" * (MAX_BLOB_BYTES + 1)
    make_kernel(capture_content=True).llm("test:offline").complete(
        [Message.user("summarise", file=Part.file(data, name="report.pdf"))])
    part = _chat_inputs(exporter)[0]["parts"][1]
    assert part == {"type": "blob", "modality": "document", "mime_type": "application/pdf", "name": "report.pdf",
                    "content": "", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_the_shells_working_directories_are_not_taken_for_secrets(monkeypatch):
    """``PWD`` and ``OLDPWD`` end like a password's name but hold folders: a span's text keeps the folder, while a
    real ``DB_PWD`` is still masked."""
    from zagent.agentkit.secrets import env_secrets

    monkeypatch.setenv("PWD", "/home/alice/project")
    monkeypatch.setenv("OLDPWD", "/home/alice")
    monkeypatch.setenv("DB_PWD", "hunter2-secret")
    found = env_secrets()
    assert "/home/alice/project" not in found and "/home/alice" not in found and "hunter2-secret" in found
