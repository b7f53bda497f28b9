"""The README's `zagent mcp serve` line, as written, from the repository's examples/ folder: the official MCP
SDK client lists the served tool and agent and calls both (offline: the built-in test model answers)."""

from __future__ import annotations

import asyncio
import os
import pathlib
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


async def _serve_examples(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZAGENT_", "OPENAI_"))}
    env["ZAGENT_LOG"] = "0"
    params = StdioServerParameters(command=sys.executable, cwd=str(EXAMPLES), env=env, args=[
        "-m", "zagent.plugins.cli", "mcp", "serve", "--tool", "example_tools:word_count", "--agent", "qa_agent.json"])
    with open(tmp_path / "server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                count = await session.call_tool("word_count", {"text": "tide pools are small"})
                answer = await session.call_tool("Answerer", {"question": "What is a language model?"})
    return listed, count, answer


def test_the_readme_serve_command_works_from_examples(tmp_path):
    """`cd examples && zagent mcp serve --tool example_tools:word_count --agent qa_agent.json` serves both."""
    listed, count, answer = asyncio.run(_serve_examples(tmp_path))
    assert sorted(t.name for t in listed.tools) == ["Answerer", "word_count"]
    assert [c.text for c in count.content] == ["4"] and not count.is_error
    assert not answer.is_error and "language model" in answer.content[0].text
