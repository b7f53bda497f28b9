"""Round eleven, secrets and leaks (one attack per test: a real HTTP server on 127.0.0.1, a real stdio MCP server,
or what a log, run log, span, saved file or tool schema keeps).

Got through before this round: httpx's request line of a user's ``client=`` and httpcore's DEBUG lines quoting an
echoed key (also for an MCP server over HTTP); a key echoed cut short, upper-cased or inside base64 of the whole
``Authorization`` line; credential names in one word (``PGPASSWORD``, ``NGROK_AUTHTOKEN``); an MCP server's env
token in its name, tool descriptions and schemas, and in an error cut short; a credential a rail injected, quoted
by the tool's error; a batch's failed records; the run log and OTel spans keeping a secret environment value a
tool showed; a plugin problem; a saved workflow's inline ``api_key``; a tool's secret defaults in the schema the
model reads. Over-masking fixed: pagination cursors (``page_token``) are not secrets by name.
"""

import base64
import json
import logging

import pytest

from zagent import Kernel, ZagentError
from zagent.agentkit.secrets import looks_secret, public_data
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion

from .conftest import error_chain as chain, zagent_mcp_module

KEY = "sk-r11-SECRETKEY-0123456789abcdef"
PASSWORD = "pw-r11-Secret-998877"
QUERY_KEY = "qk-r11-ABCDEF1234567890"
HEADER_SECRET = "hdr-r11-SECRET-445566"
PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"]
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PROVIDERS, entry_points=False)
    yield kernel
    kernel.close()


def failure(llm):
    with pytest.raises(ZagentError) as err:
        llm.complete("hi")
    return err.value


def leaked(text, *secrets):
    return [s for s in secrets if s in text]


# -- an app's own logging of httpx and httpcore ------------------------------------------------------------------


def _echoing(request):
    """A reply whose headers quote every credential the request carried (a debugging proxy, a hostile server)."""
    reply = completion("hi")
    reply.headers = {"x-echo-auth": request.headers.get("authorization", ""),
                     "x-echo-key": request.headers.get("x-api-key", ""),
                     "x-echo-custom": request.headers.get("x-custom-token", "")}
    return reply


def test_the_httpx_request_line_of_a_users_own_client_hides_url_credentials(k, caplog):
    """Attack: the app passes its own ``client=httpx.AsyncClient()`` and logs at INFO (``logging.basicConfig``);
    the model URL carries ``alice:password@`` and ``?key=``. httpx logs ``HTTP Request: POST <url>``. Defence: the
    URL in that line is masked for a user's client too (not only for clients zagent makes)."""
    import httpx

    caplog.set_level(logging.INFO)
    with LoopbackServer(_echoing) as server:
        url = server.url.replace("http://", f"http://alice:{PASSWORD}@") + f"/v1?key={QUERY_KEY}"
        llm = k.llm("openai:gpt-x", base_url=url, client=httpx.AsyncClient(), max_retries=0)
        assert llm.complete("hi").text == "hi"
    assert "HTTP Request" in caplog.text
    assert leaked(caplog.text, PASSWORD, QUERY_KEY) == []


@pytest.mark.parametrize("provider", NETWORK)
def test_httpcore_debug_lines_hide_a_key_echoed_in_response_headers(k, caplog, provider):
    """Attack: the app logs at DEBUG; the server answers with headers quoting the ``Authorization``/``x-api-key``
    value and a secret custom header it got. httpcore logs every response header at DEBUG
    (``receive_response_headers.complete``). Defence: the client's known secrets are masked in httpcore's and
    httpx's log records."""
    caplog.set_level(logging.DEBUG)
    with LoopbackServer(_echoing) as server:
        llm = k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0,
                    headers={"X-Custom-Token": HEADER_SECRET})
        try:
            llm.complete("hi")
        except ZagentError:
            pass  # the reply's shape is openai's: other providers fail after the headers were logged
    assert "receive_response_headers" in caplog.text
    assert leaked(caplog.text, KEY, HEADER_SECRET) == []


