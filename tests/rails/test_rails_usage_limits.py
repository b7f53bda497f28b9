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
    """A wrong type, a negative count or an unknown key is a ConfigError naming it (a wrong type or count when
    the kernel starts, an unknown key at the run), not a silent pass."""
    with pytest.raises(ConfigError, match=key):
        k = make_kernel(config={"rails": {"usage_limits": bad}})
        try:
            llm = k.llm("scripted:bad", replies=["hi"])
            chat = GroupChat(kernel=k, agents=[declared("Ann")], termination={"max_rounds": 1}, llm=llm)
            chat.run("talk", text="a")
        finally:
            k.close()


class _Events:
    def __init__(self):
        self.types = []

    def zagent_event(self, event):
        self.types.append((event.type, dict(event.data)))


def _one_node_graph(retries=None):
    node = {"name": "n0", "description": "say", "inputs": [{"name": "text"}], "outputs": [{"name": "a0"}],
            "agents": [{**declared("A0"), "prompt": "Say: {text}", "inputs": [{"name": "text"}],
                        "outputs": [{"name": "a0"}]}]}
    if retries is not None:
        node["retries"] = retries
    return WorkFlowGraph.from_dict({"name": "w", "goal": "say", "inputs": [{"name": "text"}], "nodes": [node],
                                    "edges": []})


def test_a_node_stopped_by_a_usage_limit_is_not_retried():
    """A node with retries=3 whose model request would go over requests=0: it runs once, no node_retry, and
    the workflow fails caused by UsageLimitExceeded."""
    k = make_kernel(config=limits(requests=0))
    events = _Events()
    k.add_plugin(events, name="events")
    llm = k.llm("scripted:once", replies=["ok"] * 4)
    with pytest.raises(WorkFlowFailed) as info:
        WorkFlowExecutor(kernel=k, llm=llm, retries=3).run(_one_node_graph(), {"text": "a"})
    assert isinstance(info.value.__cause__, UsageLimitExceeded) and llm.requests == []
    assert [t for t, _ in events.types if t == "node_retry"] == []
    assert [d.get("attempt") for t, d in events.types if t == "node_start"] == [1]
    k.close()


def test_a_usage_limit_ends_the_whole_workflow_even_with_on_error_continue():
    """on_error="continue" lets independent nodes go on after a node's own failure, but not after a usage
    limit: the run stops, so the one node that hit requests=0 is the only one that failed or started a request."""
    k = make_kernel(config=limits(requests=0))
    events = _Events()
    k.add_plugin(events, name="events")

    class Plain:
        name = "plain"

        async def aexecute(self, *, inputs, ctx=None):
            return {"p": "ready"}

    def model_node(i, text):
        return {"name": f"m{i}", "description": "say", "inputs": [{"name": text}], "outputs": [{"name": f"a{i}"}],
                "agents": [{**declared(f"M{i}"), "prompt": "Say: {%s}" % text, "inputs": [{"name": text}],
                            "outputs": [{"name": f"a{i}"}]}]}

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "say", "inputs": [{"name": "text"}], "nodes": [
        {"name": "plain", "description": "no model", "inputs": [{"name": "text"}], "outputs": [{"name": "p"}],
         "agents": ["plain"]}, model_node(1, "text"), model_node(2, "p")],
        "edges": [{"source": "plain", "target": "m2"}]})
    ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:stop", replies=["ok"] * 4), on_error="continue", validate=False,
                          max_concurrency=1)
    ex.manager.add_agent(Plain())
    with pytest.raises(WorkFlowFailed) as info:
        ex.run(graph, {"text": "a"})
    assert isinstance(info.value.__cause__, UsageLimitExceeded)
    assert len(info.value.result.errors) == 1
    started = [d["node"] for t, d in events.types if t == "node_start" and d["node"] != "plain"]
    assert len(started) == 1
    k.close()
