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


def test_base_url_with_a_subpath_and_a_query_keeps_the_query_after_the_path():
    """A base URL with a subpath and a query string (Azure's ``?api-version=``) gets each path before the query,
    on the first request and on every later one (httpx, appending the path to the whole base URL, would put the
    path inside the query)."""
    with _echo_server() as server:
        base = f"http://127.0.0.1:{server.port}/openai/deployments/d?api-version=2024-06-01"
        http = HttpClient.build("openai", base, {}, api_key=Secret("k"))
        expected = "/openai/deployments/d/chat/completions?api-version=2024-06-01"
        assert _targets(server, http) == [expected, expected]


def test_users_client_without_base_url_keeps_the_query_after_the_path():
    """With a user's client that has no base URL, a query of the provider's base URL also follows the path."""
    with _echo_server() as server:
        base = f"http://127.0.0.1:{server.port}/v1?api-version=1"
        http = HttpClient.build("openai", base, {"client": httpx.AsyncClient()}, api_key=Secret("k"))
        assert _targets(server, http) == ["/v1/chat/completions?api-version=1"] * 2


def test_a_model_listing_keeps_the_query_after_the_path():
    """``GET /models`` under a base URL with a query goes to the path with the query after it."""
    from zagent.providerkit.listing import get_json

    with LoopbackServer(lambda request: Reply.json({"data": []})) as server:
        http = HttpClient.build("openai", f"http://127.0.0.1:{server.port}/v1?api-version=1", {}, api_key=Secret("k"))

        async def go():
            try:
                return await get_json(http, "/models")
            finally:
                await http.aclose()

        assert asyncio.run(go()) == {"data": []}
        assert [r.path for r in server.requests] == ["/v1/models?api-version=1"]


def test_a_key_in_the_base_urls_query_is_masked_when_a_server_echoes_it():
    """A key given as ``?key=`` is a secret of the client: a server's error quoting it shows ``***``, and so does
    the client's repr."""
    import pytest

    from zagent import ProviderError

    with LoopbackServer(lambda request: Reply.json({"error": {"message": "bad key AIzaSyTESTKEY0123456789"}},
                                                   status=400)) as server:
        http = HttpClient.build("openai", f"http://127.0.0.1:{server.port}/v1?key=AIzaSyTESTKEY0123456789", {},
                                api_key=Secret("k"))

        async def go():
            try:
                await http.post("/chat/completions", b"{}")
            finally:
                await http.aclose()

        with pytest.raises(ProviderError) as caught:
            asyncio.run(go())
        assert "AIzaSyTESTKEY0123456789" not in str(caught.value) and "AIzaSy" not in repr(http)
        assert "key=***" in repr(http)
        assert server.requests[0].path == "/v1/chat/completions?key=AIzaSyTESTKEY0123456789"


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
