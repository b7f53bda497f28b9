"""Fixtures for zagent-mcp's tests: kernels with MCP servers, and real servers to talk to.

Every server here is real: ``servers/demo_server.py`` (written with the SDK's
``MCPServer``, run over stdio or streamable HTTP on 127.0.0.1),
``mcp-server-time`` from PyPI, and ``@modelcontextprotocol/server-everything``
from npm when node is available. Nothing is mocked.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from zagent import Kernel

from mcp_helpers import DEMO, free_port


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
    port = free_port()
    proc = subprocess.Popen([sys.executable, DEMO, "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the HTTP demo server did not start (exit code {proc.poll()})")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
