"""`zagent mcp serve`: zagent's chosen tools and agent files as an MCP server, talked to by the official SDK client
over stdio and streamable HTTP, with rails on every call."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from mcp import ClientSession, StdioServerParameters, stdio_client

from mcp_helpers import free_port

TOOLS = '''
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()
'''
AGENT = {"name": "Answerer", "description": "Answers a question.", "prompt": "Answer: {question}",
         "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
         "parse_mode": "str"}


@pytest.fixture
def folder(tmp_path):
    """A working folder with a tools module and an agent file, as a user would serve them."""
    (tmp_path / "mytools.py").write_text(TOOLS)
    (tmp_path / "answerer.json").write_text(json.dumps(AGENT))
    return tmp_path


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_LOG"] = "0"
    return env


def _serve_args(*extra):
    return ["-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "mytools:word_count", "--agent", "answerer.json",
            *extra]


async def _stdio(folder, calls, *extra):
    params = StdioServerParameters(command=sys.executable, args=_serve_args(*extra), cwd=str(folder), env=_env())
    with open(folder / "server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                results = [await session.call_tool(name, args) for name, args in calls]
    return listed, results


def _text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_stdio_lists_the_served_tools_and_runs_them(folder):
    """Over stdio the SDK client sees exactly the served tool and agent, and calls both."""
    listed, (count, answer) = asyncio.run(_stdio(folder, [("word_count", {"text": "a b c"}),
                                                          ("Answerer", {"question": "hi?"})]))
    by_name = {t.name: t for t in listed.tools}
    assert sorted(by_name) == ["Answerer", "word_count"]
    assert by_name["Answerer"].input_schema["required"] == ["question"]
    assert (_text(count), count.is_error) == ("3", False)
    assert not answer.is_error and _text(answer)  # the offline test model's answer


def test_a_tool_that_is_not_served_cannot_be_called(folder):
    """A registered tool left out of the served set is refused (isError), even by exact name."""
    (folder / "shouter.json").write_text(json.dumps({**AGENT, "name": "Shouter", "tools": ["mytools:shout"]}))
    listed, (result,) = asyncio.run(_stdio(folder, [("shout", {"text": "x"})], "--agent", "shouter.json"))
    assert "shout" not in [t.name for t in listed.tools]  # registered (the agent's tool), not served
    assert result.is_error and "not offered" in _text(result)


def test_rails_apply_to_every_call(folder):
    """--rails settings block a served tool (isError naming the rule); the kernel's rails run for each call."""
    (folder / "rails.json").write_text(json.dumps({"deny_tools": ["word_count"]}))
    _, (denied, answer) = asyncio.run(_stdio(folder, [("word_count", {"text": "a"}), ("Answerer", {"question": "q"})],
                                             "--rails", "rails.json"))
    assert denied.is_error and "deny_tools" in _text(denied)
    assert not answer.is_error


def test_rails_budget_counts_per_call_run(folder):
    """A tool budget in --rails counts within one MCP call (each call is its own run), not across calls."""
    (folder / "rails.json").write_text(json.dumps({"tool_budget": {"word_count": 1}}))
    _, results = asyncio.run(_stdio(folder, [("word_count", {"text": "a"})] * 2, "--rails", "rails.json"))
    assert [r.is_error for r in results] == [False, False]


@pytest.mark.parametrize("rails, said", [
    ({"approval": True, "approver": "no_such_approver_r17:ask"}, "no module named 'no_such_approver_r17'"),
    ({"approval": True, "approver": "ask_someone"}, "must be 'console' or 'module:function'"),
    ({"tool_budget": {"word_count": "two"}}, "tool_budget must be"),
], ids=["approver-missing", "approver-not-a-path", "wrong-type"])
def test_a_bad_rails_file_is_refused_before_serving(folder, rails, said):
    """A ``--rails`` file whose approver does not import (or whose setting has the wrong type) stops ``mcp serve``
    at start with a message naming the file, instead of failing each client's call that needs approval."""
    (folder / "rails.json").write_text(json.dumps(rails))
    proc = subprocess.run([sys.executable, *_serve_args("--rails", "rails.json")], cwd=folder, env=_env(),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and "--rails rails.json" in proc.stderr and said in proc.stderr
    assert "tool(s):" not in proc.stderr  # nothing was served


def test_bad_arguments_are_an_error_result(folder):
    """Arguments that do not fit the schema come back as an isError result the client can act on."""
    _, (result,) = asyncio.run(_stdio(folder, [("word_count", {"text": {"not": "text"}})]))
    assert result.is_error and "word_count" in _text(result)


def test_streamable_http_serves_the_same_tools(folder):
    """With --transport http the SDK's streamable-HTTP client lists and calls the served tools."""
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    proc = subprocess.Popen([sys.executable, *_serve_args("--transport", "http", "--port", str(port))],
                            cwd=folder, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()
                time.sleep(0.1)

        async def talk():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    return listed, await session.call_tool("word_count", {"text": "one two"})

        listed, result = asyncio.run(talk())
        assert sorted(t.name for t in listed.tools) == ["Answerer", "word_count"]
        assert _text(result) == "2" and not result.is_error
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_with_nothing_to_serve_says_what_to_pass(folder):
    """`zagent mcp serve` without --tool or --agent exits with an error naming the flags."""
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "mcp", "serve"], cwd=folder, env=_env(),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and "--tool" in proc.stderr and "--agent" in proc.stderr
