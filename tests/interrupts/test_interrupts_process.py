"""A paused workflow resumes in a new process from its SQLite checkpoint file, without re-running finished nodes."""

import json
import os
import subprocess
import sys

CHILD = os.path.join(os.path.dirname(__file__), "interrupt_child.py")


def child(*args):
    proc = subprocess.run([sys.executable, CHILD, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_run_paused_in_one_process_resumes_with_the_answer_in_another(tmp_path):
    """Process 1 pauses at n1's question; process 2 answers it: n0 ran once, n1 again, n2 once."""
    db, log = str(tmp_path / "runs.db"), str(tmp_path / "ran.log")
    first = child(db, log, "run")
    assert first == {"status": "paused", "outputs": {"v0": "plan for g"}, "questions": ["Approve?"]}
    second = child(db, log, "resume", "yes")
    assert second == {"status": "finished", "outputs": {"v2": "PLAN FOR G: YES"}, "questions": []}
    with open(log) as f:
        assert f.read().split() == ["n0", "n1", "n1", "n2"]
