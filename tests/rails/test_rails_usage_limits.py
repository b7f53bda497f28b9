"""``rails.usage_limits``: requests, tool calls and tokens per run, across composite runs (issue 32, item 5)."""

import pytest

from zagent import ConfigError, UsageLimitExceeded
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.react import ReActLoop
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
from zagent.plugins.workflow.errors import WorkFlowFailed

from tests.security.conftest import make_kernel

COUNT = {"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}


def declared(name, **over):
    return {"name": name, "description": "says", "prompt": "Say: {text}\n{transcript}",
            "inputs": [{"name": "text"}, {"name": "transcript"}], "outputs": [{"name": "answer"}],
            "parse_mode": "str", **over}


def limits(**n):
    return {"rails": {"usage_limits": n}}


def test_group_chat_rounds_share_one_requests_limit():
    """A 4-round group chat under requests=3 stops before the 4th model request with UsageLimitExceeded."""
    k = make_kernel(config=limits(requests=3))
    llm = k.llm("scripted:chat", replies=["hi"] * 4)
    chat = GroupChat(kernel=k, agents=[declared("Ann"), declared("Bob")], termination={"max_rounds": 4}, llm=llm)
    with pytest.raises(UsageLimitExceeded) as info:
        chat.run("talk", text="a")
    assert len(llm.requests) == 3
    assert (info.value.limit, info.value.allowed, info.value.count) == ("requests", 3, 4)
    assert "rails.usage_limits.requests" in str(info.value)
    k.close()


def test_workflow_nodes_share_one_requests_limit():
    """A 3-node workflow under requests=2 fails before the 3rd node's request, caused by UsageLimitExceeded."""
    k = make_kernel(config=limits(requests=2))
    nodes = [{"name": f"n{i}", "description": "say", "inputs": [{"name": "text"}], "outputs": [{"name": f"a{i}"}],
              "agents": [{**declared(f"A{i}"), "prompt": "Say: {text}", "inputs": [{"name": "text"}],
                          "outputs": [{"name": f"a{i}"}]}]} for i in range(3)]
    edges = [{"source": "n0", "target": "n1"}, {"source": "n1", "target": "n2"}]
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "say", "inputs": [{"name": "text"}], "nodes": nodes,
                                     "edges": edges})
    llm = k.llm("scripted:wf", replies=["ok"] * 3)
    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=k, llm=llm).run(graph, {"text": "a"})
    assert len(llm.requests) == 2 and isinstance(info.value.__cause__, UsageLimitExceeded)
    assert info.value.result.errors.keys() == {"n2"} and "requests=2" in str(info.value)
    k.close()


def test_react_loop_stops_before_the_tool_call_over_the_limit():
    """A ReAct loop under tool_calls=2 runs 2 tool calls and ends before the 3rd with UsageLimitExceeded."""
    k = make_kernel(config=limits(tool_calls=2))
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:react", replies=[COUNT] * 5 + ["done"]), tools=["word_count"])
    with pytest.raises(UsageLimitExceeded) as info:
        loop.run("count")
    assert k.spy.ran == ["word_count", "word_count"] and info.value.limit == "tool_calls"
    k.close()


def test_token_limit_ends_the_run_right_after_the_reply_over_it():
    """total_tokens is checked after each reply: the first reply over the limit ends the run."""
    k = make_kernel(config=limits(total_tokens=1))
    llm = k.llm("scripted:tok", replies=["a long enough reply"] * 3)
    chat = GroupChat(kernel=k, agents=[declared("Ann")], termination={"max_rounds": 3}, llm=llm)
    with pytest.raises(UsageLimitExceeded) as info:
        chat.run("talk", text="a")
    assert len(llm.requests) == 1 and info.value.limit == "total_tokens" and info.value.count > 1
    k.close()


def test_an_agent_can_only_lower_the_kernels_limit():
    """An agent's usage_limits above the kernel's do not raise it: the lower limit applies."""
    k = make_kernel(config=limits(requests=1))
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:floor", replies=[COUNT, "done"]), tools=["word_count"],
                     agent_config={"rails": {"usage_limits": {"requests": 50}}})
    with pytest.raises(UsageLimitExceeded, match="requests=1"):
        loop.run("count")
    k.close()


@pytest.mark.parametrize("bad,key", [({"requests": "5"}, "requests"), ({"requests": -1}, "requests"),
                                     ({"tokens": 5}, "tokens"), ([5], "usage_limits")])
def test_malformed_limits_are_a_config_error_naming_the_key(bad, key):
    """A wrong type, a negative count or an unknown key is a ConfigError naming it, not a silent pass."""
    k = make_kernel(config={"rails": {"usage_limits": bad}})
    llm = k.llm("scripted:bad", replies=["hi"])
    chat = GroupChat(kernel=k, agents=[declared("Ann")], termination={"max_rounds": 1}, llm=llm)
    with pytest.raises(ConfigError, match=key):
        chat.run("talk", text="a")
    k.close()
