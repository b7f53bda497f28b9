"""Round fifteen: the approval prompt never takes a yes for text it did not show.

Attack (round fourteen's open one): a value longer than the prompt shows hides its middle (``echo aaaa...;
rm -rf ~; echo aaaa...``), or a value is left out among many keys; the console prompt said how much it did not show,
and ``y`` approved anyway. Defence (``approvals.shown_call``, ``rails.approval._prompt``, ``asked.asked_about``):

- the console prompt says which arguments were not shown, offers ``[v]iew all`` (every argument in full, then the
  call's name and the question again) and refuses a ``y`` until then;
- a call longer in full than ``approvals.FULL`` (20,000 characters) cannot be approved at the console: declined
  without asking, the person and the model told why;
- a workflow's or group chat's question shows the arguments in full up to that limit; past it, it says what was not
  shown and no answer approves the call.
"""

import io
import sys

import pytest

from zagent import Kernel, ToolCall, run_sync
from zagent.agentkit.approvals import FULL

from .conftest import PLUGINS

pytestmark = pytest.mark.timeout(60)

PAD = "echo " + "a" * 2500
HIDDEN = {"command": f"{PAD}; rm -rf ~; {PAD}"}  # the middle of one long value
MANY = {"target": {**{f"k{i}": "routine" for i in range(100)}, "path": "/"}}  # left out after 64 values
HUGE = {"command": "echo " + "a" * (FULL + 100) + "; rm -rf ~"}  # too long to show in full


def _console(monkeypatch, arguments, answers, later=False):
    """The console prompt about ``run_shell(arguments)``, answered by the lines ``answers``: decision, text, reason."""
    from zagent.plugins.rails.approval import _prompt

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    why = []
    decided = _prompt(ToolCall(id="c1", name="run_shell", arguments=arguments), "ops", later, why)
    return decided, err.getvalue(), why


def _before_last_question(text):
    """What the person had been shown when they gave their last answer."""
    return text[:text.rindex("\nAllow? ")]


def test_the_console_takes_a_yes_for_a_cut_call_only_after_showing_it_in_full(monkeypatch):
    """Attack: ``rm -rf ~`` in the middle of a 5,000-character command; the person types ``v``, then ``y``.
    Defence: ``v`` prints every argument in full, then the call's name and the question; only that yes approves,
    and the command was on screen before it."""
    decided, shown, _ = _console(monkeypatch, HIDDEN, "v\ny\n")
    assert decided is True
    first = shown[:shown.index("\nAllow? ")]
    assert "rm -rf ~" not in first and "\nAllow? [v]iew all / [n]o: " in shown  # no [y]es offered before viewing
    seen = _before_last_question(shown)
    assert "; rm -rf ~; " in seen and "wants to run run_shell with the arguments above, shown in full" in seen
    assert shown.endswith("\nAllow? [y]es / [n]o: ")


def test_a_value_left_out_among_many_keys_is_shown_before_a_yes_counts(monkeypatch):
    """Attack: ``target`` holds 100 harmless keys, then ``"path": "/"`` (left out after 64 values); the person types
    ``y``. Defence: that ``y`` is refused, naming the values not shown; after ``v`` the path is shown, and then
    ``y`` approves."""
    decided, shown, _ = _console(monkeypatch, MANY, "y\nv\ny\n")
    assert decided is True
    refused = shown.index("\nNot allowed: ")
    assert '"path"' not in shown[:refused]
    assert 'characters of arguments "target"."k64", "target"."k65", "target"."k66" and 34 more were not shown; ' \
           'press v to see them all, or n to decline' in shown
    assert '"path": "/"' in _before_last_question(shown)[refused:]


def test_a_refused_yes_approves_nothing_when_the_person_then_declines(monkeypatch):
    """Attack: the person answers ``y`` twice to a call whose middle was not shown. Defence: neither approves; the
    end of input after them declines (fail closed)."""
    from zagent.plugins.rails.approval import _NobodyAnswered

    with pytest.raises(_NobodyAnswered):
        _console(monkeypatch, HIDDEN, "y\nyes\n")
    assert sys.stderr.getvalue().count("Not allowed: 4,824 characters of argument \"command\"") == 2


def test_a_cut_call_can_still_be_left_for_later_without_viewing(monkeypatch):
    """Regression: ``l`` (later) needs no view: it approves nothing, and the call waits for another answer."""
    decided, shown, _ = _console(monkeypatch, HIDDEN, "l\n", later=True)
    assert decided is None and "\nAllow? [v]iew all / [n]o / [l]ater: " in shown


