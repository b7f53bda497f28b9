"""A client of an ``http://`` base URL loads no CA bundle; every other client keeps httpx's full verification.

httpx loads the whole CA bundle into every client it builds; a client of a local ``http://`` model never
speaks TLS, so zagent gives it an SSL context that trusts nothing (any handshake fails closed). The checks
read the context httpx's pool holds.
"""

from __future__ import annotations

import asyncio
import ssl

import pytest

from tests.servers import openai_server

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _context(llm) -> ssl.SSLContext:
    return llm.http.client()._transport._pool._ssl_context


def test_a_plain_http_client_loads_no_certificates_and_still_works(kernel):
    """An http:// LLM's client holds a context with no CA at all, verification on, and its calls work."""
    with openai_server.OpenAIServer(key="sk-test") as server:
        llm = kernel.llm("openai:m", base_url=server.url, api_key="sk-test")

        async def go():
            reply = await llm.acomplete("hi")
            return reply.text, _context(llm)

        text, context = asyncio.run(go())
    assert text == "echo: hi"
    assert context.cert_store_stats()["x509_ca"] == 0
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_an_https_client_keeps_full_verification(kernel):
    """An https:// LLM's client holds httpx's default context, the CA bundle loaded."""
    llm = kernel.llm("openai:m", base_url="https://api.example.invalid/v1", api_key="sk-test")

    async def go():
        return _context(llm)

    context = asyncio.run(go())
    assert context.cert_store_stats()["x509_ca"] > 0 and context.verify_mode == ssl.CERT_REQUIRED


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "all_proxy"])
def test_a_proxy_in_the_environment_keeps_full_verification(kernel, monkeypatch, variable):
    """With a proxy in the environment (which may be an https:// one) an http:// client verifies as httpx does."""
    monkeypatch.setenv(variable, "https://127.0.0.1:9")
    llm = kernel.llm("openai:m", base_url="http://127.0.0.1:9/v1", api_key="sk-test")

    async def go():
        return _context(llm)

    assert asyncio.run(go()).cert_store_stats()["x509_ca"] > 0