def test_httpcore_debug_lines_hide_the_basic_credentials_of_the_url(k, caplog):
    """Attack: DEBUG logging; the URL's ``alice:password@`` becomes a Basic ``Authorization`` that the server
    echoes in a response header. Defence: the Basic value (base64 of ``alice:password``) is masked in the log."""
    caplog.set_level(logging.DEBUG)
    with LoopbackServer(_echoing) as server:
        url = server.url.replace("http://", f"http://alice:{PASSWORD}@") + "/v1"
        assert k.llm("openai:gpt-x", base_url=url, max_retries=0).complete("hi").text == "hi"
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert "receive_response_headers" in caplog.text
    assert leaked(caplog.text, PASSWORD, basic) == []


def test_httpcore_debug_lines_of_a_users_own_client_hide_an_echoed_key(k, caplog):
    """Attack: the app's own ``client=`` and DEBUG logging; the server echoes the key in a response header.
    Defence: masked as for zagent's own clients."""
    import httpx

    caplog.set_level(logging.DEBUG)
    with LoopbackServer(_echoing) as server:
        llm = k.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, client=httpx.AsyncClient(),
                    max_retries=0)
        assert llm.complete("hi").text == "hi"
    assert "receive_response_headers" in caplog.text
    assert KEY not in caplog.text


def test_log_masking_leaves_unrelated_records_alone(k, caplog):
    """The log filter masks credentials only: a record with no secret reads as httpx and httpcore wrote it."""
    caplog.set_level(logging.DEBUG)
    with LoopbackServer(lambda r: completion("hi")) as server:
        assert k.llm("openai:gpt-x", base_url=server.url + "/v1", api_key=KEY, max_retries=0).complete("hi").text == "hi"
    assert f'HTTP Request: POST {server.url}/v1/chat/completions "HTTP/1.1 200 OK"' in caplog.text
    assert "(b'content-type', b'application/json')" in caplog.text


# -- a key echoed in another form ---------------------------------------------------------------------------------


def _error_quoting(text):
    return lambda request: Reply.json({"error": {"message": text, "type": "invalid_request_error"}}, 401)


@pytest.mark.parametrize("provider", NETWORK)
def test_a_key_echoed_cut_short_is_masked(k, provider):
    """Attack: a 401 whose message quotes the key without its last characters (``Incorrect API key provided:
    sk-r11-SECRETKEY-0123456789a``): most of the key, which a plain masker of the whole value misses. Defence:
    a long run of the key's characters is masked."""
    echoed = KEY[:-5]
    with LoopbackServer(_error_quoting(f"Incorrect API key provided: {echoed}. Check it.")) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0))
    assert "Incorrect API key provided" in str(err)
    assert echoed not in chain(err)


@pytest.mark.parametrize("provider", NETWORK)
def test_a_key_echoed_upper_cased_is_masked(k, provider):
    """Attack: the server echoes the key upper-cased (round nine left it open). Defence: masked whatever its
    case."""
    with LoopbackServer(_error_quoting(f"KEY REJECTED: {KEY.upper()}")) as server:
        err = failure(k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0))
    assert "KEY REJECTED" in str(err)
    assert KEY.upper() not in chain(err)


@pytest.mark.parametrize("line", ["Bearer ", "Authorization: Bearer ", "x-api-key: "])
def test_a_key_echoed_in_base64_of_the_whole_header_line_is_masked(k, line):
    """Attack: a debugging proxy echoes base64 of the whole credential line (``Authorization: Bearer sk-...``):
    the key's base64 then starts at another offset than the key's own base64. Defence: every alignment is
    masked."""
    echoed = base64.b64encode((line + KEY).encode()).decode()
    with LoopbackServer(_error_quoting(f"proxy saw: {echoed}")) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert "proxy saw" in str(err)
    first, end = -(-len(line) // 3) * 4, (len(line) + len(KEY)) // 3 * 4  # the groups made of key bytes only
    assert echoed[first:end] not in chain(err)


def test_an_unrelated_token_in_an_error_is_kept(k):
    """What masking leaves alone: a server's own request id and a text sharing only a few characters (the key's
    ``sk-r11-`` prefix) stay readable."""
    with LoopbackServer(_error_quoting("bad key sk-r11-***cdef (request req_7f3a9c2b1d0e4f5a)")) as server:
        err = failure(k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0))
    assert "sk-r11-***cdef" in str(err) and "req_7f3a9c2b1d0e4f5a" in str(err)


