"""Round eight: secrets leaking through paths earlier rounds did not try (session round8, redteam leaks).

Attacks tried, and whether they got through before this module's fixes:

- a key in the base URL's query (``/v1?key=...``, ``?api-key=...``): GOT THROUGH (model reprs, connection and
  HTTP errors, a server echoing the request path, ``to_dict``/``save``/spec repr, ``llm_start``'s ``server``, the
  run log, ``zagent models``) -- fixed: ``mask_userinfo`` also masks query parameters named like a credential,
  ``url_secrets`` gives their values to the client's ``Masker``
- httpx's own ``HTTP Request: POST <url>`` log line for a URL with a password or a query key: GOT THROUGH --
  fixed: the client puts a filter on the HTTP module's logger that masks the URLs it logs
- a key (or secret header) pasted with a non-ASCII character (a no-break space), also with the app's own
  ``client=``: GOT THROUGH (httpx's ``UnicodeEncodeError`` carried the whole header value in its args and repr)
  -- fixed: a ``ProviderConfigError`` naming the header and the character, not the value, raised with no context
- ``Authorization: Basic ...`` whose server echoes the decoded ``user:password``: GOT THROUGH -- fixed:
  ``header_secrets`` decodes a Basic credential
- a server's error message, a malformed reply, a web page answering a stream and a 200 without choices, each
  quoting the key where its excerpt is cut (500 / 200 characters): GOT THROUGH (the head of the key stayed: cut
  first, masked after) -- fixed: ``server_message(..., redact=)`` and ``malformed`` mask first, cut after
- ``record:`` of a server at ``/v1?key=...`` echoing the path, and ``zagent run`` of a file with such a base URL
  and its server down: GOT THROUGH -- fixed with the query masking above
- an MCP HTTP server's ``Authorization: Bearer <token>`` echoed bare in its error: GOT THROUGH -- fixed: the
  server's scrub masks what ``header_secrets`` finds in its headers
- an MCP stdio server given a literal ``--api-key VALUE`` / ``--password=VALUE``: GOT THROUGH (its target, repr
  and ``zagent mcp`` listing) -- fixed: the value after a secret-named flag is scrubbed
- a spec's ``llm_config.headers`` as ``[[name, value]]`` pairs (the client takes them as a mapping): GOT THROUGH
  (``public_data`` kept lists as they were) -- fixed: in a headers setting it drops pairs with a secret name
- a key with a trailing newline (read from a file): held (httpx's ``Illegal header value`` is masked)
"""

import base64
import json
import logging
import sqlite3

import pytest

from zagent import Kernel, ProviderError, ZagentError, mask_userinfo
from zagent.plugins.cli import main
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion

from .conftest import agent_spec, error_chain as chain, run_cli, zagent_mcp_module

KEY = "sk-r8-SECRETKEY-0123456789abcdef"
QKEY = "qk-SECRET-4455667788"
PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama", "zagent.plugins.offline",
             "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PROVIDERS, entry_points=False)
    yield kernel
    kernel.close()


# -- a key in the base URL's query -----------------------------------------------------------------------------


def test_mask_userinfo_masks_credential_query_parameters_only():
    """``?key=``, ``&api-key=``, ``&access_token=``, ``&sig=`` in a URL are masked; ``api-version``, ``page``,
    ``monkey`` and text outside URLs are not (no false positives)."""
    text = ("see http://h/v1?key=abc123&api-version=2024-10-21&page=2 and https://h/x?monkey=banana&api-key=zz9"
            "&access_token=t0k&sig=s1g and plain key=value")
    assert mask_userinfo(text) == (
        "see http://h/v1?key=***&api-version=2024-10-21&page=2 and https://h/x?monkey=banana&api-key=***"
        "&access_token=***&sig=*** and plain key=value")


@pytest.mark.parametrize("provider", NETWORK)
def test_a_query_key_in_base_url_is_not_in_the_models_repr(k, provider):
    """``base_url='http://host/v1?key=...'`` (a proxy taking its key in the query): the model's and the
    provider's reprs show ``key=***``."""
    llm = k.llm(provider, base_url=f"http://127.0.0.1:9/v1?key={QKEY}", api_key=KEY)
    shown = repr(llm) + repr(llm.llm) + repr(llm.llm.http)
    assert "127.0.0.1:9/v1?key=***" in shown and QKEY not in shown


