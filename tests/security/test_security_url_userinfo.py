"""Attack: a base URL carries a password (``http://alice:pw@proxy/v1``) and the server fails with HTTP 500.

The password must show nowhere a person or a log reads: the ``ProviderError`` (str, repr, body), the run log
(``zagent logs search``), events, the OTel span status and the CLI's stderr.
"""

import json
import sqlite3

import pytest

from zagent import ConfigError, Kernel, ProviderError
from zagent.plugins.cli import main
from zagent.agentkit.secrets import Masker, public_data
from tests.servers.loopback import LoopbackServer, Reply

from .conftest import run_cli

PASSWORD = "pw"


def failing(request):
    """An HTTP 500 whose message echoes the Authorization header httpx built from the userinfo."""
    return Reply.json({"error": {"message": "upstream broke; auth was " + request.headers.get("authorization", "")}},
                      500)


def with_userinfo(url):
    return url.replace("http://", f"http://alice:{PASSWORD}@") + "/v1"


@pytest.fixture
def server():
    with LoopbackServer(failing) as s:
        yield s


@pytest.fixture
def base_url_env(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", with_userinfo(server.url))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-the-point-0123456789")


def spec():
    return {"name": "Asker", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str",
            "llm_config": {"model": "openai:gpt-4o-mini", "max_retries": 0}}


def test_provider_error_hides_the_url_password(base_url_env, server):
    """str, repr and body of the ProviderError from OPENAI_BASE_URL=http://alice:pw@... hold no password."""
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
    try:
        with pytest.raises(ProviderError) as err:
            k.llm("openai:gpt-4o-mini", max_retries=0).complete("hi")
    finally:
        k.close()
    shown = f"{err.value} {err.value!r} {err.value.body}"
    assert "127.0.0.1" in shown and "alice" not in shown and f":{PASSWORD}@" not in shown
    assert PASSWORD not in shown.replace("127.0.0.1", "")
    assert server.requests[0].headers["authorization"].startswith("Basic ")  # the credential was really sent


def test_run_log_and_events_hide_the_url_password(base_url_env, tmp_path, capsys):
    """The failed run's log rows, its events, and 'zagent logs search pw' show no password."""
    db = str(tmp_path / "logs.db")
    events = []

    class Spy:
        def zagent_event(self, event):
            events.append(json.dumps(dict(event.data), default=repr))

    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.runlog"], entry_points=False, config={"log": {"path": db}})
    k.add_plugin(Spy(), name="spy")
    try:
        with pytest.raises(ProviderError):
            k.agent(spec())(question="why?")
    finally:
        k.close()
    assert events and not any(f":{PASSWORD}@" in e or "alice" in e for e in events)
    rows = sqlite3.connect(db).execute("SELECT * FROM run_spans").fetchall()
    dump = "\n".join(v.decode() if isinstance(v, bytes) else str(v) for row in rows for v in row)
    assert "HTTP 500" in dump and "alice" not in dump and f":{PASSWORD}@" not in dump
    k2 = Kernel(plugins=["zagent.plugins.runlog"], entry_points=False)
    try:
        assert main(["logs", "search", PASSWORD, "--db", db], kernel=k2) == 0
    finally:
        k2.close()
    assert capsys.readouterr().out.strip() == ""


def test_cli_stderr_hides_the_url_password(base_url_env, tmp_path):
    """'zagent run agent.json' against the failing server: the error on stderr names the server, not the password."""
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(spec()))
    done = run_cli("run", str(path), "-i", "question=why", plugins="openai,parsers,actions,react,cli")
    assert done.returncode != 0 and "HTTP 500" in done.stderr
    assert "alice" not in done.stderr and f":{PASSWORD}@" not in done.stderr and "Basic " + "YWxp" not in done.stderr


def test_otel_span_status_hides_the_url_password(base_url_env):
    """With zagent-otel tracing, the failed LLM span's status description holds no password."""
    pytest.importorskip("zagent_otel")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent_otel.plugin"], entry_points=False, config={"otel": {"tracer_provider": provider}})
    try:
        with pytest.raises(ProviderError):
            k.agent(spec())(question="why?")
    finally:
        k.close()
        provider.shutdown()
    statuses = [s.status.description or "" for s in exporter.get_finished_spans()]
    assert any("HTTP 500" in s for s in statuses)
    assert not any("alice" in s or f":{PASSWORD}@" in s for s in statuses)


