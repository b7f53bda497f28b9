"""Round seven: secrets and hostile output leaking through the paths earlier rounds did not try.

Attacks tried (session round7, redteam leaks) and whether they got through before this module's fixes:

- an Anthropic server answering ``{"type": "error", "error": {"type": <the x-api-key it got>}}``, in a JSON reply
  and as a stream's ``error`` event: GOT THROUGH (the error's ``type`` went into the ``ProviderError`` unmasked;
  only its ``message`` was) -- fixed: ``AnthropicLLM._error`` masks the type too
- a server answering the model listing (``GET /models``, ``zagent models``) with JSON that is not a listing and
  echoes the ``Authorization`` header: GOT THROUGH (``names`` quoted the reply raw in its error, which
  ``zagent models`` printed as the status) -- fixed: ``providerkit.listing.names`` masks with the client's secrets
  (model ids echoing the key too)
- ``record:fallback:openai:...`` (a recorded fallback chain) whose server echoes the key in its reply:
  GOT THROUGH (the recorder masked with the wrapped model's client, and a chain has none) -- fixed: the recorder
  masks with the secrets of every model inside the one it wraps
- ``record:`` of a call whose options hold ``private_key``, ``credentials`` or ``passphrase``: GOT THROUGH (the
  recorder's own key pattern knew ``api_key``, ``token``, ``secret``... only) -- fixed: it also masks what
  ``looks_secret`` names (which now knows ``passphrase``); ``client_secret`` and ``X-Api-Key-2``: held
- a spec's ``llm_config.headers`` naming ``X-Authentication``, ``X-Custom-Auth-Header`` or ``X-Api-Keys``:
  GOT THROUGH (providers mask such headers when a server echoes them, but ``public_data`` kept them in
  ``to_dict``/``save`` and the spec's repr) -- fixed: in a ``headers`` mapping ``public_data`` (and the run log's
  ``scrub``) use the providers' header rule, ``looks_secret_header``
- a spec's ``llm_config.extra_body`` holding a key of its own (``{"provider": {"api_key": ...}}``, a router's
  bring-your-own-key), echoed by a server's HTTP 400, for openai, openai-responses, anthropic and ollama:
  GOT THROUGH (the client masked its API key, headers and URL only) -- fixed: ``network_options`` gives the client
  the secret values of the request fields (``providerkit.masking.option_secrets``)
- a tool raising an exception quoting a database URL's password (``postgres://alice:pw@db``): GOT THROUGH (into
  the tool result the model reads, the ``tool_end`` event and the run log) -- fixed: ``describe`` masks URL
  userinfo (as does the ``error`` of a failed call's ``llm_end``)
- a tool raising an exception quoting ``OPENAI_API_KEY``: GOT THROUGH -- fixed (a round later): the kernel's
  ``describe`` masks secret environment values (the secret-name rule and ``Masker`` are the core's trust layer again)
- an HTTP error message with line breaks (``bad\\nzagent: warning: ...``): GOT THROUGH (the ``ProviderError``
  carried it, and ``zagent run`` printed a line of its own that reads like zagent's) -- fixed: ``HttpClient.redact``
  puts server text on one line
- a spec's ``fallback:`` chain whose first model name holds a line break and a fake ``zagent:`` line, that model
  down: GOT THROUGH (the fallback warning, and the error quoting the chain's failures, printed the fake line on
  the CLI's stderr) -- fixed: the CLI's log handler indents every line of a record after the first, and its
  ``zagent: error:`` line every line after the first that starts at the margin (``clierrors.error_text``)
- an MCP tool answering ``isError`` with text quoting the secret of its ``env``: GOT THROUGH (the error the
  model, events and run log got was not scrubbed, unlike every other MCP error) -- fixed: the runtime scrubs it
- mid-stream error events echoing the key (OpenAI ``error`` chunk, Responses ``response.failed``, Ollama's
  ``{"error"}`` line, Anthropic's ``error`` event message): held
- ``zagent models`` against a server listing model ids with terminal escapes: held (printed escaped)
"""

import json
import logging
import os
import sqlite3

import hypothesis
import pytest
from hypothesis import strategies as st

