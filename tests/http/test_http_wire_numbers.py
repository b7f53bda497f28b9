"""Numbers from the wire are validated: a reply reporting a negative or absurd token count is a ProtocolError
(never stored, summed or logged). A real OpenAI-compatible server on 127.0.0.1, blocking and streamed."""

from __future__ import annotations

import json

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import ProtocolError
from zagent._trust.limits import MAX_USAGE

KEY = "sk-wire-numbers-key-0123456789"


def _reply(prompt_tokens):
    return json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": 2}}).encode()


def _stream(prompt_tokens):
    events = [{"object": "chat.completion.chunk", "model": "m", "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": "fine"}, "finish_reason": None}]},
        {"object": "chat.completion.chunk", "model": "m", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"object": "chat.completion.chunk", "model": "m", "choices": [],
         "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": 2}}]
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("tokens", [int("9" * 401), -5, MAX_USAGE + 1], ids=["401 digits", "negative", "past MAX_USAGE"])
def test_an_absurd_token_count_is_a_protocol_error(kernel, tokens):
    """prompt_tokens of 401 digits, negative, or past MAX_USAGE: ProtocolError naming input_tokens."""
    with HostileServer(hostile.reply(200, _reply(tokens))) as server:
        llm = kernel.llm("openai:m", base_url=server.url, api_key=KEY)
        with pytest.raises(ProtocolError, match="input_tokens") as info:
            llm.complete("hi")
    assert info.value.retryable is False


def test_an_absurd_token_count_in_a_stream_is_a_protocol_error(kernel):
    """The same count at the end of an event stream: ProtocolError before the final chunk."""
    body = _stream(int("9" * 401))
    with HostileServer(hostile.reply(200, body, content_type="text/event-stream")) as server:
        llm = kernel.llm("openai:m", base_url=server.url, api_key=KEY)
        with pytest.raises(ProtocolError, match="401-digit"):
            list(llm.stream("hi"))


def test_a_plausible_token_count_is_kept(kernel):
    """A normal count (a million tokens) passes unchanged."""
    with HostileServer(hostile.reply(200, _reply(10**6))) as server:
        llm = kernel.llm("openai:m", base_url=server.url, api_key=KEY)
        assert llm.complete("hi").usage.input_tokens == 10**6
