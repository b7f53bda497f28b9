"""Child process of the at-least-once test (run with python, not collected by pytest).

    python idempotent_child.py first  DB DIR   -> run "pay-run"; the charge tool does its work, then hangs
                                                  until the parent SIGKILLs the process (no checkpoint of its result)
    python idempotent_child.py resume DB DIR   -> restore "pay-run" in a fresh process and finish it; print JSON

The ``charge`` tool is a side-effecting tool written the way the README advises:
it records ``ctx.idempotency_key`` with its work in DIR/ledger.jsonl and skips
a key it finds there. Every invocation (skipped or not) is logged to DIR/calls.jsonl.
"""

import json
import os
import sys
import threading

from zagent import Kernel, RunContext
from zagent.plugins.react import ReActLoop

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
           "zagent.plugins.react", "zagent.plugins.memory"]
CALL = {"tool_calls": [{"id": "call_pay", "name": "charge", "arguments": {"amount": 5}}]}


def kernel(folder, hang):
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    ledger, calls = os.path.join(folder, "ledger.jsonl"), os.path.join(folder, "calls.jsonl")

    def charge(amount: int, ctx: RunContext) -> str:
        """Charge the customer (a side effect that must happen once)."""
        key = ctx.idempotency_key
        _append(calls, {"key": key, "run_id": ctx.run_id, "call_id": ctx.call_id, "pid": os.getpid()})
        done = [json.loads(line) for line in open(ledger)] if os.path.exists(ledger) else []
        if any(entry["key"] == key for entry in done):
            return f"already charged for {key}"
        _append(ledger, {"key": key, "amount": amount})
        if hang:  # the work is done and durable; die before the loop checkpoints the result
            threading.Event().wait()
        return f"charged {amount}"

    k.add_tool(charge)
    return k


def _append(path, entry):
    with open(path, "a") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())


def first(db, folder):
    k = kernel(folder, hang=True)
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:first", replies=[CALL, "paid"]), tools=["charge"],
                     checkpoints=k.memory("checkpoints", path=db))
    loop.run("charge the customer 5", ctx=k.context(run_id="pay-run"))


def resume(db, folder):
    k = kernel(folder, hang=False)
    loop = ReActLoop.restore(k, "pay-run", checkpoints=k.memory("checkpoints", path=db),
                             llm=k.llm("scripted:second", replies=["paid"]), tools=["charge"], agent_config={})
    result = loop.run()
    print(json.dumps({"content": result.content, "results": [s.result for s in result.steps if s.tool]}))


if __name__ == "__main__":
    mode, db, folder = sys.argv[1:4]
    first(db, folder) if mode == "first" else resume(db, folder)
