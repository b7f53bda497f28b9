"""A run paused mid-batch (or awaiting approval) resumes in a fresh process; every tool runs exactly once."""

import json
import os
import pathlib
import signal
import subprocess
import sys

from zagent.testing import wait_until

CHILD = str(pathlib.Path(__file__).with_name("react_child.py"))


def _child(*args):
    proc = subprocess.run([sys.executable, CHILD, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_paused_mid_batch_resumes_in_fresh_process_exactly_once(tmp_path):
    """Paused after 2 of 3 calls and resumed in a new process, each tool has run exactly once."""
    db, log = str(tmp_path / "runs.db"), str(tmp_path / "tools.log")
    run_id = _child("first", db, log)
    assert pathlib.Path(log).read_text().split() == ["t1", "t2"]
    result = json.loads(_child("resume", db, log, run_id))
    assert pathlib.Path(log).read_text().split() == ["t1", "t2", "t3"]
    assert result["content"] == "done"
    assert [t[1] for t in result["tools"]] == ["t1", "t2", "t3"]


def test_call_awaiting_approval_resumes_with_approval_given(tmp_path):
    """A sensitive call left awaiting approval runs once, in the new process, after approval."""
    db, log = str(tmp_path / "runs.db"), str(tmp_path / "tools.log")
    run_id = _child("first", db, log, "approval")
    assert pathlib.Path(log).read_text().split() == ["t1", "t3"]
    result = json.loads(_child("resume", db, log, run_id))
    assert sorted(pathlib.Path(log).read_text().split()) == ["t1", "t2", "t3"]
    assert [t[0] for t in result["tools"]] == ["record", "record", "danger"]
    assert result["tools"][-1][2] == "ok t2"


def test_killed_mid_tool_call_resumes_without_rerunning_finished_calls(tmp_path):
    """SIGKILL while the 2nd of 3 calls runs: the resumed run never reruns the finished call, reruns the
    interrupted one (it never reported a result) and runs the third once."""
    db, log = str(tmp_path / "runs.db"), tmp_path / "tools.log"
    proc = subprocess.Popen([sys.executable, CHILD, "killed", db, str(log)], stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: log.exists() and log.read_text().split() == ["t1", "t2"] or proc.poll() is not None,
                   "the second call to start", polls=60000)
        assert proc.poll() is None, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
    result = json.loads(_child("resume", db, str(log), "killed-run"))
    assert log.read_text().split() == ["t1", "t2", "t2", "t3"]
    assert result["content"] == "done"
    assert [t[1] for t in result["tools"]] == ["t1", "t2", "t3"]


def test_killed_run_resumed_in_a_fresh_process_keeps_its_tool_budget(tmp_path):
    """SIGKILL mid-batch under a budget of 2 calls: the resumed run (a new process given the same rails, its
    counts from the checkpoint's stash) still counts the calls made before the kill, so the third is blocked."""
    db, log = str(tmp_path / "runs.db"), tmp_path / "tools.log"
    proc = subprocess.Popen([sys.executable, CHILD, "budget", db, str(log)], stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: log.exists() and log.read_text().split() == ["t1", "t2"] or proc.poll() is not None,
                   "the second call to start", polls=60000)
        assert proc.poll() is None, proc.stderr.read()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        proc.stderr.close()
    result = json.loads(_child("resume", db, str(log), "killed-run", "budget"))
    assert "t3" in result["blocked"] and "t3" not in log.read_text().split()
    assert result["content"] == "done"
