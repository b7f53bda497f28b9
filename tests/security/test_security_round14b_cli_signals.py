"""Round fourteen, wave two, the ``zagent`` command (see ``test_security_round14b_cli.py``): SIGTERM and a closed
stdout. ``timeout``, ``kill`` and a CI cancel send SIGTERM: it killed the command at once (exit -15, no JSON, the
run missing from the run log; GOT THROUGH, 4). It now stops a command as Ctrl-C does (``plugins/clisignals.py``):
exit 143, ``{"status": "interrupted"}`` with ``--json``, whole files, the run in the run log, and a chat never
asks "resume or abort?" on stdin for it. A closed stdout is exit 141 without a traceback (held).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import agent_spec, run_cli
from .test_security_round14b_cli import PLUGINS, _passing_cases


def cli(*args, cwd=None, env=None):
    return run_cli(*args, cwd=cwd, plugins=PLUGINS, env=env)


def _slow_react(tmp_path, calls=40):
    """A ReAct agent file whose scripted model calls a 0.2 s tool ``calls`` times."""
    (tmp_path / "r14bnap.py").write_text("import time\n\ndef nap(text: str) -> str:\n    \"\"\"Nap.\"\"\"\n"
                                         "    time.sleep(0.2)\n    return text\n")
    call = {"content": "", "tool_calls": [{"name": "nap", "arguments": {"text": "a"}}]}
    spec = tmp_path / "react.json"
    spec.write_text(json.dumps({"name": "R", "type": "react", "tools": ["r14bnap:nap"],
                                "llm_config": {"model": "scripted:r14b", "replies": [call] * calls + ["done"]}}))
    return spec


def _popen(args, cwd, env=None):
    full = {**os.environ, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0", **(env or {})}
    full.pop("ZAGENT_MODEL", None)
    return subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full, cwd=cwd)


def _wait_for(proc, word, limit=60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if word in proc.stderr.readline():
            return
    pytest.fail(f"no {word!r} on stderr (exit {proc.poll()})")


def test_sigterm_during_run_stops_as_ctrl_c_does_and_the_run_log_keeps_the_run(tmp_path):
    """Attack (got through): ``timeout 60 zagent run react.json --json`` (or ``kill``, a CI cancel) sent SIGTERM
    while the agent's tools ran: the process died at once, ``--json`` printed nothing and the run log never had
    the run whose tools had run. Defence: SIGTERM stops the command as Ctrl-C does: exit 143, ``{"status":
    "interrupted"}`` on stdout, the run in the log (cancelled, or unfinished when stopped mid-tool)."""
    spec = _slow_react(tmp_path)
    db = tmp_path / "logs.db"
    proc = _popen(["run", str(spec), "-i", "task=go", "--json"], tmp_path, {"ZAGENT_LOG": "1", "ZAGENT_LOG_DB": str(db)})
    _wait_for(proc, "nap -> success")
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "zagent: terminated" in stderr, stderr
    assert json.loads(stdout) == {"status": "interrupted", "error": {
        "type": "Terminated", "message": "terminated (SIGTERM) before the command finished"}}
    listed = cli("logs", "list", "--db", str(db), "--json", cwd=tmp_path)
    assert [r["outcome"] for r in json.loads(listed.stdout)] in (["cancelled"], ["unfinished"]), listed.stdout


def test_sigterm_during_batch_leaves_whole_lines_and_resumes(tmp_path):
    """Attack (got through): SIGTERM during ``zagent batch`` killed it with no word (exit -15). Defence: exit 143
    saying so, every results line whole JSON, and the same command then finishes the rest."""
    (tmp_path / "r14bnap.py").write_text("import time\n\ndef nap(text: str) -> str:\n    \"\"\"Nap.\"\"\"\n"
                                         "    time.sleep(0.2)\n    return text\n")
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(tools=["r14bnap:nap"])))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"id": f"q{i}", "question": "x"}) + "\n" for i in range(60)))
    out = tmp_path / "out.jsonl"
    args = ["batch", str(spec), str(inputs), "--out", str(out), "-c", "2"]
    proc = _popen(args, tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "zagent: terminated" in stderr and "Traceback" not in stderr, stderr
    for line in out.read_text().splitlines():
        json.loads(line)
    again = _popen(args, tmp_path)
    _, stderr = again.communicate(timeout=120)
    assert again.returncode == 0, stderr
    assert len({json.loads(line)["id"] for line in out.read_text().splitlines()}) == 60


@pytest.mark.parametrize("args", [["eval", "{cases}", "--agent", "{spec}", "--json"],
                                  ["run", "{spec}", "-i", "question=hi", "--json"]])
def test_a_closed_stdout_during_json_output_is_exit_141_without_a_traceback(tmp_path, args):
    """Held: stdout's reader gone before the JSON is written (``| head -c0``): exit 141, no traceback."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec()))
    cases = _passing_cases(tmp_path / "cases.jsonl", 2)
    args = [a.format(cases=cases, spec=spec) for a in args]
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0"}
    env.pop("ZAGENT_MODEL", None)
    try:
        done = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr, done.stderr


def test_a_report_and_its_folder_hold_no_temporary_file_after_sigterm(tmp_path):
    """SIGTERM during ``zagent eval --out --report``: exit 143, no report and no temporary file beside it."""
    spec = tmp_path / "agent.json"
    (tmp_path / "r14bnap.py").write_text("import time\n\ndef nap(text: str) -> str:\n    \"\"\"Nap.\"\"\"\n"
                                         "    time.sleep(0.2)\n    return text\n")
    spec.write_text(json.dumps(agent_spec(tools=["r14bnap:nap"])))
    cases = _passing_cases(tmp_path / "cases.jsonl", 40)
    out, report = tmp_path / "runs.jsonl", tmp_path / "report.json"
    proc = _popen(["eval", str(cases), "--agent", str(spec), "--out", str(out), "--report", str(report)], tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert not report.exists() and not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("when", ["mid-run", "at-the-prompt"])
def test_sigterm_during_chat_stops_it_without_asking_anything(tmp_path, when):
    """SIGTERM to ``zagent chat`` (its stdin still open): while a run's tools ran, or while it waited for the
    next message. It must stop with exit 143: not ask "[r]esume or [a]bort?" on stdin as Ctrl-C does (the next
    piped line would answer it), and not exit 0 as at the end of input."""
    spec = _slow_react(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "chat", str(spec)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**{k: v for k, v in os.environ.items() if k != "ZAGENT_MODEL"},
                                 "ZAGENT_PLUGINS": PLUGINS, "ZAGENT_LOG": "0"})
    _wait_for(proc, "Chatting with")
    if when == "mid-run":
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(1.5)
    else:
        time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "resume" not in stdout + stderr and "Traceback" not in stderr
