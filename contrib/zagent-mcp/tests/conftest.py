"""Fixtures for zagent-mcp's tests: kernels with MCP servers, and real servers to talk to.

Every server here is real: ``servers/demo_server.py`` (written with the SDK's
``MCPServer``, run over stdio or streamable HTTP on 127.0.0.1),
``mcp-server-time`` from PyPI, and ``@modelcontextprotocol/server-everything``
from npm when node is available. Nothing is mocked.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# No per-example deadline and no "too slow" health check: CI shares 2 cores with other
# jobs, and a slow example there says nothing about the code. (Explicit settings win.)
settings.register_profile("zagent-ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("zagent-ci")

from zagent import Kernel  # noqa: E402 -- after the hypothesis profile is loaded

from mcp_helpers import HttpDemo  # noqa: E402 -- after the hypothesis profile is loaded


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """A developer's ZAGENT_* variables never change what a test sees."""
    for name in ("ZAGENT_MCP_CONFIG", "ZAGENT_MODEL", "ZAGENT_PLUGINS", "ZAGENT_DISABLE_PLUGINS", "ZAGENT_STRICT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_kernel():
    """``make_kernel(servers, *plugins, **mcp_options)``: a fresh kernel with the MCP plugin, closed after the test."""
    kernels = []

    def make(servers, *plugins, **options):
        config = {"mcp": {"mcpServers": servers, **options}}
        k = Kernel(plugins=["zagent_mcp.plugin", *plugins], entry_points=False, strict=True, config=config)
        kernels.append(k)
        return k

    yield make
    for k in kernels:
        k.close()


@pytest.fixture
def http_demo():
    """The demo server over streamable HTTP on a free loopback port; yields its ``/mcp`` URL."""
    server = HttpDemo()
    try:
        yield server.start()
    finally:
        server.stop()
