"""Round nine: secrets leaking through provider servers' replies on paths earlier rounds did not try
(session round9, redteam leaks and untrusted servers). Each test is one attack on a real HTTP server on 127.0.0.1.

Got through before this round's fixes: an app's own ``client=`` with ``follow_redirects=True`` sent
``x-api-key`` and secret headers to the host a 307 named (now every request is sent ``follow_redirects=False``);
a 3xx read as a malformed reply (now a ``ProviderError`` naming the masked ``Location``); a key echoed
percent-encoded or base64-encoded (``Masker`` masks ``encoded_forms``); ``GET /models`` read whole (an endless
body, a gzip bomb peaking at 565 MiB, a trickle never ending: now streamed within 4 MiB and ``timeout`` for the
whole call), a non-listing's excerpt cut before it was masked; the CLI's traceback (``__cause__`` chain),
plugin warnings and log records quoting ``OPENAI_API_KEY``'s value or a URL password. Held: redirects not
followed by zagent's own client (call and listing), ``WWW-Authenticate`` and ``retry-after`` quoting the key, a
key split across stream chunks, a gzip-compressed error body.
"""

import asyncio
import base64
import gzip
import json
from urllib.parse import quote

import pytest

from zagent import Kernel, ProviderError, ZagentError
from tests.servers.hostile import HostileServer, trickle
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import chunk, sse

from .conftest import error_chain as chain

KEY = "sk-r9-SECRETKEY-0123456789abcdef"
B64KEY = "Zr9+SECRET/key=slash+plus/0123456789=="  # a key with ``+ / =`` (base64-like, as AWS and Azure keys are)
PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"]
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PROVIDERS, entry_points=False)
    yield kernel
    kernel.close()


def failure(llm, stream=False):
    with pytest.raises(ZagentError) as err:
        list(llm.stream("hi")) if stream else llm.complete("hi")
    return err.value


# -- redirects -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", NETWORK)
@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_to_another_host_does_not_carry_the_key(k, provider, status):
    """Attack: the provider answers 301/307/308 with ``Location`` on another host (whose URL also quotes the key).
    Defence: redirects are not followed, so the other host gets no request (no ``Authorization``/``x-api-key``
    sent there), and the error names no key."""
    with LoopbackServer(lambda r: Reply(status=200)) as thief:
        target = f"{thief.url}/steal?token={KEY}"
        with LoopbackServer(lambda r: Reply(status=status, headers={"location": target})) as server:
            err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0))
        assert thief.requests == []
    assert KEY not in chain(err)


@pytest.mark.parametrize("provider", ["openai:gpt-x", "ollama:llama"])
def test_a_redirect_of_the_model_listing_does_not_carry_the_key(k, provider):
    """Attack: ``GET /models`` (``zagent models``) answered by a 307 to another host. Defence: not followed; the
    other host sees no request and the error names no key."""
    with LoopbackServer(lambda r: Reply(status=200)) as thief:
        with LoopbackServer(lambda r: Reply(status=307, headers={"location": f"{thief.url}/x?key={KEY}"})) as server:
            llm = k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0)
            with pytest.raises(ZagentError) as err:
                asyncio.run(llm.llm.alist_models())
        assert thief.requests == []
    assert KEY not in chain(err.value)


@pytest.mark.parametrize("provider", ["anthropic:claude-x", "openai:gpt-x"])
def test_a_redirect_is_not_followed_with_the_apps_own_client(k, provider):
    """Attack: the app passes its own ``client=httpx.AsyncClient(follow_redirects=True)``; the provider redirects
    (307) to another host. httpx drops ``Authorization`` on a cross-host redirect but not ``x-api-key`` or a
    custom secret header. Defence: zagent's requests never follow redirects, whatever the client's default."""
    import httpx

    with LoopbackServer(lambda r: Reply(status=200)) as thief:
        with LoopbackServer(lambda r: Reply(status=307, headers={"location": f"{thief.url}/v1/messages"})) as server:
            client = httpx.AsyncClient(base_url=server.url, follow_redirects=True)
            failure(k.llm(provider, base_url=server.url, api_key=KEY, client=client, max_retries=0,
                          headers={"X-Upstream-Token": "up-SECRET-r9-445566"}))
        assert thief.requests == []


