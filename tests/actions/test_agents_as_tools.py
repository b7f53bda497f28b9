"""Agents as tools: ``Agent.as_tool()`` and the ``"agents": [...]`` key of agent files."""

import json

import pytest

from zagent import ConfigError, Kernel

from tests.kernels import with_add

from .conftest import PLUGINS, qa_spec

ADD = {"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}


@pytest.fixture
def kernel():
    """A fresh isolated kernel with offline providers, parsers, actions, react and rails, plus `add`."""
    k = with_add(Kernel(plugins=[*PLUGINS, "zagent.plugins.react", "zagent.plugins.rails"], entry_points=False,
                        strict=True))
    yield k
    k.close()


def _helper(kernel, replies, **over):
    agent = kernel.agent(qa_spec(**{"name": "helper", "tools": ["add"], **over}))
    agent.llm = kernel.llm("scripted:helper", replies=replies)
    return agent


def _boss(kernel, replies, **over):
    spec = {"type": "react", "name": "boss", "tools": ["helper"], **over}
    boss = kernel.agent(spec)
    boss.llm = kernel.llm("scripted:boss", replies=replies)
    return boss


def _ask_helper(question="2+3?"):
    return {"content": None, "tool_calls": [{"name": "helper", "arguments": {"question": question}}]}


def test_declared_agent_answers_as_a_tool(kernel):
    """A declared agent offered with as_tool() takes its inputs as arguments and answers its output."""
    helper = _helper(kernel, [ADD, "5"])
    tool = helper.as_tool()
    assert tool.parameters["required"] == ["question"]
    boss = _boss(kernel, [_ask_helper(), "the helper says 5"])
    result = boss.loop().run("what is 2+3?")
    assert [(s.tool, s.result) for s in result.steps if s.tool] == [("helper", "5")]
    assert result.content == "the helper says 5"


def test_called_agent_spends_in_the_callers_run(kernel):
    """The called agent's model usage is added to the caller's run, under the caller's run id."""
    helper = _helper(kernel, ["5"], tools=[])
    helper.as_tool()
    boss = _boss(kernel, [_ask_helper(), "done"])
    ctx = kernel.context(agent="boss")
    boss.loop().run("go", ctx=ctx)
    record = helper.messages[-1].metadata
    assert record["run_id"] == ctx.run_id and record["usage"]["calls"] == 1
    assert ctx.usage.calls == 3  # two boss turns and the helper's answer


def test_callers_deny_rail_applies_inside_the_called_agent(kernel):
    """A tool the caller's rails deny is blocked inside the called agent, whose own rails allow it."""
    helper = _helper(kernel, [ADD, "blocked"])
    helper.as_tool()
    boss = _boss(kernel, [_ask_helper(), "done"], rails={"deny_tools": ["add"]})
    boss.loop().run("go")
    tool_turn = helper.llm.requests[1].messages[-1]
    assert tool_turn.role == "tool" and "deny_tools" in tool_turn.content


def test_callers_budget_counts_the_called_agents_calls(kernel):
    """The caller's per-run tool budget counts calls made inside the called agent (one run, one stash)."""
    helper = _helper(kernel, [ADD, ADD, "done"])
    helper.as_tool()
    boss = _boss(kernel, [_ask_helper(), "done"], rails={"tool_budget": {"add": 1}})
    boss.loop().run("go")
    requests = helper.llm.requests
    assert requests[1].messages[-1].content == "5"
    assert "budget" in requests[2].messages[-1].content


def test_chat_agent_as_tool_takes_a_task(kernel):
    """A ReAct agent offered as a tool takes one 'task' argument and answers its reply."""
    worker = kernel.agent({"type": "react", "name": "worker", "tools": ["add"]})
    worker.llm = kernel.llm("scripted:worker", replies=[ADD, "it is 5"])
    assert worker.as_tool().parameters["required"] == ["task"]
    boss = _boss(kernel, [{"content": None, "tool_calls": [{"name": "worker", "arguments": {"task": "2+3"}}]},
                          "done"], tools=["worker"])
    result = boss.loop().run("go")
    assert [s.result for s in result.steps if s.tool] == ["it is 5"]


def test_agent_calling_itself_stops_at_the_depth_limit(kernel):
    """An agent offered itself as a tool stops nesting at MAX_AGENT_DEPTH with an error result."""
    from zagent.plugins.actions.astool import MAX_AGENT_DEPTH

    def reply(request):
        last = request.messages[-1]
        if last.role == "tool":
            return "## answer\n" + last.content[:60]
        return {"content": None, "tool_calls": [{"name": "loopy", "arguments": {"question": "again"}}]}

    loopy = kernel.agent(qa_spec(name="loopy", parse_mode="title"))
    loopy.llm = kernel.llm("scripted:loopy", replies=[reply] * 50)
    loopy.as_tool()
    loopy.action().tools = ["loopy"]
    loopy.action()._tools = [kernel.tool("loopy")]
    loopy(question="start")
    deepest = [m.content for r in loopy.llm.requests for m in r.messages if m.role == "tool"]
    assert any(f"at most {MAX_AGENT_DEPTH} deep" in c for c in deepest)


def test_as_tool_refuses_a_name_taken_by_another_tool(kernel):
    """as_tool() under the name of an existing tool is a ConfigError asking for another name."""
    agent = kernel.agent(qa_spec(name="add"))
    with pytest.raises(ConfigError, match="as_tool\\(name=...\\)"):
        agent.as_tool()
    assert agent.as_tool(name="adder").name == "adder"


def _write(path, spec):
    path.write_text(json.dumps(spec))
    return path


def test_agent_file_names_agents_by_path(kernel, tmp_path):
    """An agent file's "agents" list loads agent files next to it and offers them as tools."""
    _write(tmp_path / "helper.json", qa_spec(name="helper"))
    boss = _write(tmp_path / "boss.json", {"type": "react", "name": "boss", "agents": ["helper.json"]})
    from zagent.speckit import Trust

    agent = kernel.agent(str(boss), trust=Trust.for_file(boss))  # what `zagent run` does: the file's folder
    assert "helper" in agent.tools and kernel.tool("helper").metadata["agent"] == "helper"


def test_agent_file_may_not_name_a_file_outside_its_folder(kernel, tmp_path):
    """An untrusted agent file naming an agent file outside its own folder is refused."""
    (tmp_path / "inner").mkdir()
    _write(tmp_path / "helper.json", qa_spec(name="helper"))
    boss = _write(tmp_path / "inner" / "boss.json", qa_spec(name="boss", agents=["../helper.json"]))
    from zagent.plugins.actions.customize import CustomizeAgent

    with pytest.raises(ConfigError, match="outside the spec's folder"):
        CustomizeAgent.load(boss, kernel)


def test_agent_file_may_only_name_spec_files(kernel, tmp_path):
    """An "agents" entry that is not a .json/.yaml/.yml file is refused before it is read."""
    from zagent.plugins.actions.customize import CustomizeAgent

    boss = _write(tmp_path / "boss.json", qa_spec(name="boss", agents=["../../etc/passwd"]))
    with pytest.raises(ConfigError, match="refused"):
        CustomizeAgent.load(boss, kernel)


def test_agent_files_naming_each_other_are_a_config_error(kernel, tmp_path):
    """Two agent files naming each other in "agents" are a ConfigError, not endless recursion."""
    from zagent.plugins.actions.customize import CustomizeAgent

    _write(tmp_path / "a.json", qa_spec(name="a", agents=["b.json"]))
    _write(tmp_path / "b.json", qa_spec(name="b", agents=["a.json"]))
    with pytest.raises(ConfigError, match="in a loop"):
        CustomizeAgent.load(tmp_path / "a.json", kernel)


def test_chat_agent_needing_a_human_approval_ends_with_an_error_result(kernel):
    """A called chat agent whose tool waits for a human approval ends with an error result instead of hanging."""
    kernel.config["rails"] = {"approver": lambda call, ctx: None}  # None: "ask a human later"
    worker = kernel.agent({"type": "react", "name": "worker", "tools": ["add"],
                           "rails": {"approval": {"tools": ["add"]}}})
    worker.llm = kernel.llm("scripted:worker-approval", replies=[ADD, "never"])
    worker.as_tool()
    boss = _boss(kernel, [{"content": None, "tool_calls": [{"name": "worker", "arguments": {"task": "2+3"}}]},
                          "done"], tools=["worker"])
    result = boss.loop().run("go")
    assert [s.is_error for s in result.steps if s.tool] == [True]
    assert "human approval" in [s.result for s in result.steps if s.tool][0]


def test_missing_or_unknown_inputs_are_an_error_result(kernel):
    """An agent tool called without a required input, or with an unknown one, answers an error naming them."""
    helper = _helper(kernel, [])
    helper.as_tool()
    ctx = kernel.context()
    missing = kernel.run_tool({"name": "helper", "arguments": {}}, ctx)
    unknown = kernel.run_tool({"name": "helper", "arguments": {"question": "q", "colour": "red"}}, ctx)
    assert missing.state == "error" and "missing required argument(s) 'question'" in missing.content
    assert unknown.state == "error" and "unknown: colour" in unknown.content
    assert helper.llm.calls == 0


def test_agent_file_symlink_out_of_the_folder_is_refused(kernel, tmp_path):
    """An "agents" entry that is a symlink inside the folder to a file outside it is refused like the path."""
    from zagent.plugins.actions.customize import CustomizeAgent

    outside = tmp_path / "outside"
    outside.mkdir()
    _write(outside / "helper.json", qa_spec(name="helper"))
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "helper.json").symlink_to(outside / "helper.json")
    boss = _write(inner / "boss.json", qa_spec(name="boss", agents=["helper.json"]))
    with pytest.raises(ConfigError, match="outside the spec's folder"):
        CustomizeAgent.load(boss, kernel)
    assert "helper" in CustomizeAgent.load(boss, kernel, trust=True).action().tools  # a trusted spec may


def test_callers_allow_list_limits_the_called_agents_tools(kernel):
    """A tool outside the caller's allow_tools is blocked inside the called agent too."""
    helper = _helper(kernel, [ADD, "blocked"])
    helper.as_tool()
    boss = _boss(kernel, [_ask_helper(), "done"], rails={"allow_tools": ["helper"]})
    boss.loop().run("go")
    tool_turn = helper.llm.requests[1].messages[-1]
    assert tool_turn.role == "tool" and "allow_tools" in tool_turn.content