@pytest.mark.parametrize("provider", NETWORK)
def test_a_query_key_in_base_url_is_masked_in_a_connection_error(k, provider):
    """Nothing listens at the URL: the ``ProviderError`` naming the URL shows ``api-key=***``."""
    llm = k.llm(provider, base_url=f"http://127.0.0.1:9/v1?api-key={QKEY}", api_key=KEY, max_retries=0)
    with pytest.raises(ProviderError) as err:
        llm.complete("hi")
    assert "api-key=***" in str(err.value) and QKEY not in chain(err.value)


@pytest.mark.parametrize("provider", NETWORK)
def test_a_query_key_echoed_in_the_request_path_is_masked(k, provider):
    """A server answering HTTP 400 with the path it got (which carries the query key): masked."""
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "no route " + r.path}}, 400)) as server:
        llm = k.llm(provider, base_url=f"{server.url}/v1?key={QKEY}", api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "no route" in str(err.value) and QKEY not in chain(err.value)
    assert QKEY in server.requests[0].path  # the key was really sent


def test_a_recording_of_a_query_key_server_masks_it(k, tmp_path):
    """``record:openai:...`` against ``/v1?key=...`` whose server echoes the path in its reply: the record file
    shows no key (the program still gets the reply as sent)."""
    path = tmp_path / "run.jsonl"
    with LoopbackServer(lambda r: completion("you asked " + r.path)) as server:
        llm = k.llm("record:openai:gpt-x", path=str(path), base_url=f"{server.url}/v1?key={QKEY}", api_key=KEY,
                    max_retries=0)
        assert QKEY in llm.complete("hi").message.content
    text = path.read_text()
    assert "you asked" in text and QKEY not in text and KEY not in text


def test_zagent_run_prints_no_query_key(tmp_path):
    """``zagent run`` of an agent file whose ``base_url`` carries ``?key=`` and whose server is down: stderr
    says what failed, with ``key=***``."""
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY, "max_retries": 0,
                                                      "base_url": f"http://127.0.0.1:9/v1?key={QKEY}"})))
    done = run_cli("run", str(path), "-i", "question=why", plugins="openai,parsers,actions,react,cli")
    assert done.returncode == 1 and "key=***" in done.stderr
    assert QKEY not in done.stderr + done.stdout and KEY not in done.stderr + done.stdout


def test_a_spec_base_url_query_key_is_not_saved_or_shown(k, tmp_path):
    """A spec's ``llm_config.base_url`` with ``?key=``: not in ``to_dict``, the saved file or the spec's repr
    (an ordinary parameter stays)."""
    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY,
                                           "base_url": f"http://127.0.0.1:9/v1?key={QKEY}&region=eu"}))
    path = tmp_path / "saved.json"
    agent.save(str(path))
    for text in (json.dumps(agent.to_dict()), path.read_text(), repr(agent.spec), repr(agent)):
        assert "region=eu" in text and QKEY not in text and KEY not in text


def test_spec_headers_as_name_value_pairs_are_not_saved_or_shown(k, tmp_path):
    """``llm_config.headers`` written as ``[["Authorization", "Bearer ..."]]`` (the HTTP client takes pairs as
    a mapping): the secret pair is not in ``to_dict``, the saved file or the spec's repr; a public one stays."""
    token = "hdr-SECRET-31415926"
    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY, "base_url": "http://127.0.0.1:9/v1",
                                           "headers": [["Authorization", f"Bearer {token}"], ["X-Trace", "t-public"]]}))
    assert agent.llm.llm.http.headers["Authorization"].reveal() == f"Bearer {token}"  # the pairs are used...
    path = tmp_path / "saved.json"
    agent.save(str(path))
    for text in (json.dumps(agent.to_dict()), path.read_text(), repr(agent.spec)):
        assert "t-public" in text and token not in text  # ...and not saved


class _Events:
    def __init__(self):
        self.seen = []

    def zagent_event(self, event):
        self.seen.append(json.dumps(dict(event.data), default=repr))


