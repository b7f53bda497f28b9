"""What zagent-otel costs per task, peers-style: with and without tracing, the SDK's own floor, the httpx floor.

The task of ``../shared/bench/peers`` (prompt "What is 2 + 3? Use the add tool.":
LLM call → ``add`` tool call → LLM call → "5") against the peers' loopback mock
server, sequentially, in one process. Variants:

* raw: the peers' hand-written httpx loop (``bench_common.raw_tool_loop``), the floor;
* zagent: the peers' zagent adapter set-up (CustomizeAgent, inline ``add`` tool), no observer
  (what a user without zagent-otel pays);
* events: the same kernel with an observer that does nothing (the paired events themselves);
* otel_api: zagent-otel on the OpenTelemetry API's default no-op providers (installed, nothing set up);
* otel: zagent-otel on an SDK ``TracerProvider`` with a ``BatchSpanProcessor`` whose exporter
  drops everything (spans are built, sampled and handed to the processor; nothing leaves the
  process), metrics on the API's no-op meter: **the 3 % goal**;
* otel_nosteps: as otel with ``steps`` off (no step spans: 4 spans per task instead of 6);
* otel_metrics: as otel plus an SDK ``MeterProvider`` with an in-memory reader (histograms aggregated);
* otel_unsampled: as otel with ``ParentBased(TraceIdRatioBased(0))`` (what an unsampled run costs);
* replay (printed first): no network, one task's events fed straight to the observer in a loop,
  against the same six spans made directly on the SDK: the steadiest view of what zagent-otel
  adds beyond the SDK;
* sdk_floor: the zagent task, then the same six spans (run, 2 steps, 2 chats, 1 tool) made directly
  on the same SDK set-up with their attributes, without zagent-otel: what the SDK itself costs.

Prints per-task medians of wall time (variants in turn, task by task) and of this
process's CPU time (all threads, the batch processor's thread included), ratios against
raw and against zagent (median of per-round ratios). The cpu column is steadier than wall
time on shared cores. Needs zagent-otel installed (``pip install -e contrib/zagent-otel``).

    python bench/otel_overhead.py [--rounds 5] [--tasks 300] [--peers ../shared/bench/peers] [--only otel,sdk_floor]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider_overhead import peers_mock  # noqa: E402

PEERS = Path(os.environ.get("ZAGENT_PEERS") or (peers_mock() or Path(__file__).resolve().parents[2] /
                                                "shared/bench/peers/mock_server.py").parent)
PROMPT = "What is 2 + 3? Use the add tool."
BASE = ("raw", "zagent")
VARIANTS = ("events", "otel_api", "otel", "otel_nosteps", "otel_metrics", "otel_unsampled", "sdk_floor", "replay")


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def sdk_tracing(sampler=None, batch: bool = True):
    """An SDK tracer provider whose batch processor (``batch=False``: a simple, synchronous one: the replay
    loop would overrun the batch queue) hands spans to an exporter that drops them."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider(sampler=sampler) if sampler is not None else TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()) if batch else SimpleSpanProcessor(Dropping()))
    return provider


def providers(variant: str):
    """``(tracer_provider, meter_provider)`` of a variant."""
    from opentelemetry import metrics, trace

    if variant == "otel_api":
        return trace.NoOpTracerProvider(), metrics.NoOpMeterProvider()
    if variant == "otel_unsampled":
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

        return sdk_tracing(ParentBased(TraceIdRatioBased(0.0))), metrics.NoOpMeterProvider()
    if variant == "otel_metrics":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader

        return sdk_tracing(), MeterProvider(metric_readers=[InMemoryMetricReader()])
    return sdk_tracing(), metrics.NoOpMeterProvider()


class NullObserver:
    """Listens to ``zagent_event`` and does nothing: the cost of the paired events alone."""

    def zagent_event(self, event):
        return None


def zagent_agent(url: str, variant: str = "zagent"):
    import zagent

    plugins = ["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory"]
    config: dict = {}
    otel = variant.startswith("otel")
    if otel:
        tracer_provider, meter_provider = providers(variant)
        plugins.append("zagent_otel.plugin")
        config["otel"] = {"tracer_provider": tracer_provider, "meter_provider": meter_provider,
                          "steps": variant != "otel_nosteps"}
    kernel = zagent.Kernel(plugins, entry_points=False, config=config)
    if variant == "events":
        kernel.add_plugin(NullObserver(), name="null-observer")
    assert kernel.hooks.active("zagent_event") == (variant != "zagent")
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


def sdk_spans(tracer_provider):
    """The six spans of one peers task with the attributes zagent-otel gives them, made directly on the SDK."""
    from opentelemetry.trace import SpanKind, set_span_in_context

    tracer = tracer_provider.get_tracer("bench")
    run_attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Adder"}
    chat_attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                  "gen_ai.request.model": "mock-model", "gen_ai.agent.name": "Adder"}
    tool_attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.type": "function"}

    def make() -> None:
        now = time.time_ns()
        run = tracer.start_span("invoke_agent Adder", attributes=dict(run_attrs, **{"gen_ai.conversation.id": "r"}),
                                start_time=now)
        run_ctx = set_span_in_context(run)
        for n in (1, 2):
            step = tracer.start_span(f"step {n}", context=run_ctx, attributes={"zagent.step": n}, start_time=now)
            step_ctx = set_span_in_context(step)
            chat = tracer.start_span("chat mock-model", context=step_ctx, kind=SpanKind.CLIENT, attributes=chat_attrs,
                                     start_time=now)
            chat.set_attributes({"gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 5,
                                 "gen_ai.response.finish_reasons": ["stop"]})
            chat.end(end_time=now)
            if n == 1:
                tool = tracer.start_span("execute_tool add", context=step_ctx,
                                         attributes=dict(tool_attrs, **{"gen_ai.tool.call.id": "call_1"}),
                                         start_time=now)
                tool.end(end_time=now)
            step.end(end_time=now)
        run.set_attributes({"gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 40,
                            "gen_ai.usage.output_tokens": 10})
        run.end(end_time=now)

    return make


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