# -- credential names written as one word ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PGPASSWORD", "NGROK_AUTHTOKEN", "db_accesskey", "clientsecret", "X-SecretKey",
                                  "MYSQLPASSWORD", "apitoken"])
def test_credential_names_written_as_one_word_look_secret(name):
    """Attack: a credential named in one word (PostgreSQL's ``PGPASSWORD``, ngrok's ``NGROK_AUTHTOKEN``) was not
    secret by name, so a tool error quoting its value (``env_secrets``), a saved spec or ``?authtoken=`` kept it.
    Defence: a last word ending in a credential word (``...password``, ``auth``/``access``/``api``...``token``
    or ``key``) is secret."""
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["monkey", "hockey", "turkey_count", "passwordless", "keyboard", "sort_key_order"])
def test_words_merely_containing_a_credential_word_are_not_secret(name):
    """Guard: ``monkey`` or ``passwordless`` are not secrets."""
    assert not looks_secret(name)


def test_a_tool_error_quoting_pgpassword_is_masked(monkeypatch):
    """Attack: a tool fails quoting the ``PGPASSWORD`` it read from the environment. Defence: the tool error sent
    to the model (and events) masks it, as it does ``OPENAI_API_KEY``."""
    monkeypatch.setenv("PGPASSWORD", "pg-r11-Secret-556677")

    def query(sql: str) -> str:
        """Run SQL."""
        raise RuntimeError("connect failed: password=pg-r11-Secret-556677 rejected")

    k = Kernel(entry_points=False)
    k.add_tool(query)
    result = k.run_tool({"name": "query", "arguments": {"sql": "select 1"}})
    k.close()
    assert "connect failed" in str(result.content)
    assert "pg-r11-Secret-556677" not in str(result.content)


def test_authtoken_in_a_url_query_is_masked():
    """Attack: a model URL ``?authtoken=...`` (one word) in reprs and errors. Defence: ``mask_userinfo`` masks it."""
    from zagent import mask_userinfo

    assert mask_userinfo(f"http://h/v1?authtoken={QUERY_KEY}&page=2") == "http://h/v1?authtoken=***&page=2"


# -- pagination cursors are not secrets --------------------------------------------------------------------------

CURSORS = ["page_token", "pageToken", "next_page_token", "nextPageToken", "NextToken", "continuation_token",
           "ContinuationToken", "pagination_token", "sync_token", "prev_page_token"]


@pytest.mark.parametrize("name", CURSORS)
def test_a_pagination_cursor_is_not_secret_by_name(name):
    """Over-masking: ``page_token`` (Google's ``pageToken``, AWS's ``NextToken``) is a cursor, not a credential;
    masking it hid which page a tool asked for in run logs and spans. Now it is not secret by name."""
    assert not looks_secret(name)


@pytest.mark.parametrize("name", ["token", "access_token", "refresh_token", "id_token", "auth_token", "csrf_token",
                                  "api_token", "session_token", "X-Auth-Token", "bearer_token", "page_key"])
def test_real_tokens_stay_secret(name):
    """Guard: the cursor rule weakens no real token: ``access_token``, ``X-Auth-Token``... stay secret."""
    assert looks_secret(name)


def test_the_run_log_keeps_a_tool_calls_page_token_and_masks_its_access_token():
    """The run log's ``scrub`` keeps a tool call's ``page_token`` and still masks its ``access_token``."""
    from zagent.plugins.runlog.scrub import scrub

    args = {"query": "cats", "page_token": "CURSOR-r11-abc123", "access_token": "at-r11-SECRET-778899"}
    assert scrub(args) == {"query": "cats", "page_token": "CURSOR-r11-abc123", "access_token": "***"}


