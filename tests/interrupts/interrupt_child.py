"""Child process for the interrupt tests (run with python, not collected by pytest).

    python interrupt_child.py DB LOG run             -> run "r" (n0 -> n1 -> n2) checkpointed to DB
    python interrupt_child.py DB LOG resume ANSWER   -> resume "r" with ANSWER
Every node appends its name to LOG when it runs; n1 asks "Approve?". Prints the result as JSON.
"""

import json
import sys

import zagent
from zagent import Kernel
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

PLUGINS = ["zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow"]


def graph(log):
    def note(name):
        with open(log, "a") as f:
            f.write(name + "\n")

    def n0(goal):
        note("n0")
        return {"v0": f"plan for {goal}"}

    def n1(v0):
        note("n1")
        return {"v1": f"{v0}: {zagent.interrupt('Approve?')}"}

    def n2(v1):
        note("n2")
        return {"v2": v1.upper()}

    nodes = [{"name": f.__name__, "inputs": [{"name": i}], "outputs": [{"name": o}], "agents": [f]}
             for f, i, o in ((n0, "goal", "v0"), (n1, "v0", "v1"), (n2, "v1", "v2"))]
    return WorkFlowGraph.from_dict({"name": "chain", "goal": "test interrupts", "nodes": nodes,
                                    "edges": [{"source": "n0", "target": "n1"}, {"source": "n1", "target": "n2"}]})


def main(db, log, mode, answer=None):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    try:
        ex = WorkFlowExecutor(kernel=k, checkpoints=db)
        if mode == "run":
            result = ex.run(graph(log), {"goal": "g"}, run_id="r")
        else:
            result = ex.resume("r", graph=graph(log), answer=answer)
        print(json.dumps({"status": result.status, "outputs": result.outputs,
                          "questions": [a.question for a in result.interrupts]}))
    finally:
        k.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
