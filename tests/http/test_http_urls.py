"""Request URLs: merged with the client's base URL once per path (httpx re-parses a relative URL on every
request), and still exactly the URL httpx itself would build, query strings and user clients included."""

from __future__ import annotations

import asyncio

import httpx

from tests.servers.loopback import LoopbackServer, Reply
from zagent import Secret
from zagent.providerkit import HttpClient


def _echo_server() -> LoopbackServer:
    return LoopbackServer(lambda request: Reply.json({"ok": True}))


def _targets(server, http: HttpClient, calls: int = 2) -> list[str]:
    async def go():
        for _ in range(calls):
            await http.post("/chat/completions", b"{}")
        await http.aclose()

    asyncio.run(go())
    return [r.path for r in server.requests]


def test_base_url_with_a_subpath_and_a_query_merges_as_httpx_does():
    """A base URL with a subpath and a query string is merged exactly as httpx merges it itself, on the
    first request and on every later one (the cache changes no URL)."""
    with _echo_server() as server:
        base = f"http://127.0.0.1:{server.port}/openai/deployments/d?api-version=2024-06-01"
        http = HttpClient.build("openai", base, {}, api_key=Secret("k"))
        expected = httpx.AsyncClient(base_url=base).build_request("POST", "/chat/completions").url.raw_path.decode()
        assert _targets(server, http) == [expected, expected]


def test_users_client_without_base_url_posts_absolute_urls():
    """With a user's client that has no base URL, requests go to the provider's base URL plus the path."""
    with _echo_server() as server:
        base = f"http://127.0.0.1:{server.port}/v1"
        http = HttpClient.build("openai", base, {"client": httpx.AsyncClient()}, api_key=Secret("k"))
        assert _targets(server, http) == ["/v1/chat/completions"] * 2


def test_users_client_with_params_sends_them_on_every_request():
    """A user's client with query ``params`` of its own has them merged into each request's URL."""
    with _echo_server() as server:
        base = f"http://127.0.0.1:{server.port}/v1"
        client = httpx.AsyncClient(base_url=base, params={"tenant": "a"})
        http = HttpClient.build("openai", base, {"client": client}, api_key=Secret("k"))
        assert _targets(server, http) == ["/v1/chat/completions?tenant=a"] * 2


def test_the_merged_url_is_reused_not_parsed_again():
    """From the second request on, the client is handed the merged ``httpx.URL`` (no string to parse)."""
    seen = []

    class Spy(httpx.AsyncClient):
        def build_request(self, method, url, **kw):
            seen.append(url)
            return super().build_request(method, url, **kw)

    with _echo_server() as server:
        http = HttpClient.build("openai", f"http://127.0.0.1:{server.port}/v1", {"client_factory": Spy},
                                api_key=Secret("k"))
        _targets(server, http, calls=3)
    assert seen[0] == "/chat/completions"  # merged once, by the client itself
    assert all(isinstance(u, httpx.URL) and u is seen[1] for u in seen[1:])
    assert str(seen[1]).endswith("/v1/chat/completions")