def test_saved_settings_keep_a_page_token_and_drop_an_api_token():
    """``public_data`` (saved and shown specs) keeps ``page_token`` and drops ``api_token``."""
    assert public_data({"page_token": "c1", "api_token": "t-r11-SECRET"}) == {"page_token": "c1"}


def test_a_page_token_in_a_url_stays_and_an_access_token_is_masked():
    """``mask_userinfo`` keeps ``?pageToken=`` (a cursor) and masks ``&access_token=``."""
    from zagent import mask_userinfo

    assert (mask_userinfo("https://api.example/v1/items?pageToken=CUR123&access_token=at-r11-SECRET")
            == "https://api.example/v1/items?pageToken=CUR123&access_token=***")


def test_a_page_token_header_stays_masked():
    """Guard: in a mapping of HTTP headers the broader header rule applies (``X-Page-Token`` is masked): a header
    is where a credential travels."""
    assert public_data({"headers": {"X-Page-Token": "c1"}}) == {"headers": {}}


def test_json_dumps_of_the_scrubbed_arguments_is_plain():
    """The scrubbed arguments are plain JSON data (the run log stores them as JSON)."""
    from zagent.plugins.runlog.scrub import scrub

    assert json.loads(json.dumps(scrub({"page_token": "c", "password": "p" * 8}))) == {"page_token": "c",
                                                                                      "password": "***"}


# -- an MCP server over HTTP, logged by the app ------------------------------------------------------------------


@pytest.fixture
def mcp_plugin(monkeypatch):
    pytest.importorskip("mcp.client.streamable_http")  # the SDK (in the MCP venv)
    yield from zagent_mcp_module(monkeypatch, "plugin")


class _EchoingMcp:
    """A hostile "MCP server" on 127.0.0.1: every POST gets a 401 whose headers quote the credentials it got."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def _any(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(401)
                self.send_header("x-echo-key", self.headers.get("x-api-key", ""))
                self.send_header("x-echo-auth", self.headers.get("authorization", ""))
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _any

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("headers", [{"X-Api-Key": HEADER_SECRET}, {"Authorization": f"Bearer {HEADER_SECRET}"}])
def test_an_mcp_servers_credentials_are_masked_in_the_apps_http_logs(mcp_plugin, caplog, headers):
    """Attack: the app logs at DEBUG; an MCP server configured with a secret header and ``?api_key=`` in its URL
    echoes the header in its response headers. httpx logs the URL (INFO) and httpcore every response header
    (DEBUG), and no provider client may have put a filter there yet. Defence: the MCP connection masks its own
    secrets (and URL credentials) in those records."""
    caplog.set_level(logging.DEBUG)
    server = _EchoingMcp()
    try:
        k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, config={"mcp": {"mcpServers": {"web": {
            "url": f"{server.url}/mcp?api_key={QUERY_KEY}", "headers": headers, "connect_timeout": 10}}}})
        try:
            mcp_plugin.runtime_of(k).wait(None)
            status = mcp_plugin.runtime_of(k).status()[0]
        finally:
            k.close()
    finally:
        server.close()
    assert status["state"] == "failed"
    assert "receive_response_headers" in caplog.text
    assert leaked(caplog.text, HEADER_SECRET, QUERY_KEY) == []


def test_an_otel_span_keeps_a_page_token_and_masks_an_access_token():
    """OTel content capture (``zagent_otel.content.masked``) keeps a tool call's ``nextPageToken`` and masks its
    ``access_token`` and a known secret value."""
    content = pytest.importorskip("zagent_otel.content")

    assert content.masked({"nextPageToken": "CUR-1", "access_token": "at-r11-SECRET", "q": f"use {KEY}"}, [KEY]) == {
        "nextPageToken": "CUR-1", "access_token": "***", "q": "use ***"}


# -- a credential a rail puts into a tool call ---------------------------------------------------------------------

VAULT_TOKEN = "vault-r11-SECRET-0099887766"


class _InjectsCredential:
    """A rail filling ``api_token`` from the app's vault: the model never sees the credential."""

    def zagent_before_tool_call(self, call, ctx):
        from zagent import Rewrite

        if call.name == "deploy":
            return Rewrite({**call.arguments, "api_token": VAULT_TOKEN})
        return None


