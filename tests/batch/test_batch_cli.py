"""``zagent batch`` as a user runs it: a real subprocess, interrupted by SIGKILL and by Ctrl-C, then resumed."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from .conftest import QA, read_jsonl, write_jsonl

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[1]


def _files(tmp_path, n=1000):
    import shutil

    shutil.copy(HERE / "slowtools.py", tmp_path / "slowtools.py")  # next to the spec: trusted as `zagent run` does
    agent = tmp_path / "slow_qa.json"
    agent.write_text(json.dumps({**QA, "tools": ["slowtools:lookup"]}))
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"id": f"q{i}", "question": f"question {i}"} for i in range(n)])
    return agent, inputs, tmp_path / "out.jsonl"


def _sigint_default():
    """In the child: SIGINT back to its default, as at a terminal (a suite started as a background job hands
    children SIGINT ignored, and Python keeps an inherited ignore, so the Ctrl-C test's SIGINT would be lost)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(agent, inputs, out, *extra):
    env = dict(os.environ)
    env.pop("ZAGENT_MODEL", None)
    env.pop("RAY_ADDRESS", None)
    return subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "batch", str(agent), str(inputs),
                             "--out", str(out), "--concurrency", "4", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            preexec_fn=_sigint_default)


def _wait_for_lines(out, n, proc, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.01)
    pytest.fail(f"the batch did not write {n} lines (exit {proc.poll()}: {proc.stderr.read() if proc.poll() is not None else ''})")


def _check_complete(out, n):
    rows = read_jsonl(out)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == n, "duplicates or missing items in --out"
    assert all(r["ok"] for r in rows)


def test_sigkill_mid_run_then_resume_completes_without_duplicates(tmp_path):
    """A batch SIGKILLed mid-run resumes with the same command: every item once in --out, the rest skipped."""
    agent, inputs, out = _files(tmp_path)
    proc = _start(agent, inputs, out)
    _wait_for_lines(out, 100, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    written = out.read_bytes().count(b"\n")
    assert 100 <= written < 1000, "kill the batch mid-run"
    again = _start(agent, inputs, out)
    stdout, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert f"skipped {written}" in stdout and "failed 0" in stdout
    _check_complete(out, 1000)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path):
    """SIGINT stops the batch with exit 130 and a resume hint; finished lines are whole; re-running completes."""
    agent, inputs, out = _files(tmp_path, 600)
    proc = _start(agent, inputs, out)
    _wait_for_lines(out, 50, proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    assert out.read_bytes().endswith(b"\n")
    again = _start(agent, inputs, out)
    stdout, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    _check_complete(out, 600)


def test_summary_reports_counts_tokens_time_and_rate(tmp_path):
    """The summary line names done, failed, skipped, tokens, wall time and items/s; progress goes to stderr."""
    agent, inputs, out = _files(tmp_path, 30)
    with open(inputs, "a") as f:
        f.write("not json\n")
    proc = _start(agent, inputs, out)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    line = stdout.strip().splitlines()[-1]
    assert line.startswith("finished: done 30, failed 1, skipped 0")
    assert "tokens " in line and " in / " in line and " items/s" in line
    assert "batch: 31/31 items" in stderr  # not a terminal: plain progress lines


def test_qa_example_on_a_terminal_shows_a_bar_and_a_summary(tmp_path):
    """The README's command on 1,000 lines, stderr a terminal (a pty): a redrawn bar, then the summary, offline."""
    import pty

    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"question {i}"} for i in range(1000)])
    out = tmp_path / "out.jsonl"
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("ZAGENT_MODEL", "RAY_ADDRESS")}
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "batch", "examples/qa_agent.json",
                             str(inputs), "--out", str(out)], stdout=subprocess.PIPE, stderr=follower, text=True,
                            env=env, cwd=ROOT)
    os.close(follower)
    seen = bytearray()

    def drain():  # read the terminal while the batch runs, so a full pty buffer never blocks it
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    import threading

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    stdout, _ = proc.communicate(timeout=120)
    reader.join(10)
    os.close(leader)
    assert proc.returncode == 0
    assert b"\r[##############################] 1000/1000" in seen
    assert stdout.startswith("finished: done 1000, failed 0, skipped 0")
    assert len(read_jsonl(out)) == 1000


def test_cli_trusts_the_spec_folder_and_trust_flag_only(tmp_path):
    """A tool module elsewhere on the path is refused (exit 1, naming --trust); ``--trust`` runs it."""
    agent = tmp_path / "qa.json"
    agent.write_text(json.dumps({**QA, "tools": ["slowtools:lookup"]}))
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": "x"}])
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    env.pop("ZAGENT_MODEL", None)
    cmd = [sys.executable, "-m", "zagent.plugins.cli", "batch", str(agent), str(inputs), "--out", str(tmp_path / "o.jsonl")]
    refused = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 1 and "not trusted" in refused.stderr and "--trust" in refused.stderr
    trusted = subprocess.run(cmd + ["--trust"], capture_output=True, text=True, env=env, timeout=60)
    assert trusted.returncode == 0 and "done 1, failed 0" in trusted.stdout
