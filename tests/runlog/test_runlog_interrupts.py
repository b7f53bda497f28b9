"""Ctrl-C twice (once in a run, once while the kernel closes) keeps the run's log rows: a real child process,
real SIGINTs, a real SQLite log."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

from zagent.plugins.runlog.store import RunLogStore

CHILD = str(pathlib.Path(__file__).with_name("interrupt_child.py"))


def _wait_for(proc, text):
    for line in proc.stdout:
        if line.strip() == text:
            return
    raise AssertionError(f"the child ended before {text!r}: {proc.stderr.read()[-2000:]}")


def test_a_second_ctrl_c_during_close_keeps_the_run_log_rows(tmp_path):
    """Ctrl-C while the tool runs, again while the kernel closes: the close still finishes, so the run, its
    step, LLM call and tool call are all in the log (the open ones marked unfinished)."""
    db = tmp_path / "logs.db"
    env = {**os.environ, "ZAGENT_LOG": "1", "ZAGENT_LOG_DB": str(db)}
    proc = subprocess.Popen([sys.executable, CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        _wait_for(proc, "tool running")
        proc.send_signal(signal.SIGINT)
        _wait_for(proc, "closing")
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert db.exists(), "nothing was logged"
    store = RunLogStore.open(db)
    [run] = store.runs()
    kinds = {r["kind"] for r in store.spans(run["run_id"])}
    assert {"run", "step", "llm", "tool"} <= kinds, kinds