def test_a_tool_error_quoting_a_credential_a_rail_injected_is_masked():
    """Attack: a rail injects ``api_token`` from a vault into the call (the model never saw it); the tool fails
    quoting its arguments (``deploy failed: api_token=vault-...``). The error is the tool result the model reads,
    and the ``tool_end`` event's ``error``. Defence: the values of the call's secret-named arguments are masked in
    a tool's error."""
    events = []

    class Events:
        def zagent_event(self, event):
            if event.type == "tool_end":
                events.append(json.dumps(dict(event.data), default=str))

    def deploy(target: str, api_token: str = "") -> str:
        """Deploy."""
        raise RuntimeError(f"deploy failed: target={target} api_token={api_token}")

    k = Kernel(plugins=[_InjectsCredential(), Events()], entry_points=False)
    k.add_tool(deploy)
    try:
        result = k.run_tool({"name": "deploy", "arguments": {"target": "prod"}})
    finally:
        k.close()
    assert result.state == "error" and "deploy failed: target=prod" in str(result.content)
    assert VAULT_TOKEN not in str(result.content)
    assert events and not [e for e in events if VAULT_TOKEN in e]


LEAKY_TOKEN = "leaky-r11-TOKEN-5566778899"


def test_an_mcp_servers_env_secret_in_its_tool_listing_is_masked(mcp_plugin):
    """Attack: an MCP server quotes the token it was given in ``env`` in its name and version (``zagent mcp list``)
    and in its tool's description, input-schema title, a parameter's description, default and enum: all sent to
    the model with every call and shown by ``zagent tools``. Defence: the server's secrets are masked in what its tools offer (the tool still works)."""
    import sys
    from pathlib import Path

    server = {"command": sys.executable, "args": [str(Path(__file__).resolve().parent / "servers" / "leaky_mcp.py")],
              "env": {"LEAKY_API_TOKEN": LEAKY_TOKEN}, "connect_timeout": 120}
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, config={"mcp": {"mcpServers": {"db": server}}})
    try:
        mcp_plugin.runtime_of(k).wait(None)
        [tool] = [t for t in k.tools() if t.name == "db.query"]
        offered = json.dumps({"description": tool.description, "parameters": tool.parameters})
        result = k.run_tool({"name": "db.query", "arguments": {"sql": "select 1"}})
        [status] = mcp_plugin.runtime_of(k).status()
    finally:
        k.close()
    assert "Query the warehouse" in offered and "anonymous" in offered and "leaky for" in status["server"]
    assert leaked(offered + json.dumps(status), LEAKY_TOKEN) == []
    assert result.state == "success" and result.content == "ok"


def test_a_credential_a_rail_injected_stays_out_of_the_run_records(tmp_path):
    """Held: a rail injects ``api_token`` and a ``dsn`` with a password into a ReAct agent's call; the call
    succeeds. The next request to the model, the checkpoint, the trajectory and the run log never hold it (the
    conversation keeps the model's own arguments; the run log masks secret names and URL passwords)."""
    from tests.servers.loopback import LoopbackServer as Server

    class Inject:
        def zagent_before_tool_call(self, call, ctx):
            from zagent import Rewrite

            return Rewrite({**call.arguments, "api_token": VAULT_TOKEN, "dsn": f"postgres://app:{VAULT_TOKEN}@db/x"})

    def deploy(target: str, api_token: str = "", dsn: str = "") -> str:
        """Deploy."""
        return f"deployed {target}"

    bodies = []

    def answer(request):
        bodies.append(request.body.decode())
        if len(bodies) == 1:
            return completion(None, tool_calls=[{"id": "c1", "name": "deploy", "arguments": '{"target": "prod"}'}])
        return completion("done")

    plugins = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
               "zagent.plugins.memory", "zagent.plugins.runlog", Inject()]
    k = Kernel(plugins, entry_points=False, config={"log": str(tmp_path / "logs.db"), "spec_paths": [str(tmp_path)]})
    k.add_tool(deploy)
    try:
        with Server(answer) as server:
            agent = k.agent({"type": "react", "name": "ops", "tools": ["deploy"], "llm": "openai:gpt-x",
                             "llm_config": {"base_url": server.url, "api_key": KEY},
                             "trajectory_path": str(tmp_path / "t.jsonl"), "checkpoints": str(tmp_path / "cp.db")})
            agent.loop().run("deploy")
    finally:
        k.close()
    assert len(bodies) == 2 and "deployed prod" in bodies[1]
    assert not [b for b in bodies if VAULT_TOKEN in b]
    for path in tmp_path.iterdir():
        assert leaked(path.read_bytes().decode("utf-8", "replace"), VAULT_TOKEN, KEY) == [], path.name


