"""`zagent logs ... | head`: a reader that leaves early ends the command quietly (no BrokenPipe traceback)."""

import os
import subprocess
import sys

from tests.runlog.conftest import run_scenario


def test_logs_list_into_a_closed_pipe_prints_no_traceback(make_logged, log_path):
    """`zagent logs list | head -n 1`: the command ends without a traceback once the reader has gone."""
    for _ in range(40):
        run_scenario(make_logged, "react_two_tools")
    env = {**os.environ, "ZAGENT_LOG_DB": log_path}
    proc = subprocess.Popen([sys.executable, "-m", "zagent.plugins.cli", "logs", "list", "-n", "40"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=0)
    proc.stdout.read(10)
    proc.stdout.close()  # as `head` does after its lines
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
