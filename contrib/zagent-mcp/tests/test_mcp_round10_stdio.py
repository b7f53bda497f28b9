"""Round ten, a hostile MCP client of ``zagent mcp serve --transport stdio`` writing raw JSON-RPC lines to the
server process it started (a real subprocess), to answer the serve's own console approval prompt itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

TOOLS = '''
import os


def word_count(text: str) -> int:
    """Count the words of a text."""
    open(os.path.join(os.path.dirname(__file__), "ran.txt"), "a").write("ran\\n")
    return len(text.split())
'''


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_LOG"] = "0"
    return env


def _line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def test_a_stdio_client_cannot_answer_the_console_approval_prompt(tmp_path):
    """Attack: the user's ``--rails`` asks a person on the console (``approver: console``) before ``word_count``
    runs; over stdio the client owns stdin, so it sends the call and then ``y`` lines, hoping the prompt reads
    them. Defence: the SDK's stdio transport moves the wire off fd 0 (stdin reads end of input), so the prompt
    declines and the tool never runs; the ``y`` lines are protocol noise the server survives."""
    (tmp_path / "mytools.py").write_text(TOOLS)
    (tmp_path / "rails.json").write_text(json.dumps({"approval": {"tools": ["word_count"]}, "approver": "console"}))
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "mytools:word_count",
                             "--rails", "rails.json"], cwd=tmp_path, env=_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}))
        proc.stdin.flush()
        assert b'"id":1' in proc.stdout.readline()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "word_count", "arguments": {"text": "a b"}}}
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + _line(call)
                         + b"y\ny\nyes\n")
        proc.stdin.flush()
        answers = []
        while not any(a.get("id") == 2 for a in answers):
            line = proc.stdout.readline()
            assert line, "the server closed stdout before answering the call"
            answers.append(json.loads(line))
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}))
        proc.stdin.flush()
        while not any(a.get("id") == 3 for a in answers):
            answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(30)
    result = next(a for a in answers if a.get("id") == 2)["result"]
    assert result["isError"] and not (tmp_path / "ran.txt").exists(), result
    assert [t["name"] for t in next(a for a in answers if a.get("id") == 3)["result"]["tools"]] == ["word_count"]