def test_an_mcp_error_quoting_the_env_secret_cut_short_or_upper_cased_is_masked(mcp_plugin):
    """Attack: an MCP tool's ``isError`` text quotes the server's ``env`` token without its last characters and
    upper-cased. Defence: the server's scrub masks long runs of its secrets too (``mask_pieces``)."""
    import sys
    from pathlib import Path

    server = {"command": sys.executable, "args": [str(Path(__file__).resolve().parent / "servers" / "leaky_mcp.py")],
              "env": {"LEAKY_API_TOKEN": LEAKY_TOKEN}, "connect_timeout": 120}
    k = Kernel(plugins=["zagent_mcp.plugin"], entry_points=False, config={"mcp": {"mcpServers": {"db": server}}})
    try:
        mcp_plugin.runtime_of(k).wait(None)
        result = k.run_tool({"name": "db.fail", "arguments": {}})
    finally:
        k.close()
    assert result.state == "error" and "auth failed for" in str(result.content)
    assert leaked(str(result.content), LEAKY_TOKEN[:-4], LEAKY_TOKEN.upper()) == []


# -- a batch's failed records -------------------------------------------------------------------------------------


class _FailingAgent:
    """An agent whose failure quotes a URL password and a secret environment value (a library's message)."""

    name = "boom"

    async def aexecute(self, *, inputs, ctx=None):
        import os

        raise RuntimeError(f"db postgres://app:{PASSWORD}@db/x failed; key {os.environ['MY_SERVICE_API_KEY']}")


def test_a_batch_failure_quoting_secrets_is_masked_in_its_results_file(tmp_path, monkeypatch):
    """Attack: a batch item fails with an exception quoting a URL password and ``MY_SERVICE_API_KEY``'s value;
    the failed record goes to the ``out`` JSONL file (and to ``zagent eval``'s report, which reads it). Defence:
    the record's error message is masked as every event's error is (``error_excerpt``)."""
    monkeypatch.setenv("MY_SERVICE_API_KEY", "svc-r11-SECRET-112233")
    k = Kernel(["zagent.plugins.batch"], entry_points=False)
    try:
        k.batch(_FailingAgent(), [{"id": "a", "x": 1}], out=str(tmp_path / "out.jsonl"))
        report = k.batch(_FailingAgent(), [{"id": "b", "x": 1}])
    finally:
        k.close()
    written = (tmp_path / "out.jsonl").read_text()
    [record] = [json.loads(line) for line in written.splitlines()]
    assert record["ok"] is False and "db postgres://***@db/x failed" in record["error"]["message"]
    assert leaked(written + json.dumps(report.results, default=str), PASSWORD, "svc-r11-SECRET-112233") == []


# -- the run log and an environment secret a tool shows ------------------------------------------------------------