@pytest.mark.parametrize("stream", [False, True])
def test_a_redirect_says_what_happened(k, stream):
    """A 307 is not a reply: the error (of a call or a stream) says the server redirected (to the masked
    location) and that redirects are not followed, so the user knows to fix ``base_url``."""
    location = f"http://elsewhere.example/v1?api-key={KEY}"
    with LoopbackServer(lambda r: Reply(status=307, headers={"location": location})) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0), stream=stream)
    assert "redirect" in str(err).lower() and "elsewhere.example" in str(err) and "base_url" in str(err)
    assert KEY not in chain(err)


# -- a key echoed in headers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", NETWORK)
def test_a_key_in_www_authenticate_is_not_shown(k, provider):
    """Attack: a 401 with an empty body whose ``WWW-Authenticate`` header quotes the key it got. Defence: the
    ``AuthenticationError`` says the key was rejected, without it."""
    def answer(request):
        return Reply(status=401, headers={"www-authenticate": f'Bearer realm="api", error="invalid_token {KEY}"'})

    with LoopbackServer(answer) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0))
    assert "401" in str(err) and KEY not in chain(err)


def test_a_key_as_the_retry_after_value_is_not_shown(k):
    """Attack: a 429 whose ``retry-after`` header is the key. Defence: an unreadable hint is ignored; the
    ``RateLimitError`` names no key (and no ``retry_after`` value)."""
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "slow"}}, 429, headers={"retry-after": KEY})) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=KEY, max_retries=0))
    assert "429" in str(err) and KEY not in chain(err) and err.retry_after is None


# -- a key echoed encoded --------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", NETWORK)
def test_a_key_echoed_percent_encoded_is_masked(k, provider):
    """Attack: a key with ``+ / =`` echoed percent-encoded (``Zr9%2BSECRET%2Fkey%3D...``), as a server quoting
    the request URL or a form body does. Defence: the client's masker knows the encoded form too."""
    echoed = quote(B64KEY, safe="")
    with LoopbackServer(lambda r: Reply.json({"error": {"message": f"bad key={echoed}"}}, 400)) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=B64KEY, max_retries=0))
    assert "bad key=" in str(err)
    assert echoed not in chain(err) and B64KEY not in chain(err)


@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_key_echoed_base64_encoded_is_masked(k, encode):
    """Attack: a debugging proxy echoing the key base64-encoded (``b64(key)``, also URL-safe). Defence: masked
    like the key itself."""
    echoed = encode(KEY.encode()).decode()
    with LoopbackServer(lambda r: Reply.json({"error": {"message": f"token digest {echoed} refused"}}, 403)) as s:
        err = failure(k.llm("openai:gpt-x", base_url=s.url, api_key=KEY, max_retries=0))
    assert "refused" in str(err) and echoed.rstrip("=") not in chain(err)


def test_a_key_split_across_stream_chunks_in_an_error_event_is_masked(k):
    """Attack: a mid-stream error event quoting the key, sent in 3-byte HTTP chunks (the key never whole in one
    chunk). Defence: lines are joined before they are read, and the error masks the key."""
    event = sse({"error": {"message": f"key {KEY} was revoked", "type": "server_error"}})
    body = chunk({"role": "assistant", "content": "hel"}) + event
    pieces = [body[i:i + 3] for i in range(0, len(body), 3)]
    with LoopbackServer(lambda r: Reply(chunks=pieces, content_type="text/event-stream")) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0), stream=True)
    assert "revoked" in str(err) and KEY not in chain(err)


def test_a_key_echoed_gzip_compressed_in_an_error_is_masked(k):
    """Attack: a 400 whose body is gzip-compressed (``Content-Encoding: gzip``) and quotes the key. Defence: the
    error body is decoded before it is masked (not shown as bytes, not shown with the key)."""
    body = gzip.compress(json.dumps({"error": {"message": f"bad {KEY}"}}).encode())
    with LoopbackServer(lambda r: Reply(status=400, body=body, headers={"content-encoding": "gzip"})) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert "bad ***" in str(err) and KEY not in chain(err)


# -- the model listing: bounded like a model call -------------------------------------------------------------


def _listing(k, url, **options):
    llm = k.llm("openai:gpt-x", base_url=url, api_key=KEY, max_retries=0, **options)
    return llm.llm