from zagent import Kernel, ProviderError
from zagent.plugins.cli import main
from tests.servers.anthropic_server import event
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import chunk, completion, sse

from .conftest import agent_spec, run_cli, zagent_mcp_module

KEY = "sk-r7-SECRETKEY-0123456789abcdef"
PROVIDERS = ["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama", "zagent.plugins.offline",
             "zagent.plugins.fallback", "zagent.plugins.parsers", "zagent.plugins.actions"]


@pytest.fixture
def k():
    kernel = Kernel(plugins=PROVIDERS, entry_points=False)
    yield kernel
    kernel.close()


def shown(err):
    return f"{err} {err!r} {err.body}"


# -- provider errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_error_type_echoing_the_key_is_masked(k, stream):
    """Anthropic's error ``type`` (a JSON reply's, a stream's ``error`` event's) is the server's text: it echoes
    the ``x-api-key`` it got, and the ProviderError shows ``***`` instead."""
    def answer(request):
        error = {"type": "error", "error": {"type": request.headers.get("x-api-key"), "message": "no"}}
        if stream:
            return Reply(chunks=[event("error", error)], content_type="text/event-stream")
        return Reply.json(error)

    with LoopbackServer(answer) as server:
        llm = k.llm("anthropic:claude-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            list(llm.stream("hi")) if stream else llm.complete("hi")
    assert "reported ***: no" in str(err.value) and KEY not in shown(err.value)


@pytest.mark.parametrize("provider", ["openai:gpt-x", "ollama:llama"])
def test_a_model_listing_echoing_the_key_is_masked(k, provider):
    """A server answering ``GET /models`` with JSON that is no listing, echoing the Authorization header: the
    ProviderError quoting the reply shows no key."""
    import asyncio

    with LoopbackServer(lambda r: Reply.json({"echo": r.headers.get("authorization")})) as server:
        llm = k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            asyncio.run(llm.llm.alist_models())
    assert "model listing without" in str(err.value) and "Bearer ***" in str(err.value)
    assert KEY not in shown(err.value)


def test_zagent_models_shows_no_key_a_server_echoes(monkeypatch, capsys):
    """``zagent models --json`` against a server that echoes the key, as a model id and in a reply that is no
    listing: neither the ids nor the status holds the key."""
    replies = iter([Reply.json({"data": [{"id": "m1"}, {"id": "echo " + "Bearer " + KEY}]})])

    def answer(request):
        return next(replies, Reply.json({"echo": request.headers.get("authorization")}))

    with LoopbackServer(answer) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        for _ in range(2):
            k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.cli"], entry_points=False)
            try:
                assert main(["models", "--json"], kernel=k) == 0
            finally:
                k.close()
    out = capsys.readouterr().out
    assert "echo Bearer ***" in out and "model listing without" in out and KEY not in out


@pytest.mark.parametrize("provider", ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"])
def test_a_key_in_extra_body_echoed_in_an_error_is_masked(k, provider):
    """``extra_body={"provider": {"api_key": ...}}`` (a router's own key for the upstream) sent to a server whose
    HTTP 400 repeats the request body: the ProviderError masks that key too."""
    byok = "byok-SECRET-99887766"
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "bad body: " + r.body.decode()}}, 400)) as server:
        llm = k.llm(provider, base_url=server.url, api_key=KEY, max_retries=0,
                    extra_body={"provider": {"api_key": byok, "order": ["a"]}})
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert '"order"' in str(err.value)  # the echo is there...
    assert byok not in shown(err.value) and KEY not in shown(err.value)  # ...without the secrets
    assert byok in server.requests[0].body.decode()  # and the key was really sent


def test_a_server_error_with_line_breaks_stays_one_line(k):
    """An HTTP 400 whose message holds line breaks: the ProviderError is one line (no fake log line)."""
    message = "bad\nzagent: warning: tool 'steal' approved\r\nINFO all good\u2028done"
    with LoopbackServer(lambda r: Reply.json({"error": {"message": message}}, 400)) as server:
        with pytest.raises(ProviderError) as err:
            k.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0).complete("hi")
    assert "bad zagent: warning: tool 'steal' approved" in str(err.value)
    assert len(str(err.value).splitlines()) == 1 and len(err.value.body.splitlines()) == 1


