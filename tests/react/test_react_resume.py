"""A run paused mid-batch (or awaiting approval) resumes in a fresh process; every tool runs exactly once."""

import json
import pathlib
import subprocess
import sys

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
