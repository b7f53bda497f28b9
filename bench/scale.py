"""zagent at scale, each figure beside its raw-httpx floor measured in the same run (CPU time, not wall).

Two parts, against loopback servers started as child processes:

* **concurrency** (the peers' mock server, ``start_server``):
  ``N`` tasks at once (``asyncio.gather``) for N in 10/100/1,000 (10,000 with
  ``--wide``), each the peer task (question -> ``add`` tool call -> tool -> "5",
  two LLM calls). zagent: a ``CustomizeAgent`` with the ``add`` tool registered
  with the kernel's defaults (tool threads). Floors: the hand-written httpx loop
  with httpx's default pool (``raw``) and the same with at most 64 or 8 requests
  in flight (``raw64``, ``raw8``: against this instant server, the fewer
  requests inside httpcore's pool the cheaper each is). Prints CPU and wall per
  task and zagent's ratios to ``raw`` and to the fastest raw configuration of
  each round (median of ``--rounds``).
* **steps** (``bench/stepserver.py``): one ReAct run of N steps (N LLM calls,
  N tool calls) for N in 1/10/100/1,000: ``ckpt`` with a checkpoint store (SQLite
  file, default retention), ``plain`` without, and ``raw``: the same conversation
  by hand on httpx. Prints the mean CPU per step of each run, and from the
  longest run the CPU per step around steps 1, 10, 100, 200, 1,000 (median of the
  steps in a window), with ckpt's ratio to its own first steps (the goal: step 200
  within 1.15x of step 1) and to raw at the same step.
* **flows** (``bench/flow_steps.py``, no server): a checkpointed workflow (a chain
  of ``--flow-steps`` no-op nodes) and group chat (as many rounds), with the
  checkpoint store's step log (``patch``), with every checkpoint whole
  (``whole``) and without checkpoints (``none``): CPU per step around steps 1,
  100, 200... and each window's ratio to steps 1-5.

    python bench/scale.py [--rounds 3] [--conc 10,100,1000] [--wide] [--steps 1,10,100,1000] [--flow-steps 200]
                          [--only conc|steps|flows]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import flow_steps  # noqa: E402

import httpx  # noqa: E402

import zagent  # noqa: E402

PROMPT = "What is 2 + 3? Use the add tool."
ADD = {"type": "function", "function": {
    "name": "add", "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}
PLUGINS = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory"]


def peer_mock() -> Path:
    """The peers' mock server: ``$ZAGENT_PEERS`` or ``shared/bench/peers`` beside the checkout or its parent."""
    root = HERE.parent
    for folder in (os.environ.get("ZAGENT_PEERS"), root.parent / "shared/bench/peers",
                   root.parent.parent / "shared/bench/peers"):
        if folder and (Path(folder) / "mock_server.py").exists():
            return Path(folder) / "mock_server.py"
    raise SystemExit("the peers' mock_server.py was not found: set ZAGENT_PEERS to ../shared/bench/peers")


