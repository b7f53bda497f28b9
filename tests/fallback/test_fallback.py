"""The fallback provider against two real loopback servers: an outage moves on, a bad key or request does not."""

import pytest

from zagent import AuthenticationError, ConfigError, Kernel
from zagent.errors import BadRequestError, ProviderError

from tests.servers.loopback import Reply
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAIServer, error

KEY = "sk-fallback-test"
PLUGINS = ["zagent.plugins.openai", "zagent.plugins.ollama", "zagent.plugins.fallback", "zagent.plugins.offline",
           "zagent.plugins.parsers", "zagent.plugins.actions"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the OpenAI, Ollama and fallback providers."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


@pytest.fixture
def servers():
    """An OpenAI-compatible server (scripted to fail per test) and an Ollama server that answers."""
    with OpenAIServer(key=KEY) as primary, OllamaServer() as backup:
        yield primary, backup


def _chain(kernel, primary, backup, **options):
    return kernel.llm("fallback:openai:gpt-4o-mini,ollama:llama3.2", models=[
        {"model": "openai:gpt-4o-mini", "base_url": primary.url, "api_key": options.pop("key", KEY),
         "max_retries": 0},
        {"model": "ollama:llama3.2", "base_url": backup.url, "max_retries": 0}], **options)


def test_outage_moves_to_the_next_model(kernel, servers):
    """A 503 from the first model sends the call to the second, which answers."""
    primary, backup = servers
    primary.then(Reply(status=503, body=b"overloaded"))
    reply = _chain(kernel, primary, backup).complete("hello")
    assert reply.text == "echo: hello"
    assert len(primary.requests) == 1 and len(backup.requests) == 1


def test_rate_limit_moves_to_the_next_model(kernel, servers):
    """A 429 (after the first model's own retries) moves on too."""
    primary, backup = servers
    primary.then(error(429, "slow down", "rate_limit_error"))
    assert _chain(kernel, primary, backup).complete("hi").text == "echo: hi"


def test_streamed_call_moves_on_before_its_first_chunk(kernel, servers):
    """A stream whose first model fails before any chunk is served by the next model."""
    primary, backup = servers
    primary.then(Reply(status=500, body=b"boom"))
    chunks = list(_chain(kernel, primary, backup).stream("streamed"))
    assert "".join(c.text or "" for c in chunks if c.type == "text") == "echo: streamed"


def test_bad_key_is_raised_without_trying_the_next_model(kernel, servers):
    """A 401 is the user's to fix: it is raised at once and the second server gets no request."""
    primary, backup = servers
    with pytest.raises(AuthenticationError):
        _chain(kernel, primary, backup, key="sk-wrong").complete("hello")
    assert backup.requests == []


def test_bad_request_is_raised_without_trying_the_next_model(kernel, servers):
    """A 400 would fail on every model: it is raised at once."""
    primary, backup = servers
    primary.then(error(400, "bad temperature"))
    with pytest.raises(BadRequestError):
        _chain(kernel, primary, backup).complete("hello")
    assert backup.requests == []


def test_every_model_down_raises_the_last_error_naming_all(kernel, servers):
    """When every model has an outage, the last error is raised and names what each model said."""
    primary, _ = servers
    primary.then(Reply(status=503, body=b"down"))
    chain = kernel.llm("fallback:x", models=[
        {"model": "openai:gpt-4o-mini", "base_url": primary.url, "api_key": KEY, "max_retries": 0},
        {"model": "ollama:llama3.2", "base_url": "http://127.0.0.1:9", "max_retries": 0}])
    with pytest.raises(ProviderError) as info:
        chain.complete("hello")
    assert "openai:gpt-4o-mini" in str(info.value) and "every model of the fallback chain failed" in str(info.value)


def test_agent_llm_config_list_is_a_fallback_chain(kernel, servers):
    """An agent file's llm_config model given as a list answers through the chain."""
    primary, backup = servers
    primary.then(Reply(status=502, body=b"bad gateway"))
    agent = kernel.agent({"name": "QA", "prompt": "{q}", "inputs": [{"name": "q", "type": "string"}],
                          "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str",
                          "llm_config": {"model": [
                              {"model": "openai:gpt-4o-mini", "base_url": primary.url, "api_key": KEY,
                               "max_retries": 0},
                              {"model": "ollama:llama3.2", "base_url": backup.url, "max_retries": 0}]}})
    assert agent(q="ping").answer.startswith("echo:")
    assert KEY not in repr(agent.llm) and KEY not in str(agent.to_dict())


def test_chain_spec_errors_are_config_errors(kernel):
    """An empty chain or a chain holding a chain is a ConfigError saying how to name the models."""
    with pytest.raises(ConfigError, match="1 to 16 models"):
        kernel.llm("fallback: , ")
    with pytest.raises(ConfigError, match="cannot hold another fallback"):
        kernel.llm("fallback:x", models=["fallback:test:a"])


@pytest.mark.parametrize("error, moves", [
    ("RateLimitError", True), ("ProviderTimeout", True), ("StreamInterrupted", True), ("DeadlineExceeded", True),
    ("AuthenticationError", False), ("BadRequestError", False), ("NotFoundError", False),
    ("ProtocolError", False), ("ResponseTooLarge", False), ("ProviderConfigError", False)])
def test_which_errors_move_to_the_next_model(error, moves):
    """The documented table: outages move on, errors of the request or the setup do not."""
    from zagent import errors
    from zagent.plugins.fallback.provider import moves_on

    assert moves_on(getattr(errors, error)("x")) is moves


def test_a_server_error_moves_on_and_a_refusal_does_not():
    """A retryable plain ProviderError (5xx) moves on; a Refusal (not a provider error) is raised."""
    from zagent.errors import Refusal
    from zagent.plugins.fallback.provider import moves_on

    assert moves_on(ProviderError("503", retryable=True)) and not moves_on(ProviderError("odd"))
    assert not moves_on(Refusal("no"))


def test_unreachable_first_server_moves_to_the_next_model(kernel, servers):
    """A connection refused by the first model's server (it is down) sends the call to the next model."""
    _, backup = servers
    chain = kernel.llm("fallback:x", models=[
        {"model": "openai:gpt-4o-mini", "base_url": f"http://127.0.0.1:{_closed_port()}/v1", "api_key": KEY,
         "max_retries": 0},
        {"model": "ollama:llama3.2", "base_url": backup.url, "max_retries": 0}])
    assert chain.complete("anyone?").text == "echo: anyone?"


def _closed_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