def test_zagent_run_prints_no_fake_line_from_a_server_error(tmp_path):
    """``zagent run`` of an agent whose server answers HTTP 400 with a message holding line breaks: stderr has
    no line the server wrote (each line is zagent's own)."""
    fake = "zagent: warning: tool 'steal' was approved by the user"
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "bad\n" + fake}}, 400)) as server:
        path = tmp_path / "agent.json"
        path.write_text(json.dumps(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY,
                                                          "base_url": server.url, "max_retries": 0})))
        done = run_cli("run", str(path), "-i", "question=why", plugins="openai,parsers,actions,react,cli")
    assert done.returncode == 1 and "HTTP 400" in done.stderr
    assert not any(line.startswith(fake) for line in done.stderr.splitlines())


def test_a_fallback_model_name_cannot_fake_a_cli_line(tmp_path):
    """A spec's ``fallback:`` chain whose first model's name carries a line break and a fake ``zagent:`` line,
    that model down (HTTP 503): the CLI's warning about it keeps the fake text on an indented line."""
    fake = "zagent: warning: tool 'steal' was approved by the user"
    with LoopbackServer(lambda r: Reply.json({"error": {"message": "down"}}, 503)) as server:
        path = tmp_path / "agent.json"
        spec = agent_spec(llm=f"fallback:openai:a\n{fake},openai:b",
                          llm_config={"api_key": KEY, "base_url": server.url, "max_retries": 0})
        path.write_text(json.dumps(spec))
        done = run_cli("run", str(path), "-i", "question=why",
                       plugins="openai,fallback,parsers,actions,react,cli")
    assert done.returncode == 1 and "fallback: openai:a" in done.stderr  # the warning was printed...
    assert not any(line.startswith(fake) for line in done.stderr.splitlines())  # ...its second line indented


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "ollama", "anthropic"])
def test_a_mid_stream_error_echoing_the_key_is_masked(k, provider):
    """Each provider's in-stream error (OpenAI's ``error`` chunk, Responses' ``response.failed``, Ollama's
    ``{"error"}`` line, Anthropic's ``error`` event) echoing the key it got: masked (held)."""
    def answer(request):
        said = "leaked " + (request.headers.get("authorization") or request.headers.get("x-api-key") or "")
        if provider == "openai":
            return Reply(chunks=[chunk({"content": "a"}), sse({"error": {"message": said}})],
                         content_type="text/event-stream")
        if provider == "openai-responses":
            failed = {"type": "response.failed", "response": {"status": "failed", "output": [],
                                                              "error": {"code": "x", "message": said}}}
            return Reply(chunks=[b"event: response.failed\ndata: " + json.dumps(failed).encode() + b"\n\n"],
                         content_type="text/event-stream")
        if provider == "ollama":
            return Reply(chunks=[json.dumps({"error": said}).encode() + b"\n"], content_type="application/x-ndjson")
        return Reply(chunks=[event("error", {"type": "error", "error": {"type": "api_error", "message": said}})],
                     content_type="text/event-stream")

    with LoopbackServer(answer) as server:
        llm = k.llm(f"{provider}:m", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            list(llm.stream("hi"))
    assert "leaked" in str(err.value) and KEY not in shown(err.value)


# -- record files --------------------------------------------------------------------------------------------------


def test_a_recorded_fallback_chain_masks_echoed_keys(k, tmp_path):
    """``record:fallback:openai:...`` whose server echoes the Authorization header in its reply: the record
    file holds no key (the program still gets the reply as sent)."""
    path = tmp_path / "run.jsonl"
    with LoopbackServer(lambda r: completion("echo " + r.headers.get("authorization", ""))) as server:
        llm = k.llm("record:fallback:openai:gpt-x", path=str(path), base_url=server.url, api_key=KEY, max_retries=0)
        assert KEY in llm.complete("hi").message.content
    text = path.read_text()
    assert "echo Bearer ***" in text and KEY not in text


@pytest.mark.parametrize("name", ["private_key", "credentials", "passphrase", "client_secret", "X-Api-Key-2"])
def test_a_recorded_calls_credentials_are_masked(k, tmp_path, name):
    """A call's own options holding a credential under ``name``: the record file masks it."""
    path = tmp_path / "run.jsonl"
    value = "CRED-secret-55443322"
    with LoopbackServer(lambda r: completion("ok")) as server:
        llm = k.llm("record:openai:gpt-x", path=str(path), base_url=server.url, api_key=KEY, max_retries=0)
        llm.complete("hi", extra_body={"provider": {name: value, "order": ["a"]}})
    text = path.read_text()
    assert '"order"' in text and value not in text


# -- saved specs ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["X-Authentication", "X-Custom-Auth-Header", "X-Api-Keys", "X-Passphrase"])
def test_a_spec_header_the_providers_mask_is_not_saved(k, tmp_path, header):
    """A header whose value providers mask when a server echoes it (its name says auth, key, token, secret,
    cookie or password) is not in the agent's ``to_dict``, its saved file or its spec's repr."""
    value = "HDR-secret-value-4242"
    agent = k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "api_key": KEY,
                                           "base_url": "http://127.0.0.1:9/v1",
                                           "headers": {header: value, "X-Trace": "trace-is-public"}}))
    path = tmp_path / "saved.json"
    agent.save(str(path))
    for text in (json.dumps(agent.to_dict()), path.read_text(), repr(agent.spec)):
        assert "trace-is-public" in text and value not in text and KEY not in text


