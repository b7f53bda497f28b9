"""``zagent models``: installed providers, where their servers are, and whether they answer (real loopback servers)."""

import json
import socket

from zagent import Kernel
from zagent.plugins.cli import main
from tests.servers.openai_server import OpenAIServer

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.ollama", "zagent.plugins.cli"]


def _models(capsys, *args):
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        code = main(["models", "--json", *args], kernel=k)
    finally:
        k.close()
    return code, json.loads(capsys.readouterr().out)


def test_a_reachable_server_lists_its_models(monkeypatch, capsys):
    """With OPENAI_BASE_URL at a live server, openai is reachable and lists that server's models; no key shown."""
    with OpenAIServer(key="sk-secret-value") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
        code, out = _models(capsys)
    row = {r["provider"]: r for r in out["providers"]}["openai"]
    assert code == 0 and row["models"] == ["gpt-test", "gpt-test-mini"] and row["status"] == "reachable, 2 models"
    assert row["server"] == server.url and row["key"] == "set" and "sk-secret-value" not in json.dumps(out)


def test_an_unreachable_server_says_so(monkeypatch, capsys):
    """A server that refuses connections is reported unreachable with the reason; the command still exits 0."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    code, out = _models(capsys)
    row = {r["provider"]: r for r in out["providers"]}["ollama"]
    assert code == 0 and row["status"].startswith("unreachable: could not reach ollama")


def test_no_check_contacts_nothing(monkeypatch, capsys):
    """--no-check lists providers and the default model without any request."""
    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        code, out = _models(capsys, "--no-check")
        assert server.requests == []
    assert code == 0 and out["default"].startswith("test:offline")
    assert {r["provider"]: r["status"] for r in out["providers"]}["test"] == "offline (no server)"