def test_a_call_too_long_to_show_in_full_is_declined_at_the_console(monkeypatch, capsys):
    """Attack: a command of 20,100 characters ending in ``; rm -rf ~``, the person's (or a pipe's) ``y`` ready. Defence:
    the console cannot show it in full, so it is declined without asking; the person reads why on stderr, the model
    in the blocked result (what to do instead); nothing runs and the ``y`` line is taken as this prompt's."""
    from zagent.plugins.rails import console_approver

    ran = []
    k = Kernel(plugins=PLUGINS, entry_points=False, config={"rails": {"approver": console_approver}})

    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "ran"

    k.add_tool(run_shell, sensitive=True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\nleft\n"))
    try:
        result = run_sync(k.arun_tool(ToolCall(id="c1", name="run_shell", arguments=HUGE), k.context(agent="ops")))
    finally:
        k.close()
    err = capsys.readouterr().err
    assert ran == [] and result.state == "blocked"
    assert "declined without asking a person" in result.error and "more than the 20,000" in result.error
    assert "make the call with shorter arguments" in result.error
    assert "Declined without asking: " in err and "Allow?" not in err
    assert sys.stdin.readline() == "left\n"  # one answer line per prompt: the next one is not shifted


def test_zagent_chat_runs_a_cut_call_the_person_viewed_and_approved(monkeypatch, capsys):
    """Regression (the REPL's own approver): a long command is viewed with ``v`` and approved with ``y``: it runs
    once, and the REPL goes on."""
    from zagent.plugins.rails import console_approver_now
    from zagent.plugins.react import ReActAgent, cli

    ran = []
    k = Kernel(plugins=PLUGINS, entry_points=False, config={"rails": {"approver": console_approver_now}})

    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "ran"

    k.add_tool(run_shell, sensitive=True)
    call = {"id": "c1", "name": "run_shell", "arguments": HIDDEN}
    agent = ReActAgent(kernel=k, name="chat", llm=k.llm("scripted:chat", replies=[
        {"content": None, "tool_calls": [call]}, "done"]), tools=["run_shell"])
    monkeypatch.setattr(sys, "stdin", io.StringIO("clean up\nv\ny\n"))
    try:
        assert cli._repl(agent, cli._Interrupts(), show_reasoning=False) == 0
    finally:
        k.close()
    assert ran == [HIDDEN["command"]]
    assert "; rm -rf ~; " in capsys.readouterr().err


AGENT = {"type": "customize", "name": "ops", "description": "runs commands", "prompt": "Do this: {goal}",
         "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "tools": ["run_shell"], "parse_mode": "str"}


def _flow(ran, db, arguments, answer=None):
    """A one-node workflow whose agent calls sensitive ``run_shell(arguments)`` (its approver: "later"); run, or
    resumed with ``answer``."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = Kernel(plugins=PLUGINS, entry_points=False, config={"rails": {"approver": lambda call, ctx: None}})

    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "ran"

    k.add_tool(run_shell, sensitive=True)
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "inputs": [{"name": "goal"}], "edges": [],
                                     "nodes": [{"name": "clean", "description": "clean", "inputs": [{"name": "goal"}],
                                                "outputs": [{"name": "answer"}], "agents": [AGENT]}]})
    reply = {"content": None, "tool_calls": [{"id": "c1", "name": "run_shell", "arguments": arguments}]}
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[reply, "done"]), checkpoints=db)
        if answer is None:
            return ex.run(graph, {"goal": "free disk"}, run_id="wf")
        return ex.resume("wf", graph=graph, answer=answer)
    finally:
        k.close()


def test_a_workflow_question_shows_a_command_hidden_in_the_middle_of_a_long_value(tmp_path):
    """Attack: a node's model hides ``rm -rf ~`` between two runs of 2,500 characters; the question cut the value
    to its ends (2,000 characters shown) and a "yes" approved it. Defence: up to 20,000 characters the question
    shows the arguments in full."""
    paused = _flow([], str(tmp_path / "wf.db"), HIDDEN)
    question = paused.interrupts[0].question
    assert paused.status == "paused" and HIDDEN["command"] in question and "not shown" not in question


def test_a_workflow_yes_to_a_call_too_long_to_show_approves_nothing(tmp_path):
    """Attack: a node's model sends a 20,100-character command ending in ``; rm -rf ~``; the person (or an app
    answering every question "yes") resumes with "yes". Defence: the question says what it did not show and that
    any answer declines the call; the yes declines it, nothing runs."""
    ran, db = [], str(tmp_path / "wf.db")
    question = _flow(ran, db, HUGE).interrupts[0].question
    assert 'characters of argument "command" were not shown' in question
    assert "cannot be approved here and any answer declines it" in question and "rm -rf ~" in question[-300:]
    done = _flow(ran, db, HUGE, answer="yes")
    assert ran == [] and done.status != "paused"
