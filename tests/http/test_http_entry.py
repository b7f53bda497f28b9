"""Pool entry one request at a time (``zagent.providerkit.entry``): no fail-overs in httpcore's pool, no serialization.

The wide-burst tests send real requests through httpx and httpcore to a
loopback OpenAI server and count httpcore's fail-overs (a request handed a
connection another request took first goes round the pool again:
``AsyncPoolRequest.clear_connection``). No test asserts a duration.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from httpcore._async.connection_pool import AsyncPoolRequest

from tests.servers import openai_server
from zagent.providerkit import HttpClient
from zagent.providerkit import clients as clients_module
from zagent.providerkit.entry import Claim, guard_for
from zagent._trust.secrets import Secret

BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'


def _http(url: str, **options) -> HttpClient:
    """zagent's own client on httpx (the guard is about httpcore's pool: httpx2, when installed, is left out)."""
    return HttpClient.build("openai", url, {"http_module": "httpx", **options}, api_key=Secret("sk-test"))


@pytest.fixture
def failovers(monkeypatch):
    """How many times httpcore's pool sent a request round again because its connection was taken."""
    count = [0]
    original = AsyncPoolRequest.clear_connection

    def counted(self):
        count[0] += 1
        return original(self)

    monkeypatch.setattr(AsyncPoolRequest, "clear_connection", counted)
    return count


async def _burst(http: HttpClient, n: int) -> list[bytes]:
    replies = await asyncio.gather(*(http.post("/chat/completions", BODY) for _ in range(n)))
    return [r.content for r in replies]


@pytest.mark.timeout(120)
def test_a_wide_burst_never_fails_over_in_the_pool(failovers, monkeypatch):
    """300 concurrent posts through zagent's own client: every one answered, none sent round the pool twice.

    The same burst with the guard switched off shows the instrument sees fail-overs (httpcore hands one
    idle connection to every request that arrives before the first of them starts using it)."""
    async def go(guarded: bool):
        if not guarded:
            monkeypatch.setattr(clients_module, "guard_for", lambda mod, client: None)
        with openai_server.OpenAIServer(key="sk-test") as server:
            http = _http(server.url)
            try:
                await _burst(http, 20)  # connections opened
                before = failovers[0]
                bodies = await _burst(http, 300)
                return bodies, failovers[0] - before
            finally:
                await http.aclose()

    bodies, guarded_failovers = asyncio.run(go(True))
    assert len(bodies) == 300 and all(b"echo: hi" in b for b in bodies)
    assert guarded_failovers == 0
    _, unguarded_failovers = asyncio.run(go(False))
    assert unguarded_failovers > 0


def test_zagent_and_plain_user_clients_are_guarded_others_are_not():
    """The guard applies to an httpx.AsyncClient over httpx's transport and httpcore's pool, not to a mock
    transport, proxies, or a module other than httpx."""
    async def go():
        own = httpx.AsyncClient()
        mocked = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(200)))
        proxied = httpx.AsyncClient(mounts={"http://": httpx.AsyncHTTPTransport(proxy="http://127.0.0.1:9")})
        try:
            return [guard_for(httpx, c) is not None for c in (own, mocked, proxied)], guard_for(object(), own)
        finally:
            for c in (own, mocked, proxied):
                await c.aclose()

    kinds, other_module = asyncio.run(go())
    assert kinds == [True, False, False]
    assert other_module is None


def test_an_http2_client_is_not_guarded():
    """A client whose pool may speak HTTP/2 is left as it is (a request may wait, untraced, for a stream)."""
    async def go():
        client = httpx.AsyncClient()
        client._transport._pool._http2 = True  # as httpx.AsyncClient(http2=True) sets it (that needs h2 installed)
        try:
            return guard_for(httpx, client)
        finally:
            await client.aclose()

    assert asyncio.run(go()) is None


def _gathering_transport(n: int):
    """A mock transport whose handler answers only once ``n`` requests are inside it at the same time."""
    inside = [0]
    everyone = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        inside[0] += 1
        if inside[0] >= n:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 10)
        return httpx.Response(200, json={"ok": True})

    return httpx.MockTransport(handler)


