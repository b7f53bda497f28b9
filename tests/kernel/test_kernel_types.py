"""Core types and errors: JSON round trips, secrets never shown, error messages that help."""

import logging

import msgspec

from zagent import Completion, Message, ParseError, ProviderError, Secret, ToolCall, Usage


def test_message_round_trips_through_json():
    """A message with tool calls encodes to JSON and decodes back equal."""
    msg = Message.assistant(tool_calls=[ToolCall(id="1", name="add", arguments={"a": 1})])
    assert msgspec.json.decode(msgspec.json.encode(msg), type=Message) == msg


def test_usage_adds_up():
    """``Usage`` values add field by field."""
    total = Usage(input_tokens=1, output_tokens=2, calls=1) + Usage(input_tokens=3, output_tokens=4, calls=1)
    assert (total.total_tokens, total.calls) == (10, 2)


def test_completion_exposes_text_and_tool_calls():
    """``Completion.text`` and ``.tool_calls`` read the assistant message."""
    c = Completion(message=Message.assistant("hi"), finish_reason="stop")
    assert (c.text, c.tool_calls) == ("hi", [])


def test_secret_not_in_repr_or_str():
    """A ``Secret`` never shows its value in ``repr`` or ``str``."""
    s = Secret("sk-very-secret")
    assert "sk-very" not in repr(s) and "sk-very" not in str(s) and "sk-very" not in f"{s}"
    assert s.reveal() == "sk-very-secret"


def test_secret_not_in_logs(caplog):
    """Logging a ``Secret`` prints the mask, not the value."""
    with caplog.at_level(logging.INFO):
        logging.getLogger("zagent.test").info("key=%s", Secret("sk-very-secret"))
    assert "sk-very" not in caplog.text and "***" in caplog.text


def test_secret_inside_containers_stays_hidden():
    """A ``Secret`` inside a dict repr stays masked."""
    assert "sk-very" not in repr({"api_key": Secret("sk-very-secret")})


def test_secret_of_empty_is_none():
    """``Secret.of`` turns missing or empty values into ``None``."""
    assert Secret.of("") is None and Secret.of(None) is None and Secret.of("x").reveal() == "x"


def test_parse_error_keeps_raw_text():
    """``ParseError`` keeps the model's raw reply whole."""
    assert ParseError("bad", raw="the whole reply").raw == "the whole reply"


def test_provider_error_carries_status():
    """``ProviderError`` carries provider, status and retryability."""
    e = ProviderError("boom", provider="openai", status=503, retryable=True)
    assert (e.provider, e.status, e.retryable) == ("openai", 503, True)
