"""Bounded, cheap turns on a local server: max_tokens per turn kind, and a byte-identical prompt prefix."""

import json

import pytest
from zagent import Kernel

from tests.servers.openai_server import OpenAIServer, completion

PLUGINS = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]


@pytest.fixture
def server():
    with OpenAIServer(key="sk-test") as s:
        yield s


def _chat(server, replies, use_react=None, profile=None, **llm_config):
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        k.add_tool(add)
        server.then(*replies)
        config = {"base_url": server.url, "api_key": "sk-test",
                  "profile": profile or {"native_tools": False}, **llm_config}
        agent = k.agent({"type": "react", "name": "calc", "tools": ["add"], "max_iterations": 3,
                         "llm": "openai:local-model", "llm_config": config})
        agent.chat("What is 1 + 2?", use_react=use_react)
    finally:
        k.close()
    return [r.json for r in server.requests]


def test_mode_decision_and_tool_turns_are_bounded(server):
    """chat(): the yes/no decision asks for 8 tokens, each tool turn for 256 (not the profile's 2048)."""
    sent = _chat(server, [completion("yes"), completion("<tool_call>{\"name\": \"add\", \"arguments\": "
                                                        "{\"a\": 1, \"b\": 2}}</tool_call>"), completion("3")])
    assert [b["max_tokens"] for b in sent] == [8, 256, 256]


def test_a_users_max_tokens_wins(server):
    """max_tokens set in the model's options: every turn sends that, whatever its kind."""
    sent = _chat(server, [completion("yes"), completion("3")], max_tokens=100)
    assert [b["max_tokens"] for b in sent] == [100, 100]


def test_prompt_prefix_is_byte_identical_across_turns(server):
    """Prompt mode over two turns: the system message (instructions + tools section) is the same bytes, so a
    server's prompt cache is reused."""
    sent = _chat(server, [completion('[add(a=1, b=2)]'), completion("3")], use_react=True,
                 profile={"native_tools": False, "tool_format": "pycall"})
    first, second = (json.dumps(b["messages"][0]) for b in sent[:2])
    assert first == second and "[add(a=<a>, b=<b>)" in first
    assert sent[1]["messages"][:2] == sent[0]["messages"][:2]


def test_native_tools_are_byte_identical_across_turns(server):
    """Native mode over two turns: the same system message and the same tools list."""
    sent = _chat(server, [], use_react=True, profile={"native_tools": True})
    assert len(sent) >= 2
    assert sent[0]["tools"] == sent[1]["tools"] and sent[0]["messages"][0] == sent[1]["messages"][0]