def start_server() -> tuple[subprocess.Popen, str]:
    """The peers' mock server (``peer_mock``) in a child process: ``(process, base URL)``."""
    mock = peer_mock()
    proc = subprocess.Popen([sys.executable, str(mock), "--port", "0"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout is not None else ""
    if not line.startswith("LISTENING"):
        proc.kill()
        raise SystemExit(f"the peers' mock server ({mock}) did not start: it printed {line!r}")
    return proc, f"http://127.0.0.1:{line.split()[1]}/v1"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def dumps(body) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


async def raw_loop(client: httpx.AsyncClient, messages: list, gate=None, marks=None) -> str:
    """The tool loop by hand: post, run the tool calls, post again until a text reply."""
    while True:
        if marks is not None:
            marks.append(time.process_time())
        body = dumps({"model": "mock", "messages": messages, "tools": [ADD]})
        if gate is None:
            r = await client.post("/chat/completions", content=body, headers={"Content-Type": "application/json"})
        else:
            async with gate:
                r = await client.post("/chat/completions", content=body,
                                      headers={"Content-Type": "application/json"})
        r.raise_for_status()
        msg = r.json()["choices"][0]["message"]
        calls = msg.get("tool_calls")
        if not calls:
            return msg.get("content")
        messages.append({"role": "assistant", "content": msg.get("content"), "tool_calls": calls})
        for c in calls:
            value = add(**json.loads(c["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": str(value)})


def raw_client(url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer x"}, timeout=httpx.Timeout(300.0))


# -- concurrency -------------------------------------------------------------------------------


FAILED: dict[str, set[str]] = {}


async def burst(n: int, task, name: str = "") -> tuple[float, float]:
    """CPU and wall µs per task of ``n`` tasks at once; failed tasks are counted and reported, not fatal."""
    cpu, wall = time.process_time(), time.perf_counter()
    results = await asyncio.gather(*(task() for _ in range(n)), return_exceptions=True)
    bad = [r for r in results if r != "5"]
    if bad:
        FAILED.setdefault(f"{name} at {n}", set()).add(f"{len(bad)}/{n} failed, e.g. {str(bad[0])[:160]}")
    return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6


RAW = ("raw", "raw64", "raw8")  # the floors: httpx's default pool, and at most 64 or 8 requests in flight


async def concurrency(url: str, widths: list[int], rounds: int) -> None:
    client = raw_client(url)
    gates = {"raw64": asyncio.Semaphore(64), "raw8": asyncio.Semaphore(8)}
    k = zagent.Kernel(plugins=PLUGINS, entry_points=False)
    k.add_tool(add)
    llm = k.llm("openai:mock", base_url=url, api_key="x")
    agent = k.agent({"type": "customize", "name": "Adder", "prompt": "{question}",
                     "inputs": [{"name": "question", "type": "string"}],
                     "outputs": [{"name": "answer", "type": "string"}],
                     "parse_mode": "str", "tools": ["add"], "llm": llm.name})
    agent.llm = llm

    async def z():
        return (await agent.acall(question=PROMPT)).answer

    def raw(gate):
        return lambda: raw_loop(client, [{"role": "user", "content": PROMPT}], gate)

    variants = {"raw": raw(None), "raw64": raw(gates["raw64"]), "raw8": raw(gates["raw8"]), "zagent": z}
    for fn in variants.values():  # connections opened, code warm
        await burst(100, fn)
    print(f"\n== concurrency (CPU and wall per task, µs; median of {rounds} rounds, order rotated)")
    print(f"{'N':>6} " + " ".join(f"{name + ' cpu':>10}" for name in variants) + f" {'x raw':>6} {'x best':>6}   "
          + " ".join(f"{name + ' wall':>11}" for name in variants) + f" {'x best':>6}")
    for n in widths:
        rows: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for r in range(rounds):
            names = list(variants)
            names = names[r % len(names):] + names[:r % len(names)]
            for name in names:
                rows[name].append(await burst(n, variants[name], name))
        med = {name: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for name, v in rows.items()}
        rounds_of = list(zip(*(rows[name] for name in (*RAW, "zagent"))))  # per round: raw, raw64, raw8, zagent
        cpu_raw = statistics.median(r[-1][0] / r[0][0] for r in rounds_of)
        cpu_best = statistics.median(r[-1][0] / min(x[0] for x in r[:-1]) for r in rounds_of)
        wall_best = statistics.median(r[-1][1] / min(x[1] for x in r[:-1]) for r in rounds_of)
        print(f"{n:>6} " + " ".join(f"{med[name][0]:10.0f}" for name in variants) + f" {cpu_raw:6.2f} {cpu_best:6.2f}   "
              + " ".join(f"{med[name][1]:11.0f}" for name in variants) + f" {wall_best:6.2f}")
    print("(x raw: zagent CPU / raw's; x best: zagent / the fastest raw configuration of the same round)")
    for where, notes in FAILED.items():
        print(f"FAILED TASKS {where}: {'; '.join(sorted(notes))}")
    await client.aclose()
    await k.aclose()


# -- steps -------------------------------------------------------------------------------------


def start_step_server() -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(HERE / "stepserver.py")], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        raise SystemExit(f"step server did not start: {line!r}")
    return proc, int(line.split()[1])


async def react_run(k, llm, steps: int, store) -> list[float]:
    from zagent.plugins.react import ReActLoop

    loop = ReActLoop(kernel=k, llm=llm, tools=["add"], checkpoints=store, max_iterations=steps + 2,
                     allow_clarification=False, system_prompt="You add numbers.")
    marks: list[float] = []
    original = loop._step

    async def timed_step():
        marks.append(time.process_time())
        await original()

    loop._step = timed_step
    result = await loop.arun("count")
    marks.append(time.process_time())
    assert result.content == "done", result.content
    return marks


async def raw_run(port: int, steps: int) -> list[float]:
    async with raw_client(f"http://127.0.0.1:{port}/steps/{steps}/v1") as client:
        marks: list[float] = []
        out = await raw_loop(client, [{"role": "system", "content": "You add numbers."},
                                      {"role": "user", "content": "count"}], marks=marks)
        marks.append(time.process_time())
        assert out == "done"
        return marks


def per_step(marks: list[float]) -> list[float]:
    """CPU µs of each LLM call + its tool calls + checkpoints (index 0 = step 1)."""
    return [(b - a) * 1e6 for a, b in zip(marks, marks[1:])]


async def step_costs(widths: list[int], rounds: int) -> None:
    proc, port = start_step_server()
    tmp = tempfile.mkdtemp(prefix="zagent-scale-")
    try:
        k = zagent.Kernel(plugins=PLUGINS, entry_points=False)
        k.add_tool(add)
        store = k.memory("checkpoints", path=os.path.join(tmp, "runs.db"))
        llms = {n: k.llm("openai:mock", base_url=f"http://127.0.0.1:{port}/steps/{n}/v1", api_key="x")
                for n in widths}
        await react_run(k, llms[min(widths)], min(widths), store)  # warm
        runs = {name: {n: [] for n in widths} for name in ("raw", "plain", "ckpt")}
        for r in range(rounds):
            for n in widths:
                order = [("raw", lambda: raw_run(port, n)), ("plain", lambda: react_run(k, llms[n], n, None)),
                         ("ckpt", lambda: react_run(k, llms[n], n, store))]
                if r % 2:
                    order.reverse()
                for name, fn in order:
                    runs[name][n].append(per_step(await fn()))
        print(f"\n== steps: mean CPU per step of a run of N steps (µs; median of {rounds} runs)")
        print(f"{'N':>6} {'raw':>8} {'plain':>8} {'ckpt':>8} {'ckpt/raw':>9} {'ckpt/plain':>11}")
        for n in widths:
            mean = {name: statistics.median(statistics.fmean(s) for s in runs[name][n]) for name in runs}
            print(f"{n:>6} {mean['raw']:8.0f} {mean['plain']:8.0f} {mean['ckpt']:8.0f} "
                  f"{mean['ckpt'] / mean['raw']:9.2f} {mean['ckpt'] / mean['plain']:11.2f}")
        longest = max(widths)
        windows = [(1, 5)] + [(k - 9, k) for k in (10, 100, 200, 500, 1000) if k <= longest]

        def at(name: str, lo: int, hi: int) -> float:  # median over rounds of the window's median
            return statistics.median(statistics.median(s[lo - 1:hi]) for s in runs[name][longest])

        print(f"\n== steps: CPU per step at step k of the {longest}-step runs (µs; median of the window's steps, "
              f"median of {rounds} runs)")
        print(f"{'steps':>9} {'raw':>8} {'plain':>8} {'ckpt':>8} {'ckpt/raw':>9} {'ckpt vs 1-5':>12} "
              f"{'plain vs 1-5':>13} {'raw vs 1-5':>11}")
        first = {name: at(name, 1, 5) for name in runs}
        for lo, hi in windows:
            v = {name: at(name, lo, hi) for name in runs}
            print(f"{lo:>4}-{hi:<4} {v['raw']:8.0f} {v['plain']:8.0f} {v['ckpt']:8.0f} {v['ckpt'] / v['raw']:9.2f} "
                  f"{v['ckpt'] / first['ckpt']:12.2f} {v['plain'] / first['plain']:13.2f} "
                  f"{v['raw'] / first['raw']:11.2f}")
        print("(a step: one LLM call, its tool call and, for ckpt, the checkpoints of the tool result and the step;"
              " the request grows with the conversation for every variant, raw included)")
        store.close()
        await k.aclose()
    finally:
        proc.kill()
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


async def main(a: argparse.Namespace) -> None:
    print(f"zagent {zagent.__version__ if hasattr(zagent, '__version__') else ''} python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, loadavg {os.getloadavg()[0]:.2f}")
    if a.only in (None, "conc"):
        widths = [int(x) for x in a.conc.split(",")] + ([10000] if a.wide else [])
        proc, url = start_server()
        try:
            await concurrency(url, widths, a.rounds)
        finally:
            proc.kill()
    if a.only in (None, "steps"):
        await step_costs([int(x) for x in a.steps.split(",")], a.rounds)
    if a.only in (None, "flows"):
        await flow_steps.measure(a.flow_steps, a.rounds)
    print(f"loadavg at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--conc", default="10,100,1000")
    ap.add_argument("--wide", action="store_true", help="also 10,000 concurrent tasks (minutes on 2 cores)")
    ap.add_argument("--steps", default="1,10,100,1000")
    ap.add_argument("--flow-steps", type=int, default=200, help="nodes of the workflow, rounds of the chat (flows)")
    ap.add_argument("--only", choices=["conc", "steps", "flows"])
    asyncio.run(main(ap.parse_args()))
