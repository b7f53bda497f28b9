"""`zagent run` blames the right thing and builds any agent type (issue 15, finding 5)."""

from __future__ import annotations

import json


from zagent.plugins.cli import main


def write(tmp_path, name, spec):
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    return str(path)


def test_a_bad_input_value_is_reported_as_an_input_problem(kernel, tmp_path, capsys):
    """--input x=abc for an integer input names the input and its type; it says nothing of a reply or
    of asking the model again, and no model is called."""
    path = write(tmp_path, "n.json", {"name": "counter", "prompt": "Count to {x}", "llm": "scripted:m",
                                      "llm_config": {"replies": []},
                                      "inputs": [{"name": "x", "type": "integer"}], "outputs": [{"name": "answer"}]})
    assert main(["run", path, "--input", "x=abc"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "bad --input value for agent 'counter' (x: expected integer, got 'abc')" in err
    assert "reply" not in err and "ask the model" not in err


def test_a_react_agent_file_runs_with_zagent_run(kernel, tmp_path, capsys):
    """A file of type react is built through the agent-type registry and chats with --input task=..."""
    path = write(tmp_path, "r.json", {"type": "react", "name": "helper", "tools": ["add"], "llm": "scripted:m",
                                      "llm_config": {"replies": [
                                          "yes", {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
                                          "2 + 3 = 5"]}})
    assert main(["run", path, "--input", "task=what is 2 + 3?", "--quiet"], kernel=kernel) == 0
    assert capsys.readouterr().out.strip() == "2 + 3 = 5"


def test_a_react_agent_file_without_a_task_says_how_to_give_one(kernel, tmp_path, capsys):
    """A chat agent takes its message as --input task=...; other inputs are named as not taken."""
    path = write(tmp_path, "r.json", {"type": "react", "name": "helper", "llm": "scripted:m",
                                      "llm_config": {"replies": []}})
    assert main(["run", path, "--input", "question=hi"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "helper is a chat agent" in err and '--input task="..."' in err and "question" in err
    assert "prompt_template" not in err


def test_a_type_zagent_run_cannot_run_gets_a_clear_message(kernel, tmp_path, capsys):
    """A group chat file is built, then refused with the command that runs it."""
    path = write(tmp_path, "g.json", {"type": "groupchat", "name": "team", "agents": [
        {"name": "A", "prompt": "Say hi about {task}", "inputs": [{"name": "task"}], "outputs": [{"name": "answer"}],
         "llm": "scripted:m", "llm_config": {"replies": []}}]})
    assert main(["run", path, "--input", "task=x"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "cannot run" in err and "zagent groupchat run" in err


def test_an_unknown_agent_type_lists_the_installed_ones(kernel, tmp_path, capsys):
    """type: 'nope' names the registered agent types."""
    path = write(tmp_path, "x.json", {"type": "nope", "name": "x"})
    assert main(["run", path], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "unknown agent type 'nope'" in err and "react" in err and "customize" in err


def test_zagent_run_of_a_react_file_reports_a_401_after_one_request(kernel, server, tmp_path, capsys):
    """End to end through the CLI: the auth error is what the user reads, after exactly one request."""
    from .conftest import llm_config

    path = write(tmp_path, "r.json", {"type": "react", "name": "helper", "tools": ["add"], "llm": "openai:gpt-test",
                                      "llm_config": llm_config(server)})
    assert main(["run", path, "--input", "task=what is 2 + 3?", "--quiet"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "rejected the API key" in err and "max_iterations" not in err
    assert len(server.requests) == 1


def test_a_failed_step_s_progress_line_names_its_number_and_says_failed(kernel, tmp_path, capsys):
    """A model call that raises: the progress line reads 'step 1: failed', never 'step None: no answer yet'."""
    path = write(tmp_path, "f.json", {"name": "Answerer", "prompt": "Answer: {question}", "llm": "scripted:m",
                                      "llm_config": {"replies": []}, "inputs": [{"name": "question"}],
                                      "outputs": [{"name": "answer"}]})
    assert main(["run", path, "--input", "question=x"], kernel=kernel) == 1
    err = capsys.readouterr().err
    assert "[Answerer] step 1: failed" in err and "None" not in err and "no answer yet" not in err
