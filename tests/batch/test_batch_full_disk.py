"""``zagent batch`` on a disk that fills up: a clear error naming the results file and how to resume, never a
traceback (a real subprocess whose file-size limit, RLIMIT_FSIZE, stands in for the full disk)."""

from __future__ import annotations

import json
import os
import pathlib
import resource
import signal
import subprocess
import sys

from .conftest import write_jsonl

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_a_full_disk_under_batch_out_is_a_clear_error(tmp_path):
    """Writing --out fails part way: exit 1, one 'zagent: error:' line naming the file and the resume, no
    traceback; the results written before stay readable."""
    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"question {i}"} for i in range(300)])
    out = tmp_path / "out.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("ZAGENT_MODEL", "RAY_ADDRESS")}
    env["ZAGENT_LOG"] = "0"  # only --out meets the limit
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "batch", "examples/qa_agent.json",
                           str(inputs), "--out", str(out), "--quiet"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120, preexec_fn=_small_files)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert f"cannot write the results file {str(out)!r}" in proc.stderr
    assert "run the same command again" in proc.stderr
    whole = out.read_bytes().rsplit(b"\n", 1)[0].splitlines()  # the last line may be cut short
    assert whole and all(json.loads(line)["ok"] for line in whole)  # what was written before is intact
