"""Fixtures of the robustness tests: a fresh isolated kernel with the built-in plugins, and a
loopback OpenAI-compatible server that counts the requests it gets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # make ``tests.servers`` importable however pytest is started
    sys.path.insert(0, str(ROOT))

from zagent import Kernel  # noqa: E402

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
           "zagent.plugins.react", "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow",
           "zagent.plugins.groupchat", "zagent.plugins.rails"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the built-in plugins (no entry points) and an ``add`` tool."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    k.add_tool(add)
    yield k
    k.close()


@pytest.fixture
def server():
    """An OpenAI-compatible loopback server expecting the key ``sk-right``."""
    from tests.servers.openai_server import OpenAIServer

    with OpenAIServer(key="sk-right") as srv:
        yield srv


def llm_config(server, key: str = "sk-wrong", **options):
    """``llm_config`` of a spec pointing at ``server`` (retries without waiting)."""
    return {"base_url": server.url, "api_key": key, "retry_backoff": 0, **options}