def test_a_query_key_is_not_in_events_or_the_run_log(tmp_path):
    """One agent run against ``/v1?key=...``: ``llm_start``'s ``server`` and the run log show ``key=***``."""
    db = str(tmp_path / "logs.db")
    k = Kernel(plugins=[*PROVIDERS, "zagent.plugins.runlog"], entry_points=False, config={"log": {"path": db}})
    events = _Events()
    k.add_plugin(events, name="spy")
    try:
        with LoopbackServer(lambda r: completion("fine")) as server:
            agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY, "max_retries": 0,
                                                   "base_url": f"{server.url}/v1?key={QKEY}"}))
            agent(question="why")
    finally:
        k.close()
    rows = [str(d) for (d,) in sqlite3.connect(db).execute("SELECT data FROM run_spans").fetchall()]
    assert any("/v1?key=***" in e for e in events.seen)
    for text in (*events.seen, *rows):
        assert QKEY not in text


@pytest.mark.parametrize("args", [["models", "--no-check"], ["models", "--no-check", "--json"]])
def test_zagent_models_shows_no_query_key(monkeypatch, capsys, args):
    """``OPENAI_BASE_URL=http://host/v1?key=...``: ``zagent models`` (table and JSON) shows the server
    without the key."""
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:9/v1?key={QKEY}")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.cli"], entry_points=False)
    try:
        assert main(args, kernel=k) == 0
    finally:
        k.close()
    out = capsys.readouterr()
    assert "127.0.0.1:9/v1?key=***" in out.out and QKEY not in out.out + out.err and KEY not in out.out


# -- httpx's own log -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["userinfo", "query"])
def test_the_http_modules_request_log_shows_no_credentials(k, caplog, where):
    """An app logging at INFO (``logging.basicConfig(level=INFO)``): httpx's ``HTTP Request: POST <url>`` line
    for a base URL with a password, or a query key, shows ``***`` instead."""
    secret = "hunter2pass99"
    with LoopbackServer(lambda r: completion("ok")) as server:
        url = (server.url.replace("http://", f"http://alice:{secret}@") if where == "userinfo"
               else f"{server.url}/v1?token={secret}")
        with caplog.at_level(logging.INFO):
            key = {"api_key": KEY} if where == "query" else {}  # with userinfo, the URL's Basic credentials are sent
            k.llm("openai:gpt-x", base_url=url, max_retries=0, **key).complete("hi")
    assert "HTTP Request: POST" in caplog.text  # the line is there...
    assert secret not in caplog.text and KEY not in caplog.text  # ...without the credential


# -- keys the HTTP module refuses ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai:gpt-x", "anthropic:claude-x"])
@pytest.mark.parametrize("where", ["api_key", "header"])
def test_a_key_with_a_non_ascii_character_is_not_in_the_error(k, provider, where):
    """A key pasted with a no-break space (``\\xa0``), as api_key or as a secret header: the error is a
    ``ZagentError`` saying which header and character, and neither it nor its chain holds the key."""
    bad = KEY + "\xa0"
    options = {"api_key": bad} if where == "api_key" else {"api_key": "x", "headers": {"X-Api-Key": bad}}
    llm = k.llm(provider, base_url="http://127.0.0.1:9", max_retries=0, **options)  # refused before connecting
    with pytest.raises(ZagentError) as err:
        llm.complete("hi")
    assert "U+00A0" in str(err.value)
    assert KEY not in chain(err.value)


def test_a_key_with_a_non_ascii_character_and_the_users_client_is_not_in_the_error(k):
    """The same key with the app's own ``client=httpx.AsyncClient(...)`` (zagent's headers go with each request):
    a ``ZagentError`` without the key."""
    import httpx

    client = httpx.AsyncClient(base_url="http://127.0.0.1:9")
    llm = k.llm("openai:gpt-x", base_url="http://127.0.0.1:9", api_key=KEY + "\xa0", client=client, max_retries=0)
    with pytest.raises(ZagentError) as err:
        llm.complete("hi")
    assert "U+00A0" in str(err.value) and KEY not in chain(err.value)


