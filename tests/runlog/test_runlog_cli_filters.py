"""``zagent logs list --status/--agent/--since`` filters and ``zagent logs show RUN --step N``."""

import json
import time

import pytest

from zagent import Kernel
from zagent.plugins.cli import main

from .conftest import PLUGINS, run_scenario


@pytest.fixture
def logs(log_path, capsys):
    """``logs(*args)``: (exit code, stdout, stderr) of ``zagent logs ... --db log_path``."""

    def run(*args):
        k = Kernel(PLUGINS, entry_points=False, strict=True)
        try:
            code = main(["logs", *args, "--db", log_path], kernel=k)
        finally:
            k.close()
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def _failing_run(make_logged):
    k = make_logged()
    k.run_tool({"name": "no_such_tool", "arguments": {}})
    k.close()


def test_list_filters_by_status_and_agent(make_logged, logs):
    """--status keeps runs with that outcome, --agent the runs of that agent; both together intersect."""
    run_scenario(make_logged, "react_two_tools")
    run_scenario(make_logged, "three_node_workflow")
    _failing_run(make_logged)
    code, out, _ = logs("list", "--json", "--status", "ok")
    assert code == 0 and {r["outcome"] for r in json.loads(out)} == {"ok"} and len(json.loads(out)) == 2
    code, out, _ = logs("list", "--json", "--agent", "helper")
    assert [r["name"] for r in json.loads(out)] == ["helper"]
    code, out, _ = logs("list", "--json", "--agent", "helper", "--status", "error")
    assert json.loads(out) == []


def test_list_since_takes_durations_and_dates(make_logged, logs):
    """--since 1h keeps a run just made; a date in the future keeps none; nonsense is a clear error."""
    run_scenario(make_logged, "react_two_tools")
    assert len(json.loads(logs("list", "--json", "--since", "1h")[1])) == 1
    tomorrow = time.strftime("%Y-%m-%d", time.localtime(time.time() + 2 * 86400))
    assert json.loads(logs("list", "--json", "--since", tomorrow)[1]) == []
    code, _, err = logs("list", "--since", "yesterday")
    assert code == 1 and "neither a duration (30m, 2h, 7d) nor a date" in err


def test_show_step_prints_the_prompt_reply_and_tool_calls(make_logged, logs):
    """--step 1 of a ReAct run prints the user's request, the reply's calls and each tool's arguments and result."""
    run_scenario(make_logged, "react_two_tools")
    code, out, _ = logs("show", "latest", "--step", "1")
    assert code == 0
    assert "[user]" in out and "── reply" in out and "calls word_count(" in out
    assert "── tool word_count" in out and "arguments: {" in out and "result: " in out


def test_show_an_unknown_step_says_how_to_see_the_steps(make_logged, logs):
    """A step the run does not have is an error naming it and the command that lists the steps."""
    run_scenario(make_logged, "react_two_tools")
    code, _, err = logs("show", "latest", "--step", "9")
    assert code == 1 and "has no step 9" in err and "zagent logs show latest" in err
