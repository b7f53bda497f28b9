"""Tools get an idempotency key, so a call repeated after a restore can be skipped (issue 15, finding 7).

A restored run is at-least-once for tool calls: a call whose work finished but
whose result was not yet checkpointed when the process died runs again. The
key (``ctx.idempotency_key`` = run id + call id) is the same on that repeat.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from zagent import RunContext, run_sync

CHILD = os.path.join(os.path.dirname(__file__), "idempotent_child.py")


def test_a_tool_context_carries_the_call_id_and_idempotency_key(kernel):
    """A tool taking RunContext sees its own call id and run_id:call_id as its key; the run's context has none."""
    seen = {}

    def stamp(text: str, ctx: RunContext) -> str:
        """Record the context."""
        seen[text] = (ctx.call_id, ctx.idempotency_key)
        return text

    kernel.add_tool(stamp)
    ctx = kernel.context(run_id="run-7")
    run_sync(kernel.arun_tools([{"id": "c1", "name": "stamp", "arguments": {"text": "a"}},
                                {"id": "c2", "name": "stamp", "arguments": {"text": "b"}}], ctx))
    assert seen == {"a": ("c1", "run-7:c1"), "b": ("c2", "run-7:c2")}
    assert ctx.call_id is None and ctx.idempotency_key is None


def test_usage_a_tool_spends_with_its_context_counts_in_the_run(kernel):
    """The per-call context starts at zero usage; what the tool spends is added back to the run's."""
    llm = kernel.llm("scripted:inner", replies=["inner answer"])

    async def ask(question: str, ctx: RunContext) -> str:
        """Ask a model."""
        return (await llm.asend(llm.request(question), ctx)).text

    kernel.add_tool(ask)
    ctx = kernel.context()
    assert kernel.run_tool({"id": "c1", "name": "ask", "arguments": {"question": "q"}}, ctx).content == "inner answer"
    assert ctx.usage.calls == 1


def _has_line(path) -> bool:
    """The tool's work is done: its ledger line is written whole (the child fsyncs it, then hangs)."""
    return path.exists() and path.read_text().endswith("\n")


def test_a_call_repeated_after_sigkill_and_restore_has_the_same_key(tmp_path):
    """Process 1 runs a side-effecting call that finishes its work and is SIGKILLed before the result is
    checkpointed; process 2 restores the run: the call runs again (at-least-once) with the same key,
    so the tool skips it and the side effect happens once."""
    db, folder = str(tmp_path / "runs.db"), str(tmp_path)
    ledger, calls = tmp_path / "ledger.jsonl", tmp_path / "calls.jsonl"
    proc = subprocess.Popen([sys.executable, CHILD, "first", db, folder], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # a bound on the wait, not an assertion about speed
        while not _has_line(ledger) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _has_line(ledger), proc.stderr.read() if proc.poll() is not None else "the tool never ran"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    resumed = subprocess.run([sys.executable, CHILD, "resume", db, folder], capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    invocations = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(invocations) == 2 and invocations[0]["pid"] != invocations[1]["pid"]  # it did run again
    assert invocations[0]["key"] == invocations[1]["key"] == "pay-run:call_pay"
    assert len(ledger.read_text().splitlines()) == 1  # the side effect happened once
    assert out == {"content": "paid", "results": ["already charged for pay-run:call_pay"]}


def test_the_readme_idempotent_tool_charges_once_per_key(kernel, tmp_path, monkeypatch):
    """The README's example tool, run as written: the same call id twice charges once; another id charges."""
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("### Restoring a run: at-least-once tool calls"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    kernel.add_tool(namespace["charge"])
    ctx = kernel.context(run_id="run-9")
    call = {"id": "call_1", "name": "charge", "arguments": {"amount": 5}}
    assert kernel.run_tool(call, ctx).content == "charged 5"
    assert kernel.run_tool(call, ctx).content == "already charged (run-9:call_1)"
    assert kernel.run_tool({**call, "id": "call_2"}, ctx).content == "charged 5"
    namespace["db"].close()
