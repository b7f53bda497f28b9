"""SystemExit and KeyboardInterrupt raised by a tool become error results on the sync API, and later sync
calls still work (a real child process, so a hung sync loop shows as the parent's timeout, not a hung suite)."""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys

import pytest

from zagent import Kernel, tool

CHILD = str(pathlib.Path(__file__).with_name("tool_exit_child.py"))


@pytest.mark.parametrize("where", ["threads", "loop"])
def test_tool_exits_are_error_results_and_the_sync_api_stays_usable(where):
    """Through run_tool and a ReAct run (sync), SystemExit/KeyboardInterrupt from a tool in threads or on the
    loop give error results; the run finishes and the next sync call returns."""
    proc = subprocess.run([sys.executable, CHILD, where], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"leave": "error", "interrupt": "error", "aleave": "error", "react": "done", "after": "3"}


def test_system_exit_from_a_tool_is_an_error_result_on_the_async_api():
    """On the async API too, a tool raising SystemExit gives an error result naming it, and the loop goes on."""
    def leave() -> str:
        raise SystemExit(3)

    k = Kernel(entry_points=False)
    k.add_tool(tool(leave, inline=False))
    try:
        result = asyncio.run(k.arun_tool({"name": "leave", "arguments": {}}))
    finally:
        k.close()
    assert result.state == "error" and "SystemExit" in result.content