def test_an_endless_model_listing_is_cut_at_its_limit(k):
    """Attack: ``GET /models`` answered by a body that never ends (chunked, no length). Defence: the listing is
    read within its limit (4 MiB): ``ResponseTooLarge``, not a process filling its memory."""
    from zagent.errors import ResponseTooLarge
    from tests.servers.hostile import endless_body

    with HostileServer(endless_body()) as server:
        with pytest.raises(ResponseTooLarge) as err:
            asyncio.run(_listing(k, server.url).alist_models())
    assert "listing" in str(err.value)


def test_a_gzip_bomb_model_listing_is_refused_before_it_is_inflated(k):
    """Attack: ``GET /models`` answered by 256 MiB of zeros gzip-compressed twice (a few KiB on the wire).
    Defence: the body is inflated step by step within the listing's limit; the process never holds it whole."""
    import tracemalloc

    from zagent.errors import ResponseTooLarge
    from tests.servers.hostile import bomb, encoded

    with HostileServer(encoded(bomb(256 * 2**20), "gzip, gzip")) as server:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLarge):
                asyncio.run(_listing(k, server.url).alist_models())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 64 * 2**20


def test_a_model_listing_that_trickles_forever_ends(k):
    """Attack: ``GET /models`` answered one byte at a time, forever (each byte within the read timeout).
    Defence: the listing has a whole-call deadline (its ``timeout``), not only one between bytes."""
    from zagent.providerkit.listing import get_json

    with HostileServer(trickle(0.05)) as server:
        with pytest.raises(ProviderError) as err:
            asyncio.run(get_json(_listing(k, server.url).http, "/models", timeout=0.5))
    assert "0.5" in str(err.value)


# -- the CLI's stderr: exception chains, plugin warnings, log records ---------------------------------------------

ENV_KEY = "sk-env-r9-SECRET-5566778899"
DB_URL = "postgres://app:dbpass-r9-SECRET@db.internal/app"


class _Crashing:
    """A plugin whose command fails with a library's error chain quoting a secret environment value and a URL
    with a password (as a database driver does), and whose logger warns with the same text."""

    def zagent_register_commands(self, cli, kernel):
        import logging

        def boom(args, kernel):
            logging.getLogger("zagent.r9").warning("retrying %s with key %s", DB_URL, ENV_KEY)
            try:
                raise ConnectionError(f"cannot connect to {DB_URL} (auth {ENV_KEY})")
            except ConnectionError as exc:
                raise RuntimeError("the store is down") from exc

        cli.command("boom", boom, help="fail")


class _BrokenCommands:
    def zagent_register_commands(self, cli, kernel):
        raise ValueError(f"bad config {DB_URL} token={ENV_KEY}")


@pytest.mark.parametrize("plugin", [_Crashing, _BrokenCommands])
def test_the_cli_prints_no_secret_from_an_exception_chain_a_warning_or_a_log(monkeypatch, capsys, plugin):
    """Attack: a command (a plugin's, or a library under it) fails with an unexpected exception whose chain
    (``__cause__``) quotes ``OPENAI_API_KEY``'s value and a database URL with a password; a plugin that cannot add
    its commands says the same; a warning is logged with them. Defence: the CLI prints the traceback, the
    warnings and the log records with secret environment values and URL passwords masked."""
    from zagent.plugins import cli

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setattr(cli, "start_kernel", lambda argv: Kernel(plugins=[plugin()], entry_points=False))
    code = cli.main(["boom"])
    err = capsys.readouterr().err
    assert code != 0 and ("the store is down" in err or "failed to add its commands" in err)
    assert ENV_KEY not in err and "dbpass-r9-SECRET" not in err


def test_a_key_where_a_non_listings_excerpt_is_cut_is_not_shown_in_part(k):
    """Attack: ``GET /models`` answers JSON that is not a listing, quoting the key where the error's 200-character
    excerpt ends. Defence: the reply is masked before it is cut, so no head of the key is shown."""
    with LoopbackServer(lambda r: Reply.json({"note": "y" * 170 + KEY})) as server:
        with pytest.raises(ProviderError) as err:
            asyncio.run(_listing(k, server.url).alist_models())
    assert "yyyy" in str(err.value) and KEY[:9] not in chain(err.value)
