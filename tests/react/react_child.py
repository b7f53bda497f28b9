"""Child process for the cross-process resume tests (run with python, not collected by pytest).

    python react_child.py first  DB LOG [approval]  -> runs until paused, prints the run id, exits hard
    python react_child.py killed DB LOG             -> run "killed-run"; its t2 call hangs until SIGKILL
    python react_child.py budget DB LOG             -> as killed, with a tool budget of 2 record calls
    python react_child.py resume DB LOG RUN_ID [budget] -> restores the run (with the budget's rails: a
                                                    checkpoint carries no policy), finishes it, prints the answer
Every tool execution appends its tag to LOG, so the parent can count runs.
"""

import json
import os
import sys
import threading

from zagent import Kernel
from zagent.plugins.react import ReActLoop
from zagent.testing import wait_until

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
           "zagent.plugins.react", "zagent.plugins.memory", "zagent.plugins.rails"]
LOOP = {}


def kernel(log_path, hang_on=None):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)

    def record(tag: str) -> str:
        """Append the tag to the log; pause the run after t2 (first process only)."""
        with open(log_path, "a") as f:
            f.write(tag + "\n")
        if tag == hang_on:
            threading.Event().wait()  # until the parent kills this process
        if tag == "t2" and "loop" in LOOP:
            LOOP["loop"].pause()
        return f"ok {tag}"

    k.add_tool(record)
    k.add_tool(record, name="danger", sensitive=True)
    return k


def first(db, log, approval):
    k = kernel(log)
    store = k.memory("checkpoints", path=db)
    name = "danger" if approval else "record"
    batch = {"tool_calls": [{"name": "record", "arguments": {"tag": "t1"}},
                            {"name": name, "arguments": {"tag": "t2"}},
                            {"name": "record", "arguments": {"tag": "t3"}}]}
    llm = k.llm("scripted:first", replies=[batch, "done"])
    rails = {"approver": lambda call, ctx: None} if approval else {}
    loop = ReActLoop(kernel=k, llm=llm, tools=["record", "danger"], checkpoints=store,
                     max_tool_call_concurrency=1, agent_config={"rails": rails})
    if not approval:
        LOOP["loop"] = loop
    threading.Thread(target=lambda: loop.run("do three things"), daemon=True).start()
    wait_until(lambda: loop.status == "paused", "the run to pause")
    print(loop.state.run_id, flush=True)
    os._exit(0)  # the process ends while the run is paused: no clean-up


def killed(db, log, budget=False):
    k = kernel(log, hang_on="t2")
    store = k.memory("checkpoints", path=db)
    batch = {"tool_calls": [{"name": "record", "arguments": {"tag": t}} for t in ("t1", "t2", "t3")]}
    config = {"rails": {"tool_budget": {"record": 2}}} if budget else {}
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:first", replies=[batch, "done"]), tools=["record", "danger"],
                     checkpoints=store, max_tool_call_concurrency=1, agent_config=config)
    loop.run("do three things", ctx=k.context(run_id="killed-run", agent_config=config))


def resume(db, log, run_id, budget=False):
    k = kernel(log)
    store = k.memory("checkpoints", path=db)
    llm = k.llm("scripted:second", replies=["done"])
    config = {"rails": {"tool_budget": {"record": 2}}} if budget else {}
    loop = ReActLoop.restore(k, run_id, checkpoints=store, llm=llm, tools=["record", "danger"],
                             max_tool_call_concurrency=1, agent_config=config)
    if loop.state.awaiting_approval:
        loop.resume(approve=loop.state.awaiting_approval)
    result = loop.run()
    print(json.dumps({"content": result.content,
                      "tools": [[s.tool, s.parameters.get("tag"), s.result] for s in result.steps if s.tool],
                      "blocked": [s.parameters.get("tag") for s in result.steps if s.tool and s.is_blocked]}))


if __name__ == "__main__":
    mode, db, log = sys.argv[1:4]
    if mode == "first":
        first(db, log, len(sys.argv) > 4)
    elif mode in ("killed", "budget"):
        killed(db, log, budget=mode == "budget")
    else:
        resume(db, log, sys.argv[4], budget=sys.argv[5:] == ["budget"])
