"""Fixtures of the robustness tests: a fresh isolated kernel with the built-in plugins, and a
loopback OpenAI-compatible server that counts the requests it gets."""

from __future__ import annotations

import pytest

from zagent import Kernel

from tests.kernels import with_add

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
           "zagent.plugins.react", "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow",
           "zagent.plugins.groupchat", "zagent.plugins.rails"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with the built-in plugins (no entry points) and an ``add`` tool."""
    k = with_add(Kernel(plugins=PLUGINS, entry_points=False, strict=True))
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
