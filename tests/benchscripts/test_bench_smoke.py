"""Every benchmark that measures against the loopback servers runs end to end at a tiny size.

Benchmarks are not timed here (their figures mean something only on a quiet machine); this only checks
that each script still starts its server, runs zagent and its floor, and prints its table, so a change
elsewhere (a helper's signature, a moved module) cannot leave a bench broken until someone next runs it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT.parent / "shared" / "bench" / "peers" / "mock_server.py"

RUNS = {
    "tool_path": (["--rounds", "1", "--blocks", "1", "--tasks", "3"], "CPU x raw sequential"),
    "scale_conc": (["--only", "conc", "--conc", "5", "--rounds", "1"], "concurrency"),
    "scale_steps": (["--only", "steps", "--steps", "1,3", "--rounds", "1"], "step"),
    "react_loop_overhead": (["--rounds", "1", "--tasks", "3"], "x floor"),
    "stream_floor": (["--rounds", "1", "--tasks", "3"], "zagent"),
    "concurrency": (["--n", "5", "--rounds", "1"], "zagent"),
    "provider_overhead": (["--rounds", "1", "--seq", "3", "--conc", "3"], "zagent"),
    "batch": (["--items", "2", "--runs", "1", "--concurrency", "1", "--no-ray"], "local+out"),
    "tool_retrieval": ([], "hit@1"),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_bench_runs_at_a_tiny_size(name):
    """The bench script exits 0 and prints its result table (it measures nothing at this size)."""
    if not PEERS.is_file():
        pytest.skip(f"the peers' mock server is not beside this checkout ({PEERS})")
    args, expected = RUNS[name]
    script = ROOT / "bench" / (name.split("_conc")[0].split("_steps")[0] + ".py")
    proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert expected.lower() in proc.stdout.lower(), proc.stdout[-2000:]


def test_hostile_limits_runs_one_case_from_this_checkouts_servers(tmp_path):
    """hostile_limits.py --case endless_body hits the size limit; a stray ``tests`` package on the path (one
    that fails when imported) does not stand in for this checkout's tests/servers."""
    stray = tmp_path / "tests" / "servers"
    stray.mkdir(parents=True)
    for init in (stray.parent / "__init__.py", stray / "__init__.py"):
        init.write_text("raise SystemExit('a stray tests package was imported')\n")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "hostile_limits.py"), "--case", "endless_body"],
                          capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ResponseTooLarge" in proc.stdout, proc.stdout[-2000:]
