"""The model path runs straight down: no provider model or HTTP client holds the Kernel, and rate limits stay
per kernel without one."""

from __future__ import annotations

import pytest

from zagent import Kernel, LLM, Model
from zagent.testing.graph import references_to
from tests.servers.anthropic_server import AnthropicServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer
from tests.servers.responses_server import ResponsesServer

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama",
           "zagent.plugins.fallback"]
KEY = "sk-graph-test"
NETWORK = {"openai:gpt-4o-mini": OpenAIServer, "openai-responses:gpt-4o-mini": ResponsesServer,
           "anthropic:claude-test": AnthropicServer, "ollama:llama3.2": OllamaServer}


@pytest.fixture
def k():
    kernel = Kernel(plugins=PLUGINS, entry_points=False)
    yield kernel
    kernel.close()


@pytest.mark.parametrize("spec", sorted(NETWORK))
def test_a_network_model_and_its_http_client_hold_no_kernel(k, spec):
    """After k.llm(...) and one call (its client made, its rpm limiter found), neither the provider's model
    nor its HTTP client has an attribute, two levels down, that is the Kernel."""
    with NETWORK[spec](key=KEY) if spec != "ollama:llama3.2" else OllamaServer() as server:
        model = k.llm(spec, base_url=server.url, api_key=KEY, rpm=600, retry_backoff=0.001)
        assert model.complete("hi").text
        assert isinstance(model, Model) and model.kernel is k  # the kernel's handle knows it; the provider not
        assert not hasattr(model.llm, "kernel") and not hasattr(model.llm.http, "owner")
        assert model.llm.http.limiter is not None
        assert references_to(model.llm, Kernel) == []
        assert references_to(model.llm.http, Kernel) == []


@pytest.mark.parametrize("spec, options", [
    ("test:offline", {}),
    ("scripted:s", {"replies": ["ok"]}),
    ("fallback:test:a,test:offline", {}),
])
def test_an_offline_or_wrapping_model_holds_no_kernel(k, spec, options):
    """The offline models and a fallback chain (whose members come from k.llm) keep no Kernel either."""
    model = k.llm(spec, **options)
    model.complete("hi")
    assert isinstance(model.llm, LLM)
    assert references_to(model.llm, Kernel) == []


def test_a_recorder_and_a_replayer_hold_no_kernel(k, tmp_path):
    """record: wraps the provider's own model (not the kernel's handle); replay: reads its file alone."""
    path = tmp_path / "run.jsonl"
    recorder = k.llm("record:scripted:s", path=str(path), replies=["ok"])
    recorder.complete("hi")
    assert references_to(recorder.llm, Kernel) == []
    replayer = k.llm("replay:x", path=str(path))
    assert replayer.complete("hi").text == "ok"
    assert references_to(replayer.llm, Kernel) == []


def test_the_walk_finds_a_kernel_one_and_two_levels_down():
    """The graph walk the tests above rely on does find a Kernel held directly, in a container, behind an
    object, or as a bound method's owner."""

    class Holder:
        def __init__(self, value):
            self.value = value

    kernel = Kernel(entry_points=False)
    try:
        assert references_to(Holder(kernel), Kernel) == ["value"]
        assert references_to(Holder({"k": [kernel]}), Kernel) == ["value['k'][0]"]
        assert references_to(Holder(Holder(kernel)), Kernel) == ["value.value"]
        assert references_to(Holder(kernel.context), Kernel) == ["value.__self__"]
        assert references_to(Holder(Holder(Holder(kernel))), Kernel) == []  # three levels: past the walk
    finally:
        kernel.close()


def test_two_kernels_keep_their_rate_limits_apart():
    """Two kernels in one process, the same provider and URL at different rpm: each kernel's models share its
    own limiter, and neither sees the other's."""
    with OpenAIServer(key=KEY) as server:
        one = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
        two = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
        try:
            options = {"base_url": server.url, "api_key": KEY, "retry_backoff": 0.001}
            a = one.llm("openai:gpt-4o-mini", rpm=30, **options)
            a2 = one.llm("openai:gpt-4o-mini", rpm=30, temperature=0, **options)
            b = two.llm("openai:gpt-4o-mini", rpm=90, **options)
            assert a.complete("x").text and b.complete("y").text
            assert a.http.limiter is a2.http.limiter
            assert a.http.limiter is not b.http.limiter
            assert (a.http.limiter.rpm, b.http.limiter.rpm) == (30, 90)
        finally:
            one.close()
            two.close()