def test_the_run_log_masks_an_environment_secret_a_tool_returned(tmp_path, monkeypatch):
    """Attack: a debugging tool returns the process environment (``OPENAI_API_KEY=...``, also base64-encoded);
    the model repeats it in its answer. The run log (``logs.db``, shown by ``zagent logs show`` and its HTML
    page) kept the tool result, the next request's messages and the reply as they were, while OTel content
    capture masked them. Defence: the run log masks secret environment values (and their encoded forms) in what
    it keeps, as events and tool errors do."""
    import sqlite3

    from zagent.plugins.react import ReActLoop

    env_key = "sk-r11-ENVKEY-abcdef0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    encoded = base64.b64encode(env_key.encode()).decode()

    def show_env() -> str:
        """Show the environment."""
        return f"OPENAI_API_KEY={env_key} (b64 {encoded})"

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
                "zagent.plugins.runlog"], entry_points=False, config={"log": str(tmp_path / "logs.db")})
    k.add_tool(show_env)
    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "show_env", "arguments": {}}]},
                                       f"the key is {env_key}"])
    try:
        ReActLoop(kernel=k, llm=llm, tools=["show_env"], agent="helper").run("show me")
    finally:
        k.close()
    db = sqlite3.connect(tmp_path / "logs.db")
    rows = " ".join(repr(row) for table, in db.execute("select name from sqlite_master where type='table'")
                    for row in db.execute(f"select * from {table}"))
    db.close()
    assert "OPENAI_API_KEY=***" in rows
    assert leaked(rows, env_key, encoded.rstrip("=")) == []


def test_otel_content_capture_masks_environment_secrets_as_the_run_log_does(monkeypatch):
    """Attack: with OTel content capture on, the app loads its ``.env`` after the kernel started
    (``OPENAI_API_KEY`` set late), and a tool returns that key and its base64 form. The spans masked only the
    values set when the kernel started, and only as written. Defence: content is masked with the environment's
    secrets at the time, in every encoded form (``env_masker``)."""
    pytest.importorskip("zagent_otel")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    k = Kernel(["zagent.plugins.offline", "zagent_otel.plugin"], entry_points=False,
               config={"otel": {"tracer_provider": provider, "capture_content": True}})
    env_key = "sk-r11-LATEENV-abcdef0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    encoded = base64.b64encode(env_key.encode()).decode()

    def show_env() -> str:
        """Show the environment."""
        return f"OPENAI_API_KEY={env_key} b64={encoded}"

    k.add_tool(show_env)
    try:
        k.run_tool({"name": "show_env", "arguments": {}})
    finally:
        k.close()
        provider.shutdown()
    recorded = json.dumps([dict(s.attributes) for s in exporter.get_finished_spans()])
    assert "OPENAI_API_KEY=***" in recorded
    assert leaked(recorded, env_key, encoded.rstrip("=")) == []


# -- a plugin failing with a key in its message --------------------------------------------------------------------


def test_a_plugin_problem_quoting_an_environment_key_is_masked(tmp_path, monkeypatch, capsys, caplog):
    """Attack: an installed plugin fails at import with a library's message quoting ``OPENAI_API_KEY``'s value and
    a URL password (``Incorrect API key provided: sk-...``). ``kernel.problems``, its warning and ``zagent
    plugins`` (stdout, where only URL passwords were masked) showed the key. Defence: a plugin problem's text is
    masked like every error zagent shows."""
    from zagent.plugins.cli import main

    env_key = "sk-r11-PLUGINKEY-abcdef0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    (tmp_path / "r11_leaky_plugin.py").write_text(
        "import os\nraise RuntimeError('Incorrect API key provided: ' + os.environ['OPENAI_API_KEY']"
        f" + ' via http://bob:{PASSWORD}@proxy')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    k = Kernel(["zagent.plugins.cli", "r11_leaky_plugin"], entry_points=False, strict=False)
    try:
        [problem] = k.problems
        assert main(["plugins"], kernel=k) == 0
    finally:
        k.close()
    shown = capsys.readouterr().out
    assert "Incorrect API key provided" in problem.error and "r11_leaky_plugin" in shown
    assert leaked(problem.error + shown + caplog.text, env_key, PASSWORD) == []


# -- a saved workflow --------------------------------------------------------------------------------------------