def test_the_run_log_scrubs_auth_named_headers():
    """The run log's ``scrub`` masks a header mapping's ``X-Authentication`` as providers do."""
    from zagent.plugins.runlog.scrub import scrub

    data = scrub({"options": {"extra_headers": {"X-Authentication": "HDR-secret-1", "Accept": "json"}}})
    assert data == {"options": {"extra_headers": {"X-Authentication": "***", "Accept": "json"}}}


# -- tool errors ---------------------------------------------------------------------------------------------------


class _Events:
    """A plugin keeping every event's data as JSON."""

    def __init__(self):
        self.seen = []

    def zagent_event(self, event):
        self.seen.append(json.dumps(dict(event.data), default=repr))


def _failing_tool_run(tmp_path, message):
    """``(result, events, run log rows)`` of a tool raising ``RuntimeError(message())``, with a run log."""
    db = str(tmp_path / "logs.db")
    events = _Events()
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.runlog"], entry_points=False,
               config={"log": {"path": db}})
    k.add_plugin(events, name="spy")

    def connect(dsn: str) -> str:
        """Connect to a database."""
        raise RuntimeError(message())

    k.add_tool(connect)
    try:
        result = k.run_tool({"name": "connect", "arguments": {"dsn": "x"}})
    finally:
        k.close()
    rows = [str(d) for (d,) in sqlite3.connect(db).execute("SELECT data FROM run_spans").fetchall()]
    return result, events.seen, rows


def test_a_tool_exception_quoting_a_url_password_is_masked(tmp_path):
    """A tool raising ``RuntimeError`` that quotes a database URL with a password (a failing client names its
    URL): the result the model reads, the ``tool_end`` event and the run log show ``***@`` instead."""
    result, events, rows = _failing_tool_run(tmp_path, lambda: "cannot reach postgres://alice:hunter22@db:5432/x")
    assert "cannot reach postgres://***@db:5432/x" in result.content
    assert events and rows
    for text in (result.content, result.error, *events, *rows):
        assert "hunter22" not in text and "alice" not in text


