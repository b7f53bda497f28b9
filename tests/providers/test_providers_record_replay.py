"""Record real exchanges through a loopback server, then replay them offline."""

from __future__ import annotations

import pytest

from zagent import ConfigError, Message, RateLimitError, ToolSpec
from tests.servers.openai_server import OpenAIServer, completion, error

KEY = "sk-record-secret-777"
ADD = ToolSpec(name="add", parameters={"type": "object", "properties": {"a": {"type": "integer"}}})


@pytest.fixture
def k(make_kernel):
    """A fresh kernel with the offline and openai plugins only, closed after the test."""
    return make_kernel("zagent.plugins.offline", "zagent.plugins.openai", strict=False)


@pytest.fixture
def recording(k, tmp_path):
    """A recording of two calls (a tool call, then text) made against a loopback server."""
    path = tmp_path / "run.jsonl"
    with OpenAIServer(key=KEY) as server:
        server.then(completion(tool_calls=[{"id": "c1", "name": "add", "arguments": '{"a": 1}'}]))
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
        first = rec.complete("add one", tools=[ADD])
        history = [Message.user("add one"), first.message, Message.tool("1", "c1", "add")]
        rec.complete(history, tools=[ADD])
    return path, history


def test_replay_returns_recorded_replies(k, recording):
    """Replaying the same calls returns the recorded completions, with no server running."""
    path, history = recording
    llm = k.llm("replay:run", path=str(path))
    assert llm.complete("add one", tools=[ADD]).tool_calls[0].arguments == {"a": 1}
    assert llm.complete(history, tools=[ADD]).text == "echo: 1"


def test_recording_holds_no_secret(recording):
    """The recording file never contains the API key or an authorization header."""
    path, _ = recording
    text = path.read_text()
    assert KEY not in text and "authorization" not in text.lower()


def test_option_secrets_are_masked(k, tmp_path):
    """Credential-like request options are written as *** ."""
    path = tmp_path / "r.jsonl"
    with OpenAIServer(key=KEY) as server:
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
        rec.complete("hi", extra_body={"session_token": "tok-123"})
    assert "tok-123" not in path.read_text() and "***" in path.read_text()


def test_replay_mismatch_says_what_differs(k, recording):
    """A request that differs from the recording raises ConfigError naming the difference."""
    path, _ = recording
    llm = k.llm("replay:run", path=str(path))
    with pytest.raises(ConfigError, match=r"1st call does not match.*message 0 differs.*'add two'"):
        llm.complete("add two", tools=[ADD])


def test_replay_in_order_ignores_requests(k, recording):
    """match='order' replays in order without comparing requests."""
    path, _ = recording
    assert k.llm("replay:run", path=str(path), match="order").complete("other").tool_calls


def test_replay_exhaustion(k, recording):
    """More calls than recorded raise ConfigError saying how many were recorded."""
    path, history = recording
    llm = k.llm("replay:run", path=str(path), match="order")
    llm.complete("a")
    llm.complete("b")
    with pytest.raises(ConfigError, match="holds 2 recorded calls but a 3rd call"):
        llm.complete("c")


def test_recorded_errors_replay_as_errors(k, tmp_path):
    """A failed call is recorded and replays as the same typed error."""
    path = tmp_path / "e.jsonl"
    with OpenAIServer(key=KEY) as server:
        server.then(error(429, "slow down", headers={"retry-after": "0"}))
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(RateLimitError):
            rec.complete("hi")
    with pytest.raises(RateLimitError, match="replayed"):
        k.llm("replay:e", path=str(path)).complete("hi")


def test_streamed_calls_are_recorded_and_replayed(k, tmp_path):
    """A streamed call is recorded whole and replays as a stream."""
    path = tmp_path / "s.jsonl"
    with OpenAIServer(key=KEY) as server:
        rec = k.llm("record:openai:gpt-4o-mini", path=str(path), base_url=server.url, api_key=KEY)
        assert list(rec.stream("hey"))[-1].completion.text == "echo: hey"
    chunks = list(k.llm("replay:s", path=str(path)).stream("hey"))
    assert "".join(c.text for c in chunks if c.type == "text") == "echo: hey"


def test_missing_recording_file(k, tmp_path):
    """Replaying a file that does not exist says to record it first."""
    with pytest.raises(ConfigError, match="record it first"):
        k.llm("replay:x", path=str(tmp_path / "none.jsonl"))
