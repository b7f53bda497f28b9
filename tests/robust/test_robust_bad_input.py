"""Everything a user or a model feeds in gets a typed error naming what is wrong (issue 15, finding 4).

Spec files, API arguments, inputs and tool-call arguments from a model are
hostile input: none of them may end in ``RecursionError``, ``TypeError``,
``ValueError`` or ``UnicodeEncodeError`` from deep inside zagent.
"""

from __future__ import annotations

import json

import pytest

from zagent.errors import ConfigError
from zagent._trust.limits import MAX_DEPTH

from tests.servers.openai_server import completion

from .conftest import llm_config

DECLARED = {"name": "asker", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}]}


def deep_list(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = [value]
    return value


def test_a_deeply_nested_json_spec_file_is_a_config_error(kernel, tmp_path):
    """100,000 nested brackets in a JSON spec: ConfigError naming the file, no RecursionError."""
    path = tmp_path / "deep.json"
    path.write_text('{"name": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match="deep.json: nested deeper"):
        kernel.agent(path)


def test_a_deeply_nested_yaml_spec_file_is_a_config_error(kernel, tmp_path):
    """The same in YAML flow style."""
    pytest.importorskip("yaml")
    path = tmp_path / "deep.yaml"
    path.write_text("name: a\nx: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="deep.yaml: nested deeper"):
        kernel.agent(path)


def test_a_spec_nested_past_the_limit_names_where(kernel, tmp_path):
    """Nesting Python can read but past MAX_DEPTH is refused with the key path where it happens."""
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({**DECLARED, "agent_config": {"extra": deep_list(MAX_DEPTH + 5)}}))
    with pytest.raises(ConfigError, match=r"nested.json: at agent_config\.extra\[0\].*nested deeper than 100"):
        kernel.agent(path)


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(kernel, tmp_path):
    """A 'billion laughs' YAML file (9 levels of 9 aliases) is a ConfigError about its size."""
    pytest.importorskip("yaml")
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("name: a\n" + "\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="bomb.yaml: .*more than 1,000,000 values"):
        kernel.agent(path)


def test_a_json_syntax_error_names_file_line_and_column(kernel, tmp_path):
    """The error points at the line of the mistake, not only a byte offset."""
    path = tmp_path / "bad.json"
    path.write_text('{\n  "name": "a",\n  "prompt": "x",,\n}\n')
    with pytest.raises(ConfigError, match=r"bad.json:3:\d+: not valid JSON"):
        kernel.agent(path)


def test_a_yaml_syntax_error_names_file_line_and_column(kernel, tmp_path):
    """YAML errors are one line: file:line:column and the problem."""
    pytest.importorskip("yaml")
    path = tmp_path / "bad.yaml"
    path.write_text("name: a\nprompt: [1, 2\noutputs: : :\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:3:\d+: not valid YAML: expected"):
        kernel.agent(path)


@pytest.mark.parametrize("spec", [5, None, 3.5, ["a"]])
def test_an_agent_spec_of_the_wrong_type_is_a_config_error(kernel, spec):
    """k.agent(5) or k.agent(None) names the type received and what is expected."""
    with pytest.raises(ConfigError, match="expected a spec"):
        kernel.agent(spec)


def test_a_spec_path_with_a_nul_byte_is_a_config_error(kernel):
    """A NUL character in a path is a ConfigError, not ValueError('embedded null byte')."""
    with pytest.raises(ConfigError, match="not a usable path"):
        kernel.agent("agent\x00.json")


def test_a_relative_import_path_for_a_tool_is_a_config_error(kernel):
    """'.module:function' is not importable without a package: a ConfigError naming it, not TypeError."""
    with pytest.raises(ConfigError, match=r"\.tools:add"):
        kernel.agent({**DECLARED, "tools": [".tools:add"]}, **_trust(kernel))


def _trust(kernel):
    """``trust=True`` where this kernel's ``agent`` takes it (specs are data unless trusted)."""
    import inspect

    return {"trust": True} if "trust" in inspect.signature(kernel.agent).parameters else {}


def test_a_lone_surrogate_in_an_input_names_the_input(kernel):
    """'\\ud800' cannot be encoded as UTF-8: ConfigError naming the input, before any request."""
    agent = kernel.agent({**DECLARED, "llm": "scripted:m", "llm_config": {"replies": ["## answer\nx"]}})
    with pytest.raises(ConfigError, match=r"input 'question'.*lone surrogate '\\ud800' at index 3"):
        agent(question="why\ud800")
    assert agent.llm.calls == 0


def test_a_50000_deep_input_names_the_input(kernel):
    """A 50,000-deep list as an input value is a ConfigError naming it, not RecursionError."""
    agent = kernel.agent({**DECLARED, "llm": "scripted:m", "llm_config": {"replies": ["## answer\nx"]}})
    with pytest.raises(ConfigError, match=r"input 'question': .*nested deeper than 100 levels"):
        agent(question=deep_list(50_000))


def test_a_lone_surrogate_in_a_chat_message_is_a_config_error(kernel):
    """ReAct chat input is checked the same way."""
    agent = kernel.agent({"type": "react", "name": "r", "llm": "scripted:m", "llm_config": {"replies": ["hi"]}})
    with pytest.raises(ConfigError, match="user_input.*lone surrogate"):
        agent.chat("hello \udfff", use_react=True)


def test_on_error_ignore_is_refused_when_the_agent_is_built(kernel):
    """A ReAct spec with on_error 'ignore' is a ConfigError from k.agent, not ValueError at the first chat."""
    with pytest.raises(ConfigError, match="on_error must be one of 'continue', 'stop', got 'ignore'"):
        kernel.agent({"type": "react", "name": "r", "on_error": "ignore"})


def test_deeply_nested_tool_arguments_from_a_server_become_an_error_result(kernel, server):
    """A real server's tool call whose arguments are nested 50,000 deep: the model gets an error result
    naming the limit, the run goes on, and the next request (which repeats the call) is valid JSON."""
    arguments = '{"a": ' + "[" * 50_000 + "]" * 50_000 + ', "b": 1}'
    server.then(completion(tool_calls=[{"id": "call_1", "name": "add", "arguments": arguments}]),
                completion("I could not add that."))
    agent = kernel.agent({"type": "react", "name": "r", "tools": ["add"], "llm": "openai:gpt-test",
                          "llm_config": llm_config(server, key="sk-right")})
    response = agent.chat("add these", use_react=True)
    assert response.content == "I could not add that."
    tool_step = next(s for s in response.steps if s.tool == "add")
    assert tool_step.is_error and "nested deeper than 100 levels" in tool_step.result
    assert len(server.requests) == 2
    sent = server.requests[1].json["messages"]
    assert sent[-1]["role"] == "tool" and "nested deeper" in sent[-1]["content"]


def test_deeply_nested_tool_arguments_in_a_declared_agent_are_an_error_result(kernel, tmp_path):
    """A model's call nested past the limit (built as a dict, as Anthropic/Ollama replies are) is an error
    result in CustomizeAction too; the agent then answers."""
    from zagent.plugins.actions import CustomizeAgent

    deep = {"a": deep_list(500), "b": 1}
    llm = kernel.llm("scripted:m", replies=[lambda request: {"tool_calls": [{"name": "add", "arguments": deep}]},
                                            "## answer\nno"])
    agent = CustomizeAgent.from_dict({**DECLARED, "tools": ["add"]}, kernel, llm=llm)
    result = agent(question="add")
    assert result.answer == "no"
    assert result.tool_results[0].state == "error" and "nested deeper" in result.tool_results[0].content


def test_deeply_nested_text_tool_calls_are_an_error_result_and_checkpoint(kernel, tmp_path):
    """Prompt-mode (text) tool calls nested 800 deep: error result, and the ReAct checkpoints still encode."""
    from zagent.plugins.react import ReActLoop

    text = '<tool_call>{"name": "add", "arguments": {"a": ' + "[" * 800 + "]" * 800 + ', "b": 1}}</tool_call>'
    llm = kernel.llm("scripted:m", replies=[text, "gave up"], profile={"native_tools": False})
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    result = ReActLoop(kernel=kernel, llm=llm, tools=["add"], checkpoints=store).run("add")
    assert result.content == "gave up"
    assert any(s.tool == "add" and s.is_error and "nested deeper" in s.result for s in result.steps)


def test_a_dict_spec_nested_past_the_limit_is_a_config_error(kernel):
    """k.agent(dict) checks the data the same way a file is checked (every spec kind converts through it)."""
    with pytest.raises(ConfigError, match=r"invalid agent spec 'asker': at llm_config\.replies.*nested deeper"):
        kernel.agent({**DECLARED, "llm": "scripted:m", "llm_config": {"replies": [deep_list(5_000)]}})


def test_a_chat_message_that_is_not_text_is_a_config_error(kernel):
    """agent.chat(5) says the message must be text."""
    agent = kernel.agent({"type": "react", "name": "r", "llm": "scripted:m", "llm_config": {"replies": ["hi"]}})
    with pytest.raises(ConfigError, match="must be text"):
        agent.chat(5)


def test_workflow_inputs_that_are_not_a_mapping_are_a_config_error(kernel):
    """WorkFlowExecutor.run(graph, ["x"]) names what inputs must be."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"goal": "g", "inputs": [{"name": "topic"}], "nodes": [
        {"name": "a", "description": "d", "inputs": [{"name": "topic"}], "outputs": [{"name": "x"}],
         "agents": [lambda topic: {"x": topic}]}]})
    with pytest.raises(ConfigError, match="workflow inputs must be a mapping"):
        WorkFlowExecutor(kernel=kernel).run(graph, ["topic"])
    with pytest.raises(ConfigError, match="workflow input 'topic'.*lone surrogate"):
        WorkFlowExecutor(kernel=kernel).run(graph, {"topic": "\udc80"})


@pytest.mark.parametrize("spec", [5, ["openai:x"], {"model": "x"}])
def test_a_model_that_is_not_a_string_is_a_config_error(kernel, spec):
    """k.llm(5) names what a model spec looks like (was AttributeError: 'int' object has no attribute 'partition')."""
    with pytest.raises(ConfigError, match="'provider:model' string"):
        kernel.llm(spec)


def test_backend_options_of_the_wrong_type_are_a_config_error(kernel):
    """k.memory('sqlite', path=5) names the backend and its options, not a TypeError from the plugin."""
    with pytest.raises(ConfigError, match=r"memory backend 'sqlite' does not accept these options \(path\)"):
        kernel.memory("sqlite", path=5)


def test_one_tool_name_given_as_a_string_is_that_tool(kernel):
    """k.tools('add') is the add tool, not the tools named 'a' and 'd'."""
    assert [t.name for t in kernel.tools("add")] == ["add"]


def test_a_spec_file_past_16_mib_is_refused_unread(kernel, tmp_path):
    """A huge file is not read whole into memory: ConfigError naming the file and the limit."""
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.write(b'{"name": "a", "description": "')
        f.truncate(17 * 2**20)
    with pytest.raises(ConfigError, match="huge.json is larger than 16 MiB"):
        kernel.agent(path)


def test_restoring_from_a_damaged_or_missing_state_is_a_config_error(kernel, tmp_path):
    """ReActLoop.restore names the missing run, the unreadable file or the damaged state."""
    from zagent.plugins.react import ReActLoop

    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    llm = kernel.llm("scripted:m", replies=[])
    with pytest.raises(ConfigError, match="no checkpoint for run 'nope'"):
        ReActLoop.restore(kernel, "nope", checkpoints=store, llm=llm)
    with pytest.raises(ConfigError, match="cannot read the run state file"):
        ReActLoop.restore(kernel, str(tmp_path / "missing.json"), llm=llm)
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"run_id": 5, "status": "running"}')
    with pytest.raises(ConfigError, match="damaged.json' is not a ReAct run state"):
        ReActLoop.restore(kernel, str(damaged), llm=llm)
    with pytest.raises(ConfigError, match="got int"):
        ReActLoop.restore(kernel, 5, llm=llm)


def test_chat_history_with_a_lone_surrogate_names_the_message(kernel):
    """A history passed to chat is checked like the message: ConfigError naming which history message."""
    agent = kernel.agent({"type": "react", "name": "r", "llm": "scripted:m", "llm_config": {"replies": ["hi"]}})
    history = [{"role": "user", "content": "fine"}, {"role": "assistant", "content": "bad \udc00"}]
    with pytest.raises(ConfigError, match="history message #1 .*lone surrogate"):
        agent.chat("hello", history=history, use_react=False)
    with pytest.raises(ConfigError, match="bad message .*content"):
        agent.chat("hello", history=[{"role": "user", "content": 5}], use_react=False)


def test_hostile_batch_lines_fail_alone_and_the_batch_goes_on(kernel, tmp_path):
    """A batch input file with a 100,000-deep line, a 150-deep value and a lone surrogate: each is a failed
    item naming its problem; the good lines run."""
    path = tmp_path / "in.jsonl"
    lines = ['{"question": "fine"}',
             '{"question": ' + "[" * 100_000 + "]" * 100_000 + "}",
             json.dumps({"question": deep_list(150)}),
             json.dumps({"question": "bad \udc80"}),
             '{"question": "also fine"}']
    path.write_text("\n".join(lines) + "\n")
    kernel.add_plugin("zagent.plugins.batch")
    report = kernel.batch({**DECLARED, "llm": "test:offline"}, str(path))
    by_line = {r["line"]: r for r in report.results}
    assert by_line[1]["ok"] and by_line[5]["ok"]
    assert "not valid JSON" in by_line[2]["error"]["message"]
    assert "nested deeper than 100" in by_line[3]["error"]["message"]
    assert "surrogate" in by_line[4]["error"]["message"]
