"""What zagent-otel costs per task, peers-style: the same run with and without tracing, and the httpx floor.

The task of ``../shared/bench/peers`` (prompt "What is 2 + 3? Use the add tool.":
LLM call → ``add`` tool call → LLM call → "5") against the peers' loopback mock
server, sequentially, in one process:

* raw: the peers' hand-written httpx loop (``bench_common.raw_tool_loop``), the floor;
* zagent: the peers' zagent adapter set-up (CustomizeAgent, inline ``add`` tool), no tracing;
* zagent_otel: the same kernel plus the zagent-otel plugin on an SDK ``TracerProvider``
  with a ``BatchSpanProcessor`` whose exporter drops everything, and a ``MeterProvider``
  (spans and metrics are built and recorded; nothing leaves the process).

Prints per-task medians of wall time (variants in turn, task by task) and of this
process's CPU time (all threads, zagent-otel's span-building thread included), and
ratios (median of per-round ratios); the goal is zagent_otel/zagent under 1.03 in wall
time. The cpu column is steadier than wall time on shared cores. Needs zagent-otel installed (``pip install -e contrib/zagent-otel``).

    python bench/otel_overhead.py [--rounds 5] [--tasks 300] [--peers ../shared/bench/peers]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider_overhead import PEER_MOCK  # noqa: E402

PEERS = PEER_MOCK.parent
PROMPT = "What is 2 + 3? Use the add tool."


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def noop_tracing():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    return provider, MeterProvider()


def zagent_agent(url: str, otel: bool):
    import zagent

    plugins = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory"]
    config = {}
    if otel:
        tracer_provider, meter_provider = noop_tracing()
        plugins.append("zagent_otel.plugin")
        config["otel"] = {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
    kernel = zagent.Kernel(plugins, entry_points=False, config=config)
    assert kernel.hooks.active("zagent_event") == otel
    kernel.add_tool(add, inline=True)
    llm = kernel.llm("openai:mock-model", base_url=url, api_key="x")
    agent = kernel.agent({"type": "customize", "name": "Adder", "prompt": "{question}",
                          "inputs": [{"name": "question", "type": "string"}],
                          "outputs": [{"name": "answer", "type": "string"}],
                          "parse_mode": "str", "tools": ["add"], "llm": llm.name})
    agent.llm = llm

    async def task():
        return (await agent.acall(question=PROMPT)).answer

    return kernel, task


async def interleaved(sides: dict, n: int, shift: int) -> dict:
    """Wall time: the variants run task by task in turn (load drift hits all alike); per-variant medians, µs."""
    names = list(sides)
    names = names[shift % len(names):] + names[:shift % len(names)]
    for name in names:
        for _ in range(10):
            await sides[name]()
    wall: dict = {name: [] for name in names}
    for _ in range(n):
        for name in names:
            t = time.perf_counter()
            answer = await sides[name]()
            wall[name].append(time.perf_counter() - t)
            assert str(answer).strip() == "5", answer
    return {name: statistics.median(wall[name]) * 1e6 for name in names}


async def cpu_blocks(sides: dict, n: int, shift: int) -> dict:
    """CPU time: each variant's ``n`` tasks in one block; this process's CPU time (all threads) per task, µs."""
    names = list(sides)
    names = names[shift % len(names):] + names[:shift % len(names)]
    out = {}
    for name in names:
        c = time.process_time()
        for _ in range(n):
            await sides[name]()
        out[name] = (time.process_time() - c) / n * 1e6
    return out


async def main(rounds: int, tasks: int, peers: Path) -> None:
    if not (peers / "bench_common.py").exists():
        print(f"the peers harness is not at {peers} (pass --peers DIR): nothing measured")
        return
    sys.path.insert(0, str(peers))
    import httpx
    from bench_common import raw_tool_loop

    import subprocess

    proc = subprocess.Popen([sys.executable, str(peers / "mock_server.py"), "--port", "0"], stdout=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        raise SystemExit(f"mock server did not start: {line!r}")
    url = f"http://127.0.0.1:{line.split()[1]}/v1"
    try:
        client = httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer x"}, timeout=120)
        k0, plain = zagent_agent(url, otel=False)
        k1, traced = zagent_agent(url, otel=True)
        sides = {"raw": lambda: raw_tool_loop(client, "mock-model"), "zagent": plain, "zagent_otel": traced}
        walls, cpus = [], []
        for r in range(rounds):
            walls.append(await interleaved(sides, tasks, r))
            cpus.append(await cpu_blocks(sides, tasks, r))
        print(f"{'variant':<12} {'wall µs':>9} {'x raw':>7} {'cpu µs':>9} {'x raw':>7}")
        for name in sides:
            med = [statistics.median(r[name] for r in rows) for rows in (walls, cpus)]
            ratio = [statistics.median(r[name] / r["raw"] for r in rows) for rows in (walls, cpus)]
            print(f"{name:<12} {med[0]:9.0f} {ratio[0]:7.3f} {med[1]:9.0f} {ratio[1]:7.3f}")
        for rows, what in ((walls, "wall"), (cpus, "cpu")):
            otel = statistics.median(r["zagent_otel"] / r["zagent"] for r in rows)
            print(f"zagent_otel / zagent ({what}): {otel:.3f}")
        print(f"(goal < 1.03 for wall; medians of {rounds} rounds of {tasks} tasks per variant; wall: variants in "
              f"turn task by task; cpu: this process, a block per variant)")
        await client.aclose()
        await k0.aclose()
        await k1.aclose()
    finally:
        proc.kill()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--peers", type=Path, default=PEERS, help="the peers harness folder (bench_common.py)")
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.tasks, a.peers))
