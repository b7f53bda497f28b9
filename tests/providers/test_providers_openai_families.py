"""Tool mode by evidence: one probe tells a server that answers tools= with text from one that returns tool_calls."""

import pytest
from zagent import Kernel

from tests.servers.openai_server import OpenAIServer, completion

PLUGINS = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"]
TEXT_CALL = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture
def server():
    from zagent.plugins.openai import families

    families.forget()
    with OpenAIServer(key="sk-test") as s:
        yield s
    families.forget()


def _run(server, model, replies=(), **llm_config):
    calls = []

    def add(a: int, b: int) -> int:
        """Add two integers."""
        calls.append((a, b))
        return a + b

    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        k.add_tool(add)
        server.then(*replies)
        agent = k.agent({"type": "react", "name": "calc", "tools": ["add"], "max_iterations": 3,
                         "llm": f"openai:{model}",
                         "llm_config": {"base_url": server.url, "api_key": "sk-test", **llm_config}})
        agent.chat("What is 1 + 2?", use_react=True)
    finally:
        k.close()
    return calls


def test_text_only_server_gets_prompt_mode_in_the_family_format(server):
    """A server that answers the probe with a text call: the run's turns send no tools= and show the tools as
    Python-call text (Qwen's measured format); the model's [add(a=1, b=2)] runs with integer arguments."""
    calls = _run(server, "qwen2.5-coder-0.5b",
                 [completion(TEXT_CALL), completion("[add(a='1', b=2)]"), completion("3")])
    probe, turn = server.requests[0].json, server.requests[1].json
    assert probe["tools"][0]["function"]["name"] == "get_time"
    assert "tools" not in turn and "[add(a=<a>, b=<b>)" in turn["messages"][0]["content"]
    assert calls == [(1, 2)]


def test_native_server_keeps_the_native_path(server):
    """A server that returns tool_calls to the probe (like bench/peers' mock): the turn sends tools= natively."""
    calls = _run(server, "qwen2.5-coder-0.5b")
    assert [r.json.get("tools", [{}])[0].get("function", {}).get("name") for r in server.requests[:2]] == \
        ["get_time", "add"]
    assert calls


def test_verdict_is_cached_per_server_and_model(server):
    """A second run on the same server and model sends no second probe."""
    _run(server, "qwen2.5-coder-0.5b", [completion(TEXT_CALL), completion("3")])
    first = len(server.requests)
    _run(server, "qwen2.5-coder-0.5b", [completion("3")])
    assert len(server.requests) == first + 1 and "tools" not in server.requests[-1].json


def test_a_profile_that_sets_the_tool_mode_is_never_probed(server):
    """profile={"native_tools": True}: the one place to override; no probe, the first request is the turn."""
    _run(server, "qwen2.5-coder-0.5b", profile={"native_tools": True})
    assert server.requests[0].json["tools"][0]["function"]["name"] == "add"


def test_unknown_family_is_not_probed(server):
    """A model name of no known open-weights family keeps today's behaviour: no probe request."""
    _run(server, "my-private-model")
    assert server.requests[0].json["tools"][0]["function"]["name"] == "add"


def test_native_tools_false_alone_takes_the_family_format():
    """``profile={"native_tools": False}`` on a Qwen model: prompt mode in Qwen's format (pycall), never probed;
    a model of no known family keeps the agent's own format."""
    k = Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
    try:
        qwen = k.llm("openai:qwen2.5-coder-0.5b", base_url="http://127.0.0.1:9/v1", api_key="x",
                     profile={"native_tools": False})
        other = k.llm("openai:my-model", base_url="http://127.0.0.1:9/v1", api_key="x",
                      profile={"native_tools": False})
        assert (qwen.profile.native_tools, qwen.profile.tool_format, qwen.tools_probe_due) == (False, "pycall", False)
        assert other.profile.tool_format is None
    finally:
        k.close()
