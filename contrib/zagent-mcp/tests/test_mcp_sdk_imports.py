"""The MCP SDK is imported under one lock: a kernel's MCP loop thread and the caller's thread may import it at once.

The SDK's packages import each other in a cycle; two threads entering it at different ends got
"cannot import name 'Server' from partially initialized module 'mcp.server'" (CI hit it in
contrib/zagent-mcp/README.md, where ``McpServe`` was built while the time server connected).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

from zagent_mcp import sdk as sdk_module

RACE = textwrap.dedent("""
    import threading
    from zagent_mcp.sdk import sdk
    barrier = threading.Barrier(3)
    errors = []
    def load(name):
        barrier.wait()
        try:
            sdk(name)
        except Exception as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=load, args=(name,))
               for name in ("mcp", "mcp.server.lowlevel", "mcp.client.streamable_http")]
    for t in threads: t.start()
    for t in threads: t.join()
    print(errors or "ok")
""")


def test_three_threads_import_the_sdk_at_once_in_a_fresh_process():
    """Three threads start importing the client, the server and the package together: each gets a whole module."""
    for _ in range(3):  # unguarded, this failed 5 runs in 6
        done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok", done.stdout


def test_only_one_thread_runs_an_sdk_import_at_a_time(monkeypatch):
    """``sdk()`` holds its lock while it imports, so two imports never overlap."""
    inside = 0
    most = 0
    guard = threading.Lock()

    def slow_import(name):
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with guard:
            inside -= 1
        return name

    monkeypatch.setattr(sdk_module.importlib, "import_module", slow_import)
    threads = [threading.Thread(target=sdk_module.sdk, args=(f"mcp.m{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