def test_a_saved_workflow_drops_its_inline_agents_keys(tmp_path):
    """Attack: a workflow whose inline agent has its own ``api_key``, an ``X-Api-Key`` header and a URL password
    is saved (``WorkFlowGraph.save``, ``zagent workflow generate --output``) and shared. The file held them all,
    while a saved agent (``CustomizeAgent.save``) and the graph's repr drop them. Defence: a saved or printed graph
    is ``public_data`` (the key left out, the URL password masked); the rest round-trips."""
    from zagent.plugins.workflow import WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
         "agents": [{"name": "one", "prompt": "do {x}", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
                     "llm": "openai:gpt-x", "llm_config": {"api_key": KEY, "headers": {"X-Api-Key": HEADER_SECRET},
                                                           "base_url": f"http://u:{PASSWORD}@h/v1",
                                                           "temperature": 0.2}}]}],
        "edges": []})
    graph.save(tmp_path / "w.json")
    text = (tmp_path / "w.json").read_text()
    assert leaked(text + graph.to_json(), KEY, HEADER_SECRET, PASSWORD) == []
    saved = WorkFlowGraph.load(tmp_path / "w.json")
    [agent] = saved.nodes[0].agents
    assert agent["llm_config"] == {"headers": {}, "base_url": "http://***@h/v1", "temperature": 0.2}


def test_a_tool_error_quoting_an_environment_key_cut_short_or_upper_cased_is_masked(monkeypatch):
    """Attack: a tool's library fails quoting ``OPENAI_API_KEY`` without its last characters and upper-cased (a
    normalized copy). Defence: the tool error the model reads, and the ``tool_end`` event's ``error``, mask long
    runs of secret environment values too (``mask_env``)."""
    env_key = "sk-r11-ENVKEY-abcdef0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    events = []

    class Events:
        def zagent_event(self, event):
            if event.type == "tool_end":
                events.append(json.dumps(dict(event.data), default=str))

    def call_api(q: str) -> str:
        """Call the API."""
        raise RuntimeError(f"rejected key {env_key[:-4]}... (as {env_key.upper()})")

    k = Kernel(plugins=[Events()], entry_points=False)
    k.add_tool(call_api)
    try:
        result = k.run_tool({"name": "call_api", "arguments": {"q": "x"}})
    finally:
        k.close()
    shown = str(result.content) + " ".join(events)
    assert "rejected key" in str(result.content)
    assert leaked(shown, env_key[:-4], env_key.upper()) == []


# -- a tool's secret default in the schema the model reads -------------------------------------------------------


def test_a_tools_secret_defaults_are_not_offered_to_the_model(monkeypatch):
    """Attack: the app writes ``def search(q, api_key=os.environ["SERP_API_KEY"], dsn=os.environ["DATABASE_URL"],
    engine_token="tok-...")``. The tool's JSON schema, sent to the model provider with every call (and shown by
    ``zagent tools``), carried each default: the key, the database password, the token. Defence: a default held
    by a secret-named parameter, or quoting a secret environment value or a URL password, is left out of the
    schema; the parameter stays optional and the function's default still applies."""
    monkeypatch.setenv("SERP_API_KEY", "serp-r11-SECRET-0011223344")
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{PASSWORD}@db/x")
    import os

    def search(q: str, api_key: str = os.environ["SERP_API_KEY"], dsn: str = os.environ["DATABASE_URL"],
               engine_token: str = "tok-r11-SECRET-99887766", limit: int = 5, region: str = "eu") -> str:
        """Search the web."""
        return f"{q} {api_key[:4]} {dsn.split('@')[-1]} {engine_token[:3]} {limit} {region}"

    k = Kernel(entry_points=False)
    k.add_tool(search)
    try:
        [tool] = [t for t in k.tools() if t.name == "search"]
        offered = json.dumps(tool.parameters)
        result = k.run_tool({"name": "search", "arguments": {"q": "cats"}})
    finally:
        k.close()
    assert leaked(offered, "serp-r11-SECRET-0011223344", PASSWORD, "tok-r11-SECRET-99887766") == []
    props = tool.parameters["properties"]
    assert props["limit"]["default"] == 5 and props["region"]["default"] == "eu"
    assert set(props) == {"q", "api_key", "dsn", "engine_token", "limit", "region"}
    assert tool.parameters["required"] == ["q"]
    assert result.content == "cats serp db/x tok 5 eu"