def test_serialized_settings_hide_the_url_userinfo():
    """public_data (saved and shown specs) keeps a base_url's host and drops its userinfo."""
    shown = public_data({"llm_config": {"base_url": "https://alice:hunter2@proxy.example/v1"}})
    assert shown == {"llm_config": {"base_url": "https://***@proxy.example/v1"}}


def test_userinfo_is_masked_in_any_text_whatever_its_length():
    """mask_userinfo and every Masker, even an empty one, mask a URL's userinfo, a one-letter password too."""
    from zagent._trust.secrets import mask_userinfo

    text = "see http://a:b@h:1/x and https://tok3n@git.example/r, not mail@example.com"
    assert mask_userinfo(text) == Masker()(text) == \
        "see http://***@h:1/x and https://***@git.example/r, not mail@example.com"


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "ollama:llama3", "anthropic:claude-x", "openai-responses:m"])
def test_model_reprs_hide_the_url_userinfo(spec):
    """repr of a provider model built on http://alice:hunter2@host shows the host, not the credential."""
    provider = spec.split(":")[0]
    plugin = {"openai-responses": "openai"}.get(provider, provider)
    k = Kernel(plugins=[f"zagent.plugins.{plugin}"], entry_points=False)
    try:
        key = {"api_key": "sk-not-the-point-0123456789"} if provider == "anthropic" else {}  # x-api-key: no clash
        llm = k.llm(spec, base_url="http://alice:hunter2@127.0.0.1:9/v1", **key)
        shown = repr(llm) + repr(getattr(llm, "http", ""))
    finally:
        k.close()
    assert "127.0.0.1:9" in shown and "hunter2" not in shown and "alice" not in shown


def test_mcp_list_hides_the_userinfo_of_a_servers_url(tmp_path, capsys):
    """`zagent mcp list` of an HTTP MCP server at http://alice:hunter2@127.0.0.1:9/mcp: target and error hold no
    credential (the server is down: the connection error names the URL too)."""
    pytest.importorskip("zagent_mcp")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"remote": {"url": "http://alice:hunter2@127.0.0.1:9/mcp",
                                                            "timeout": 2}}}))
    k = Kernel(plugins=["zagent_mcp.plugin", "zagent.plugins.cli"], entry_points=False)
    try:
        main(["mcp", "list", "--config", str(config), "--json"], kernel=k)
    finally:
        k.close()
    captured = capsys.readouterr()
    rows = json.loads(captured.out)
    assert rows[0]["target"] == "http://***@127.0.0.1:9/mcp"
    assert "hunter2" not in captured.out + captured.err and "alice" not in captured.out + captured.err


@pytest.mark.parametrize("given", [{"api_key": "sk-GIVEN-0123456789abcdef"},
                                   {"headers": {"Authorization": "Bearer sk-GIVEN-0123456789abcdef"}}])
def test_a_url_password_next_to_a_given_key_is_refused_not_silently_swapped(given):
    """``base_url=http://alice:pw@host/v1`` with ``api_key=`` (or an ``Authorization`` header): httpx would send
    the URL's Basic credentials and drop the key the user gave. A ``ConfigError`` says so, showing no password."""
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
    try:
        with pytest.raises(ConfigError, match=r"carries credentials \(user:password@\) and .* is given") as err:
            k.llm("openai:m", base_url="http://alice:hunter2@127.0.0.1:9/v1", **given)
    finally:
        k.close()
    assert "hunter2" not in str(err.value) and "sk-GIVEN" not in str(err.value)


def test_a_url_password_with_the_environments_key_sends_the_url_credentials(server, monkeypatch):
    """``OPENAI_API_KEY`` in the environment and a base URL with ``user:password@``: the URL's credentials are
    the request's (Basic), as the user wrote them; nothing is refused."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789abcdef")
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
    try:
        with pytest.raises(ProviderError):
            k.llm("openai:m", base_url=with_userinfo(server.url), max_retries=0).complete("hi")
    finally:
        k.close()
    assert server.requests[0].headers["authorization"].startswith("Basic ")