async def replay(url: str, rounds: int, n: int) -> None:
    """In-process, no network: one task's 12 events fed straight to zagent-otel's observer, against the
    same six spans made directly on the SDK (``sdk_spans``); CPU µs per task, medians of ``rounds``."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
    from zagent_otel.observer import SpanObserver

    events: list = []

    class Recorder:
        def zagent_event(self, event):
            events.append(event)

    kernel, task = zagent_agent(url, "zagent")
    kernel.add_plugin(Recorder(), name="recorder")
    await task()
    await kernel.aclose()

    def feed(observer):
        def go() -> None:
            for event in events:
                observer.zagent_event(event)
        return go

    noop_meter = metrics.NoOpMeterProvider()
    sides = {
        "sdk_floor": sdk_spans(sdk_tracing(batch=False)),
        "otel_api": feed(SpanObserver(trace.NoOpTracerProvider(), noop_meter)),
        "otel": feed(SpanObserver(sdk_tracing(batch=False), noop_meter)),
        "otel_nosteps": feed(SpanObserver(sdk_tracing(batch=False), noop_meter, steps=False)),
        "otel_metrics": feed(SpanObserver(sdk_tracing(batch=False), MeterProvider(metric_readers=[InMemoryMetricReader()]))),
        "otel_unsampled": feed(SpanObserver(sdk_tracing(ParentBased(TraceIdRatioBased(0.0)), batch=False), noop_meter)),
    }
    cpu: dict = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            c = time.process_time()
            for _ in range(n):
                fn()
            cpu[name].append((time.process_time() - c) / n * 1e6)
    print(f"replay of one task's {len(events)} events, CPU µs per task (medians of {rounds} blocks of {n}):")
    floor = statistics.median(cpu["sdk_floor"])
    for name, values in cpu.items():
        print(f"  {name:<15} {statistics.median(values):7.1f}  x sdk_floor {statistics.median(values) / floor:5.2f}")


async def main(rounds: int, tasks: int, peers: Path, only: tuple) -> None:
    if not (peers / "bench_common.py").exists():
        print(f"the peers harness is not at {peers} (pass --peers DIR or set ZAGENT_PEERS): nothing measured")
        return
    sys.path.insert(0, str(peers))
    import subprocess

    import httpx
    from bench_common import raw_tool_loop

    proc = subprocess.Popen([sys.executable, str(peers / "mock_server.py"), "--port", "0"], stdout=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        raise SystemExit(f"mock server did not start: {line!r}")
    url = f"http://127.0.0.1:{line.split()[1]}/v1"
    kernels = []
    try:
        client = httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer x"}, timeout=120)
        sides = {"raw": lambda: raw_tool_loop(client, "mock-model")}
        for name in BASE[1:] + tuple(v for v in VARIANTS if v in only and v not in ("sdk_floor", "replay")):
            kernel, sides[name] = zagent_agent(url, name)
            kernels.append(kernel)
        if "sdk_floor" in only:
            floor_provider = sdk_tracing()
            spans = sdk_spans(floor_provider)
            plain = sides["zagent"]

            async def floor():
                answer = await plain()
                spans()
                return answer

            sides["sdk_floor"] = floor
        if "replay" in only:
            await replay(url, rounds, tasks * 5)
        walls, cpus = [], []
        for r in range(rounds):
            walls.append(await interleaved(sides, tasks, r))
            cpus.append(await cpu_blocks(sides, tasks, r))
        print(f"{'variant':<15} {'wall µs':>8} {'x raw':>6} {'x zagent':>8} {'cpu µs':>8} {'x raw':>6} "
              f"{'x zagent':>8} {'cpu µs over zagent':>18}")
        for name in sides:
            med = [statistics.median(r[name] for r in rows) for rows in (walls, cpus)]
            raw = [statistics.median(r[name] / r["raw"] for r in rows) for rows in (walls, cpus)]
            own = [statistics.median(r[name] / r["zagent"] for r in rows) for rows in (walls, cpus)]
            extra = statistics.median(r[name] - r["zagent"] for r in cpus)
            print(f"{name:<15} {med[0]:8.0f} {raw[0]:6.3f} {own[0]:8.3f} {med[1]:8.0f} {raw[1]:6.3f} {own[1]:8.3f}"
                  f" {extra:18.0f}")
        print(f"(goal: otel x zagent < 1.03; medians of {rounds} rounds of {tasks} tasks per variant; wall: variants "
              f"in turn task by task; cpu: this process, all threads, a block per variant)")
        await client.aclose()
        for kernel in kernels:
            await kernel.aclose()
    finally:
        proc.kill()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--peers", type=Path, default=PEERS, help="the peers harness folder (bench_common.py)")
    ap.add_argument("--only", default=",".join(VARIANTS),
                    help=f"variants besides raw and zagent: {', '.join(VARIANTS)}")
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.tasks, a.peers, tuple(a.only.split(","))))
