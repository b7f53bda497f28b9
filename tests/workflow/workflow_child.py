"""Child process for the workflow kill test (run with python, not collected by pytest).

    python workflow_child.py DB LOG N HANG   -> run "killed-run", a chain of N nodes checkpointed to DB;
                                                node HANG hangs until the parent sends SIGKILL
Every node appends its name to LOG when it starts, so the parent can count runs.
"""

import sys
import threading

from zagent import Kernel
from zagent.plugins.workflow import WorkFlowExecutor

from steplog_graphs import chain

PLUGINS = ["zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow"]


def main(db, log, n, hang):
    def agent(i, value):
        with open(log, "a") as f:
            f.write(f"n{i}\n")
        if i == hang:
            threading.Event().wait()  # until the parent kills this process
        return f"v{i}"

    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    store = k.memory("checkpoints", path=db, keep_last=None)
    WorkFlowExecutor(kernel=k, checkpoints=store).run(chain(n, agent), {"goal": "g"}, run_id="killed-run")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
