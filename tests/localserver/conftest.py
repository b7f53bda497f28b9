"""Fixtures for the local-server tests: a loopback OpenAI-compatible server that answers the way a small
local model behind llama.cpp did (issue 22), a fresh kernel per test, and the ``zagent`` CLI against both."""

from __future__ import annotations

from pathlib import Path

import pytest

from zagent import Kernel

from tests.servers.openai_server import OpenAIServer

PLUGINS = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.workflow", "zagent.plugins.manager", "zagent.plugins.memory", "zagent.plugins.cli"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def server(monkeypatch):
    """A loopback OpenAI server; ZAGENT_MODEL/OPENAI_BASE_URL/OPENAI_API_KEY point at it, as for a local model."""
    with OpenAIServer(key="x") as srv:
        monkeypatch.setenv("ZAGENT_MODEL", "openai:qwen2.5-coder-0.5b")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        monkeypatch.delenv("ZAGENT_TIMEOUT", raising=False)
        yield srv


@pytest.fixture
def kernel():
    # These replay a server in native mode (calls as text, run by the text fallback): the profile sets the
    # tool mode, so the first tool turn sends no probe (tests/providers/test_providers_openai_families.py).
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True,
               config={"profiles": {"openai:*": {"native_tools": True}}})
    yield k
    k.close()


@pytest.fixture
def zagent(kernel, capsys):
    """Run the CLI in-process on the fixture kernel: ``code, out, err = zagent("run", ...)``."""
    from zagent.plugins.cli import main

    def run(*argv: str):
        code = main(list(argv), kernel=kernel)
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


def bodies(server) -> list:
    """The JSON bodies of the chat requests the server received."""
    return [r.json for r in server.requests if r.path.endswith("/chat/completions")]