def test_a_tool_exception_quoting_the_api_key_is_masked(tmp_path, monkeypatch):
    """A tool raising ``RuntimeError`` that quotes ``OPENAI_API_KEY`` (a client of its own failing): the result
    the model reads, the ``tool_end`` event and the run log show no key."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result, events, rows = _failing_tool_run(tmp_path, lambda: f"auth {os.environ['OPENAI_API_KEY']} refused")
    for text in (result.content, result.error, *events, *rows):
        assert KEY not in text
    assert "auth *** refused" in result.content


def test_a_tool_exception_keeps_environment_values_that_are_not_secrets(tmp_path, monkeypatch):
    """A tool error quoting a value of ``PWD`` or of a variable whose name is not secret (``DB_HOST``) keeps it: the
    environment masking is by the secret-name rule, not every variable."""
    monkeypatch.setenv("DB_HOST", "db-primary.internal")
    monkeypatch.setenv("PWD", "/srv/app/current")
    result, _, _ = _failing_tool_run(tmp_path, lambda: "cannot reach db-primary.internal from /srv/app/current")
    assert "cannot reach db-primary.internal from /srv/app/current" in result.content


# -- MCP -----------------------------------------------------------------------------------------------------------


@pytest.fixture
def mcp_runtime(monkeypatch):
    """``zagent_mcp.runtime``, installed or next to this repository's kernel (``conftest.zagent_mcp_module``)."""
    yield from zagent_mcp_module(monkeypatch, "runtime")


def test_an_mcp_is_error_result_quoting_the_servers_env_secret_is_scrubbed(mcp_runtime):
    """An MCP tool answering ``isError`` with text that quotes the ``env`` secret it was started with: the
    error the model gets is scrubbed, as every other MCP error is."""
    import asyncio

    from zagent_mcp.config import load_settings
    from zagent_mcp.results import McpToolError

    token = "literal-token-778899"
    settings = load_settings({"mcpServers": {"db": {"command": "srv", "env": {"DB_TOKEN": token}}}}, environ={},
                             env_file=False, strict=True)
    runtime = mcp_runtime.McpRuntime(settings)
    conn = runtime.connections["db"]

    async def call(tool, arguments, retry_safe):
        return {"isError": True, "content": [{"type": "text", "text": f"login refused for token {token}"}]}

    conn.call = call
    tool = runtime._make_tool(conn, {"name": "query", "inputSchema": {"type": "object", "properties": {}}}, set())
    try:
        with pytest.raises(McpToolError) as err:
            asyncio.run(tool.handler())
    finally:
        runtime.close()
    assert str(err.value) == "login refused for token ***"


# -- terminal ------------------------------------------------------------------------------------------------------


def test_zagent_models_prints_hostile_model_ids_escaped():
    """``zagent models`` against a server listing model ids with a clipboard write, a conceal and a bidi
    override: the raw output holds none of them (held)."""
    hostile = "m\x1b]52;c;Y3VybCBldmlsLnNo\x07\x1b[8mHIDDEN\u202e"
    with LoopbackServer(lambda r: Reply.json({"data": [{"id": hostile}]})) as server:
        done = run_cli("models", plugins="openai,cli", env={"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": KEY})
    assert done.returncode == 0 and "HIDDEN" in done.stdout
    assert "\x1b" not in done.stdout + done.stderr and "\u202e" not in done.stdout and "\x07" not in done.stdout


def test_cli_log_records_keep_continuation_lines_indented():
    """The CLI's log formatter indents a record's lines after the first that start at the margin, as the CLI's
    error lines are (``clierrors.indented``: one rule for both)."""
    from zagent.plugins.cli import _OneRecord

    record = logging.LogRecord("zagent", logging.WARNING, __file__, 1, "model %s failed", ("a\nzagent: error: x",),
                               None)
    assert _OneRecord("zagent: warning: %(message)s").format(record) == \
        "zagent: warning: model a\n  zagent: error: x failed"


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.text(alphabet=st.sampled_from(["a", " ", "z", ":", "\n", "\r", "\x0b", "\x85", "\u2028"]),
                          max_size=30))
def test_cli_indented_leaves_no_line_at_the_margin_after_the_first(text):
    """``clierrors.indented``: whatever line breaks a server's or spec's text holds (``\\r``, ``\\u2028``...),
    every printed line after the first starts with a space or is empty, and no character but the breaks is lost."""
    from zagent.plugins.clierrors import indented

    first, *rest = indented(text).split("\n")
    assert all(not line or line[0].isspace() for line in rest)
    assert all(not any(ch in line for ch in "\r\x0b\x85\u2028") for line in [first, *rest])
    assert "".join(indented(text).split()) == "".join(text.split())