def test_a_key_with_a_trailing_newline_is_masked(k):
    """A key read from a file with its line break: httpx refuses the header value, and the error masks it
    (held)."""
    with LoopbackServer(lambda r: completion("ok")) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY + "\n", max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "Illegal header value" in str(err.value) and KEY not in chain(err.value)


# -- echoes the masker did not know ------------------------------------------------------------------------------


def test_a_basic_credential_echoed_decoded_is_masked(k):
    """``headers={"Authorization": "Basic <base64 of alice:pw>"}``, a server answering 401 with the decoded
    ``alice:password``: masked (the user name alone is no secret)."""
    basic = base64.b64encode(b"alice:hunter2-basic-77").decode()

    def answer(request):
        pair = base64.b64decode(request.headers["authorization"].split()[1]).decode()
        return Reply.json({"error": {"message": f"bad credentials {pair} for user alice"}}, 401)

    with LoopbackServer(answer) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, headers={"Authorization": "Basic " + basic}, max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "for user alice" in str(err.value)
    assert "hunter2-basic-77" not in chain(err.value)


def test_a_key_cut_by_the_error_excerpt_is_masked(k):
    """A server message whose 500-character excerpt ends inside the key: the head of the key is not shown."""
    message = "x" * 490 + " " + KEY + " tail"
    with LoopbackServer(lambda r: Reply.json({"error": {"message": message}}, 400)) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "xxxx" in str(err.value) and KEY[:9] not in chain(err.value)


def test_a_key_cut_by_a_malformed_replys_excerpt_is_masked(k):
    """A 200 that is not JSON, quoting the key where its 200-character excerpt ends: not shown in part."""
    body = ("<html>" + "y" * 185 + KEY + "</html>").encode()
    with LoopbackServer(lambda r: Reply(body=body)) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "yyyy" in str(err.value) and KEY[:9] not in chain(err.value)


@pytest.mark.parametrize("reply", ["html-to-a-stream", "no-choices"])
def test_a_key_cut_by_other_excerpts_is_masked(k, reply):
    """A streamed request answered with a web page, and a 200 without choices whose error message is long:
    each excerpt (200 and 500 characters) ends inside the key, and no head of it is shown."""
    if reply == "html-to-a-stream":
        answer = Reply(body=("<html>" + "y" * 185 + KEY + "</html>").encode(), content_type="text/html")
    else:
        answer = Reply.json({"error": {"message": "y" * 490 + " " + KEY}})
    with LoopbackServer(lambda r: answer) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            list(llm.stream("hi")) if reply == "html-to-a-stream" else llm.complete("hi")
    assert "yyyy" in str(err.value) and KEY[:9] not in chain(err.value)


# -- MCP servers ---------------------------------------------------------------------------------------------------


@pytest.fixture
def mcp_config(monkeypatch):
    """``zagent_mcp.config``, installed or next to this repository's kernel (``conftest.zagent_mcp_module``)."""
    yield from zagent_mcp_module(monkeypatch, "config")


def _server(mcp_config, spec):
    settings = mcp_config.load_settings({"mcpServers": {"s": spec}}, environ={}, env_file=False, strict=True)
    return settings.servers["s"]


def test_an_mcp_bearer_token_echoed_bare_is_scrubbed(mcp_config):
    """An MCP HTTP server configured with ``Authorization: Bearer <token>`` whose error quotes the token alone:
    scrubbed, as the providers mask a bearer token."""
    token = "ghp-SECRET-1234567890"
    server = _server(mcp_config, {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": f"Bearer {token}"}})
    assert server.scrub(f"invalid token {token} for this repo") == "invalid token *** for this repo"


@pytest.mark.parametrize("args", [["--api-key", "lit-SECRET-987654"], ["--password=lit-SECRET-987654"],
                                  ["--token", "lit-SECRET-987654"]])
def test_an_mcp_literal_key_in_args_is_not_shown(mcp_config, args):
    """A stdio server started with a literal key after a secret-named flag: its target, its repr and its
    scrubbed errors show ``***``; other arguments stay."""
    server = _server(mcp_config, {"command": "db-server", "args": ["--verbose", *args]})
    for text in (server.target, repr(server), server.scrub("login failed for lit-SECRET-987654")):
        assert "lit-SECRET-987654" not in text
    assert "db-server --verbose" in server.target
