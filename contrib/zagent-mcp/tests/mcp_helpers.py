"""Helpers shared by the tests (imported by name; fixtures live in conftest.py)."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE = HERE.parent
DEMO = str(HERE / "servers" / "demo_server.py")
AGENT_PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"]


def demo_stdio(**extra):
    """The demo server as a stdio ``mcpServers`` entry."""
    return {"command": sys.executable, "args": [DEMO], **extra}


def time_stdio(**extra):
    """``mcp-server-time`` (PyPI) as a stdio ``mcpServers`` entry."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time"], **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UvicornApp:
    """``with UvicornApp(app, bind) as url:`` runs an ASGI app (``McpServe.http_app()``) under uvicorn in a thread
    of this process, on a free port of loopback address ``bind``; the url is its ``/mcp`` endpoint."""

    def __init__(self, app, bind: str = "127.0.0.1"):
        import uvicorn

        self.bind, self.port = bind, free_port()
        config = uvicorn.Config(app, host=bind, port=self.port, log_level="error", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            threading.Event().wait(0.02)
        return f"http://{self.bind}:{self.port}/mcp"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(30)


def everything_command():
    """How to start server-everything: the copy npm installed in this package, else npx; None without node."""
    local = PACKAGE / "node_modules" / ".bin" / "mcp-server-everything"
    if local.exists() and shutil.which("node"):
        return {"command": str(local), "args": ["stdio"]}
    if shutil.which("npx") and os.environ.get("ZAGENT_MCP_TEST_NPX", "1") != "0":
        return {"command": shutil.which("npx"), "args": ["-y", "@modelcontextprotocol/server-everything", "stdio"],
                "connect_timeout": 120}
    return None


def alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (a reaped child no longer does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class HttpDemo:
    """The demo server over streamable HTTP on a fixed free loopback port; can be stopped and started again.

    With ``token`` the server requires ``Authorization: Bearer <token>`` (401 otherwise; 403 for ``no-scope``).
    """

    def __init__(self, token: str = ""):
        self.port = free_port()
        self.token = token
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = None

    def start(self) -> str:
        self.proc = subprocess.Popen([sys.executable, DEMO, "http", str(self.port), *([self.token] if self.token else [])], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self.url
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the HTTP demo server did not start (exit code {self.proc.poll()})")
                time.sleep(0.1)

    def stop(self, kill: bool = False) -> None:
        if self.proc is None:
            return
        self.proc.kill() if kill else self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
