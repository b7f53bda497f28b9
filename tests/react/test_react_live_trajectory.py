"""The live trajectory: each ReAct step is appended to a JSONL file as it happens, so a run killed mid-way
leaves the steps it finished; ``TrajectoryRecorder`` offers Agent-Z's recorder API over the same file."""

import json
import subprocess
import sys
import textwrap

from zagent.plugins.react import ReActLoop, TrajectoryRecorder, read_live

from .conftest import call

CHILD = textwrap.dedent('''
    import os, signal, sys
    from zagent import Kernel
    from zagent.plugins.react import ReActLoop

    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.react"],
               entry_points=False)
    k.add_tool(lambda a, b: a + b, name="add")
    k.add_tool(lambda: os.kill(os.getpid(), signal.SIGKILL), name="crash")
    calls = [{"tool_calls": [{"name": n, "arguments": a}]} for n, a in
             (("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), ("crash", {}))]
    llm = k.llm("scripted:child", replies=calls + ["never reached"])
    ReActLoop(kernel=k, llm=llm, tools=["add", "crash"], live_trajectory_path=sys.argv[1]).run("add, then crash")
''')


def test_a_killed_run_leaves_the_steps_it_finished(tmp_path):
    """Seed 004 (Agent-Z TrajectoryRecorder): "+ add_tool_call() / + add_tool_response() / + save_trajectory()"
    (the recorder adds each event as it happens, then saves). A ReAct run killed (SIGKILL) during its third
    tool call leaves its start and its first two steps in the live file, read back as an ``incomplete``
    run; no line is cut."""
    path = tmp_path / "live.jsonl"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    [run] = list(read_live(str(path)))
    assert run["status"] == "incomplete" and run["task"] == "add, then crash"
    assert [(s["tool"], s["parameters"], s["result"]) for s in run["steps"]] == [
        ("add", {"a": 1, "b": 2}, "3"), ("add", {"a": 3, "b": 4}, "7")]
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_a_finished_run_ends_with_its_status(kernel, tmp_path):
    """Seed 004 (Agent-Z Curator flow): "chat complete → save_trajectory" (a finished chat saves its
    trajectory). A run that completes writes its steps as they happen and an ``end`` line with the status
    and the answer."""
    path = str(tmp_path / "live.jsonl")
    llm = kernel.llm("scripted:done", replies=[call("add", a=2, b=3), "It is 5."])
    ReActLoop(kernel=kernel, llm=llm, tools=["add"], live_trajectory_path=path).run("2+3?")
    [run] = list(read_live(path))
    assert run["status"] == "completed" and run["final"] == "It is 5."
    assert [s["action"] for s in run["steps"]] == ["use_tool", "direct_response"]


def test_the_recorder_writes_each_event_before_returning(tmp_path):
    """Seed 004 (Agent-Z TrajectoryRecorder): "+ initialize() + add_human_message() + add_tool_call()
    + add_tool_response() + add_gpt_message() + save_trajectory() + get_trajectory()". Each call is on disk
    when it returns (one more line each); ``get_trajectory`` and ``read_live`` give the same ShareGPT turns."""
    path = tmp_path / "rec.jsonl"
    rec = TrajectoryRecorder(str(path), agent="helper")
    steps = [lambda: rec.initialize(task="weather in Oslo"), lambda: rec.add_human_message("weather in Oslo?"),
             lambda: rec.add_tool_call("weather", {"city": "Oslo"}, "c1"),
             lambda: rec.add_tool_response("weather", "rain", "c1"), lambda: rec.add_gpt_message("It rains."),
             lambda: rec.save_trajectory("completed", final="It rains.")]
    for n, step in enumerate(steps, 1):
        step()
        assert len(path.read_text().splitlines()) == n
    [run] = list(read_live(str(path)))
    assert run == rec.get_trajectory()
    assert [t["from"] for t in run["conversations"]] == ["human", "function_call", "observation", "gpt"]
    assert run["status"] == "completed" and run["agent"] == "helper"
