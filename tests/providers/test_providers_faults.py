"""The shared reliability rules hold for every network provider (openai, anthropic, ollama) on its own protocol."""

from __future__ import annotations

import pytest

from zagent import Kernel, ProviderError, ProviderTimeout, RateLimitError, StreamInterrupted
from tests.servers import anthropic_server, ollama_server, openai_server
from tests.servers.loopback import Reply

KEY = "sk-fault-key"


def _openai_stream_cut():
    return openai_server.stream_events("abcdefghi")[:3]  # role, "abc", "def"


def _anthropic_stream_cut():
    return anthropic_server.stream_events("abcdefgh")[:5]  # start, ping, block, "abcd", "efgh"


def _ollama_stream_cut():
    return ollama_server.stream_lines("abcdef")[:2]  # "abc", "def"


PROVIDERS = {
    "openai": (lambda: openai_server.OpenAIServer(key=KEY), _openai_stream_cut, "abcdef", "text/event-stream"),
    "anthropic": (lambda: anthropic_server.AnthropicServer(key=KEY), _anthropic_stream_cut, "abcdefgh",
                  "text/event-stream"),
    "ollama": (lambda: ollama_server.OllamaServer(), _ollama_stream_cut, "abcdef", "application/x-ndjson"),
}


@pytest.fixture(params=sorted(PROVIDERS))
def setup(request):
    name = request.param
    make_server, cut, partial, ctype = PROVIDERS[name]
    with make_server() as server, Kernel(plugins=[f"zagent.plugins.{name}"], entry_points=False) as k:
        def llm(**options):
            options = {"base_url": server.url, "api_key": KEY, "retry_backoff": 0.001, **options}
            return k.llm(f"{name}:model-x", **options)

        yield name, server, llm, cut, partial, ctype


def _error(status, message, **kw):
    return Reply.json({"error": {"message": message, "type": "x"}}, status, **kw)


def test_429_with_retry_after_then_success(setup):
    """429 + Retry-After is waited out and retried; the user gets the next reply."""
    name, server, llm, *_ = setup
    server.then(_error(429, "too many", headers={"retry-after": "0"}))
    assert llm().complete("hi").text == "echo: hi"
    assert len(server.requests) == 2


def test_429_exhausted(setup):
    """Persistent 429s end in RateLimitError with status 429 and the server's message."""
    name, server, llm, *_ = setup
    server.then(*[_error(429, "too many requests", headers={"retry-after": "0"})] * 2)
    with pytest.raises(RateLimitError, match="too many requests") as info:
        llm(max_retries=1).complete("hi")
    assert info.value.status == 429 and info.value.provider == name


def test_500_then_success(setup):
    """A 500 is retried and the following success is returned."""
    _, server, llm, *_ = setup
    server.then(_error(500, "boom"))
    assert llm().complete("hi").text == "echo: hi"


def test_malformed_json_body(setup):
    """A reply that is not JSON raises ProviderError saying so."""
    _, server, llm, *_ = setup
    server.then(Reply(body=b"{not json"))
    with pytest.raises(ProviderError, match="not valid JSON"):
        llm().complete("hi")


def test_never_answers(setup):
    """A server that never answers raises ProviderTimeout naming the timeout."""
    _, server, llm, *_ = setup
    server.then(Reply(hang=True))
    with pytest.raises(ProviderTimeout, match=r"no reply data within 0.3 s"):
        llm(timeout=0.3, max_retries=0).complete("hi")


def test_reset_mid_stream(setup):
    """A TCP reset mid-stream raises StreamInterrupted carrying the text received so far."""
    _, server, llm, cut, partial, ctype = setup
    server.then(Reply(chunks=cut(), end="reset", content_type=ctype))
    with pytest.raises(StreamInterrupted) as info:
        list(llm().stream("x"))
    assert info.value.partial == partial


def test_truncated_stream(setup):
    """A stream closed before its end marker raises StreamInterrupted with the partial text."""
    _, server, llm, cut, partial, ctype = setup
    server.then(Reply(chunks=cut(), end="close", content_type=ctype))
    with pytest.raises(StreamInterrupted) as info:
        list(llm().stream("x"))
    assert info.value.partial == partial


def test_key_not_in_error(setup):
    """A server echoing the key in an error never puts the key into the error the user sees."""
    _, server, llm, *_ = setup
    server.then(_error(400, f"bad key {KEY}"))
    with pytest.raises(ProviderError) as info:
        llm().complete("hi")
    assert KEY not in str(info.value) and KEY not in info.value.body


def test_finished_streams_reuse_the_connection(setup):
    """Streams read to their end marker leave the connection reusable: three streams over one connection."""
    _, server, llm, *_ = setup
    model = llm()
    for text in ("a", "b", "c"):
        assert list(model.stream(text))[-1].completion.text == f"echo: {text}"
    assert len(server.requests) == 3 and server.connections == 1
