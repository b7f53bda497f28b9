"""``zagent logs list|show|search``: readable trees for a ReAct run, a workflow and a group chat; JSON; errors."""

import json

import pytest

from zagent import Kernel
from zagent.plugins.cli import main

from .conftest import PLUGINS, run_scenario


@pytest.fixture
def cli(log_path):
    """``cli(*args)`` runs ``zagent logs ... --db log_path`` and returns (exit code, stdout, stderr)."""

    def run(*args, capsys=None):
        k = Kernel(PLUGINS, entry_points=False, strict=True)
        try:
            return main(["logs", *args, "--db", log_path], kernel=k)
        finally:
            k.close()

    return run


def shown(cli, capsys, run="latest"):
    assert cli("show", run) == 0
    return capsys.readouterr().out.splitlines()


def test_show_prints_a_react_run_as_run_step_llm_tool_tree(make_logged, cli, capsys):
    """The ReAct run: run, step 1 with its LLM call and both tools nested, then step 2 with the answer."""
    run_scenario(make_logged, "react_two_tools")
    lines = shown(cli, capsys)
    assert lines[0].startswith("run  helper") and " ok" in lines[0]
    assert lines[1].startswith("├─ step  step 1")
    assert lines[2].startswith("│  ├─ llm  test:offline") and "tokens" in lines[2] and "calls word_count, shout" in lines[2]
    assert {lines[3].split()[3], lines[4].split()[3]} == {"word_count", "shout"}
    assert lines[5].startswith("└─ step  step 2") and lines[6].startswith("   └─ llm  test:offline")


def test_show_prints_a_workflow_as_nodes_with_their_agent_runs(make_logged, cli, capsys):
    """The 3-node workflow: the workflow, its three nodes, each with its agent run, step and LLM call."""
    run_scenario(make_logged, "three_node_workflow")
    lines = shown(cli, capsys)
    assert lines[0].startswith("workflow  report")
    nodes = [line.split("node  ")[1].split()[0] for line in lines if "node  " in line]
    assert nodes[0] == "outline" and sorted(nodes[1:]) == ["left", "right"]
    assert sum(" llm  " in line for line in lines) == 3 and len(lines) == 13


def test_show_prints_a_group_chat_as_turns_by_speaker(make_logged, cli, capsys):
    """The group chat: one turn per round, named by its speaker, each with the speaker's LLM call."""
    run_scenario(make_logged, "group_chat")
    lines = shown(cli, capsys)
    assert lines[0].startswith("groupchat")
    assert [line.split("turn  ")[1].split()[0] for line in lines if "turn  " in line] == ["A", "B"]
    assert sum(" llm  " in line for line in lines) == 2


def test_list_json_names_each_run_with_counts(make_logged, cli, capsys):
    """logs list --json: one object per run, newest first, with LLM and tool call counts and tokens."""
    for name in ("react_two_tools", "three_node_workflow", "group_chat"):
        run_scenario(make_logged, name)
    assert cli("list", "--json") == 0
    runs = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["llm_calls"], r["tool_calls"]) for r in runs] == [
        ("groupchat", 2, 0), ("workflow", 3, 0), ("run", 2, 2)]
    assert all(r["input_tokens"] > 0 and r["outcome"] == "ok" for r in runs)


def test_search_finds_a_prompt_and_json_show_returns_rows(make_logged, cli, capsys):
    """logs search finds the words of the user's request; show --json returns the run's rows."""
    run_scenario(make_logged, "react_two_tools")
    assert cli("search", "quick brown", "--json") == 0
    found = json.loads(capsys.readouterr().out)
    assert found and "llm" in {r["kind"] for r in found}
    assert cli("show", found[0]["run_id"], "--json") == 0
    assert {r["kind"] for r in json.loads(capsys.readouterr().out)} >= {"run", "step", "llm", "tool"}


def test_search_treats_percent_and_underscore_literally(make_logged, cli, capsys):
    """A search for '%' matches only rows containing '%', not everything."""
    run_scenario(make_logged, "react_two_tools")
    assert cli("search", "%", "--json") == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_missing_log_or_run_is_a_clear_error(make_logged, cli, capsys, log_path, tmp_path):
    """No file: an error saying how to turn logging on (and no file created); an unknown run: named."""
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    missing = tmp_path / "none.db"
    assert main(["logs", "list", "--db", str(missing)], kernel=k) == 1
    k.close()
    assert "ZAGENT_LOG=1" in capsys.readouterr().err and not missing.exists()
    run_scenario(make_logged, "group_chat")
    assert cli("show", "run-nope") == 1
    assert "no run 'run-nope'" in capsys.readouterr().err


def test_show_names_the_error_of_a_failed_call(make_logged, cli, capsys):
    """A tool that raised: its line says outcome error and the error text."""
    k = make_logged()

    def boom() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    k.add_tool(boom)
    k.run_tool({"name": "boom", "arguments": {}})
    k.close()
    [line] = shown(cli, capsys)
    assert line.startswith("tool  boom") and "  error  " in line and "disk on fire" in line


def test_terminal_escapes_in_tool_output_are_shown_not_obeyed(make_logged, cli, capsys):
    """A tool result and error holding ANSI/OSC escapes print as \\x1b..., never as raw control characters."""
    k = make_logged()

    def evil() -> str:
        """Misbehave."""
        raise RuntimeError("\x1b]0;pwned\x07\x1b[2J gone")

    def loud() -> str:
        """Shout."""
        return "\x1b[31mred\x1b[0m"

    k.add_tool(evil)
    k.add_tool(loud)
    k.run_tool({"name": "evil", "arguments": {}})
    k.run_tool({"name": "loud", "arguments": {}})
    k.close()
    out = "\n".join(shown(cli, capsys))
    assert cli("list") == 0 and cli("search", "pwned") == 0
    out += capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred" in out and "\\x1b]0;pwned\\x07" in out