@pytest.mark.timeout(60)
def test_an_unguarded_user_transport_runs_requests_side_by_side():
    """Requests through a user's own transport (no trace events) are all in flight at once, not one by one."""
    async def go():
        user = httpx.AsyncClient(transport=_gathering_transport(8))
        http = HttpClient.build("openai", "http://127.0.0.1:9/v1", {"client": user})
        try:
            return await _burst(http, 8)
        finally:
            await user.aclose()

    assert asyncio.run(go()) == [b'{"ok":true}'] * 8


@pytest.mark.timeout(60)
def test_a_guarded_client_whose_pool_never_traces_is_unguarded_after_one_request(monkeypatch):
    """If a request gets through a guarded client without one trace event, later requests are not serialized."""
    monkeypatch.setattr(clients_module, "guard_for", lambda mod, client: asyncio.Lock())

    async def go():
        user = httpx.AsyncClient(transport=_gathering_transport(1))
        http = HttpClient.build("openai", "http://127.0.0.1:9/v1", {"client": user})
        try:
            await http.post("/chat/completions", BODY)  # held the entry for its whole exchange: no event came
            user._transport = _gathering_transport(8)
            return await _burst(http, 8)
        finally:
            await user.aclose()

    assert asyncio.run(go()) == [b'{"ok":true}'] * 8


@pytest.mark.timeout(60)
def test_refused_connections_give_the_entry_back():
    """Concurrent posts to a port nobody listens on all fail with a transport error; none waits forever."""
    async def go():
        http = _http("http://127.0.0.1:9/v1", max_retries=0)
        try:
            return await asyncio.gather(*(http.post("/chat/completions", BODY) for _ in range(5)),
                                        return_exceptions=True)
        finally:
            await http.aclose()

    errors = asyncio.run(go())
    assert len(errors) == 5 and all("connect" in str(e).lower() for e in errors), errors


def test_a_claim_gives_the_entry_back_once_at_its_first_event():
    """The first trace event releases the lock and removes the extension; later events and finish() do nothing."""
    async def go():
        lock = asyncio.Lock()
        await lock.acquire()
        extensions: dict = {"timeout": {}}
        claim = Claim(lock, extensions)
        traced = extensions.get("trace") is claim
        await claim("connection.connect_tcp.started", {})
        after_first = (lock.locked(), "trace" in extensions)
        await claim("connection.connect_tcp.complete", {})
        return traced, after_first, lock.locked(), claim.finish()

    assert asyncio.run(go()) == (True, (False, False), False, False)


def test_a_claim_without_events_is_given_back_by_finish():
    """A request that ended before any pool event (an early error, a cancellation) releases the entry in finish()."""
    async def go():
        lock = asyncio.Lock()
        await lock.acquire()
        extensions: dict = {}
        claim = Claim(lock, extensions)
        return claim.finish(), lock.locked(), extensions, claim.finish()

    assert asyncio.run(go()) == (True, False, {}, False)


@pytest.mark.timeout(60)
def test_a_guarded_client_has_every_request_at_the_server_at_once():
    """The entry is held only until a request has its connection, never over the server's reply: a real server
    that answers only once 40 requests are inside it at the same time gets all 40 from one guarded client."""
    n = 40
    body = b'{"ok":true}'

    async def go():
        inside = [0]
        everyone = asyncio.Event()

        async def handle(reader, writer):
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length"))
                    await reader.readexactly(length)
                    inside[0] += 1
                    if inside[0] >= n:
                        everyone.set()
                    await asyncio.wait_for(everyone.wait(), 20)
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                                 % (len(body), body))
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                writer.close()  # the client went away, or the test ended (the server closed)

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        http = _http(f"http://127.0.0.1:{port}/v1")
        try:
            guarded = http._slot()[2] is not None
            return guarded, await _burst(http, n)
        finally:
            await http.aclose()
            server.close()

    guarded, bodies = asyncio.run(go())
    assert guarded and bodies == [body] * n
