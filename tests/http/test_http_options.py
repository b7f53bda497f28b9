"""HTTP options: the fair in-flight limit, ZAGENT_TIMEOUT, and the choice of HTTP module (httpx2 when installed)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import ConfigError, ProviderConfigError
from zagent.providerkit import HttpConfig, default_http_module

OK = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}).encode()


def _llm(kernel, server, **options):
    return kernel.llm("openai:m", base_url=server.url, api_key="sk-options-0123456789", **options)


@pytest.mark.timeout(60)
def test_in_flight_limit_caps_open_requests(kernel):
    """With max_in_flight=2, 12 concurrent calls never have more than 2 requests open at the server."""
    with HostileServer(hostile.slow(0.05, hostile.reply(200, OK))) as server:
        llm = _llm(kernel, server, max_in_flight=2)

        async def many():
            return await asyncio.gather(*(llm.acomplete(f"call {i}") for i in range(12)))

        replies = asyncio.run(many())
    assert [r.text for r in replies] == ["fine"] * 12
    assert server.peak_open == 2 and len(server.requests) == 12


@pytest.mark.timeout(60)
def test_in_flight_limit_is_fair(kernel):
    """Calls past the limit go out in the order they were made (FIFO), none overtaking another."""
    with HostileServer(hostile.slow(0.01, hostile.reply(200, OK))) as server:
        llm = _llm(kernel, server, max_in_flight=1)

        async def many():
            tasks = []
            for i in range(8):
                tasks.append(asyncio.ensure_future(llm.acomplete(f"call {i}")))
                await asyncio.sleep(0)
            await asyncio.gather(*tasks)

        asyncio.run(many())
    order = [json.loads(r.body)["messages"][-1]["content"] for r in server.requests]
    assert order == [f"call {i}" for i in range(8)]


def test_in_flight_limit_defaults_to_the_pool_size():
    """max_in_flight follows max_connections unless given; 0 turns it off."""
    assert HttpConfig.from_options({}).in_flight == 100
    assert HttpConfig.from_options({"max_connections": 30}).in_flight == 30
    assert HttpConfig.from_options({"max_in_flight": 7}).in_flight == 7
    assert HttpConfig.from_options({"max_in_flight": 0}).in_flight == 0


def test_zagent_timeout_sets_the_timeout(monkeypatch):
    """ZAGENT_TIMEOUT (seconds) is the timeout when none is given; an explicit timeout= wins."""
    monkeypatch.setenv("ZAGENT_TIMEOUT", "300")
    config = HttpConfig.from_options({})
    assert config.read_timeout == 300 and config.connect_timeout == 10
    assert HttpConfig.from_options({"timeout": 5}).read_timeout == 5


@pytest.mark.parametrize("raw", ["soon", "-3", "0", "inf", "nan"])
def test_bad_zagent_timeout_is_a_config_error(monkeypatch, raw):
    """A ZAGENT_TIMEOUT that is not a positive number is refused, naming the variable and the value."""
    monkeypatch.setenv("ZAGENT_TIMEOUT", raw)
    with pytest.raises(ConfigError, match=f"ZAGENT_TIMEOUT must be a positive number of seconds, got '{raw}'"):
        HttpConfig.from_options({})


@pytest.mark.timeout(60)
def test_zagent_timeout_reaches_a_real_call(kernel, monkeypatch):
    """A hanging server times out after ZAGENT_TIMEOUT's read timeout, and the error names the variable."""
    monkeypatch.setenv("ZAGENT_TIMEOUT", "0.3")
    from zagent import ProviderTimeout

    with HostileServer(hostile.hang()) as server:
        with pytest.raises(ProviderTimeout, match="within 0.3 s.*ZAGENT_TIMEOUT"):
            _llm(kernel, server).complete("hi")


def test_http_module_env_switch(monkeypatch):
    """ZAGENT_HTTP_MODULE picks the module; without it httpx2 is used when installed, else httpx."""
    monkeypatch.setenv("ZAGENT_HTTP_MODULE", "httpx")
    assert default_http_module() == ("httpx", "ZAGENT_HTTP_MODULE")
    monkeypatch.delenv("ZAGENT_HTTP_MODULE")
    import importlib.util

    expected = "httpx2" if importlib.util.find_spec("httpx2") else "httpx"
    assert default_http_module() == (expected, "")


def test_http_module_env_naming_a_missing_module_is_refused(kernel, monkeypatch):
    """ZAGENT_HTTP_MODULE naming a module that is not installed is a ProviderConfigError saying what to install."""
    monkeypatch.setenv("ZAGENT_HTTP_MODULE", "no_such_http_module_xyz")
    llm = kernel.llm("openai:m", base_url="http://127.0.0.1:9/v1", api_key="x")
    with pytest.raises(ProviderConfigError, match="ZAGENT_HTTP_MODULE='no_such_http_module_xyz'.*zagent\\[httpx2\\]"):
        llm.complete("hi")


def test_httpx2_is_the_client_when_installed(kernel, monkeypatch):
    """With httpx2 installed (pip install 'zagent[httpx2]') a provider's client is an httpx2 client and works."""
    httpx2 = pytest.importorskip("httpx2")
    monkeypatch.delenv("ZAGENT_HTTP_MODULE", raising=False)
    with HostileServer(hostile.reply(200, OK)) as server:
        llm = _llm(kernel, server)

        async def call():
            text = (await llm.acomplete("hi")).text
            return text, llm.http.client()

        text, client = asyncio.run(call())
    assert text == "fine" and isinstance(client, httpx2.AsyncClient)
