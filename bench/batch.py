"""Batch throughput: 1,000 agent items against a loopback mock OpenAI server, local vs Ray, beside a bare loop.

Starts the peers' ``mock_server.py`` (``../shared/bench/peers/``, read-only;
else this repository's ``tests/servers`` one) in a child process, then runs,
in the same process and against the same server:

* **bare**: an ``asyncio`` + ``httpx.AsyncClient`` loop posting one chat
  completion per item, ``--concurrency`` at once (the floor: no agent, no parsing);
* **local**: ``Kernel.abatch`` of a one-call agent (prompt, one LLM call, ``str`` parse) on the ``local`` executor;
* **local+out**: the same with ``out=`` (a JSONL results file, one ``os.write`` per item);
* **ray**: the same batch on the ``ray`` executor (zagent-ray) with a local Ray of ``--ray-cpus`` CPUs,
  after a warm-up batch that starts the workers (start-up is reported separately).

Each is run ``--runs`` times; prints the median items/s, the median wall time
per item and the overhead per item over the bare loop (the difference of the
per-item wall times at the same concurrency) and the driver process's CPU
time per item (``time.process_time``: for ``ray`` this is the driver's share
only -- submitting, awaiting, writing -- the workers' CPU is not in it), the
figures docs/batch.md's throughput estimate uses. Ray is skipped with one line
when zagent-ray is not installed (``--no-ray`` skips it too).

    python bench/batch.py [--items 1000] [--concurrency 16] [--runs 3] [--ray-cpus 2] [--no-ray]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
KEY = "sk-bench-not-secret"

from provider_overhead import start_server  # noqa: E402  (the peers' mock server, else tests/servers)


def spec() -> dict:
    """A one-call agent: its model and server come from OPENAI_BASE_URL / OPENAI_API_KEY (set below), so Ray
    workers, which inherit this process's environment, reach the same server."""
    return {"name": "Answerer", "prompt": "Answer briefly: {question}", "parse_mode": "str",
            "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}],
            "llm_config": {"model": "openai:mock-model"}}


def inputs(n: int) -> list[dict]:
    return [{"id": f"q{i}", "question": f"What is {i} + {i}?"} for i in range(n)]


async def bare(base_url: str, n: int, width: int) -> float:
    import httpx

    async with httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {KEY}"},
                                 timeout=httpx.Timeout(120.0)) as client:
        items = iter(inputs(n))

        async def worker() -> None:
            for item in items:
                r = await client.post("/chat/completions", json={
                    "model": "mock-model", "messages": [{"role": "user", "content": f"Answer briefly: {item['question']}"}]})
                r.raise_for_status()
                r.json()["choices"][0]["message"]["content"]

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(width)))
        return time.perf_counter() - started


async def zagent_batch(kernel, n: int, width: int, executor, out: bool) -> float:
    target = spec()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        report = await kernel.abatch(target, inputs(n), concurrency=width, executor=executor,
                                     out=os.path.join(tmp, "out.jsonl") if out else None)
        took = time.perf_counter() - started
    if report.summary.done != n:
        raise SystemExit(f"batch failed: {report.summary.line()}")
    return took


def row(name: str, times: list[float], n: int, floor: float | None, cpu: list[float]) -> str:
    med = statistics.median(times)
    cpu_us = statistics.median(cpu) / n * 1e6
    per_item = med / n * 1e6
    over = f"{per_item - floor / n * 1e6:+9.1f}" if floor is not None else f"{'-':>9}"
    ratio = f"{med / floor:6.2f}x" if floor is not None else f"{'1.00x':>7}"
    return f"{name:<12}{n / med:>10.1f}{per_item:>12.1f}{over:>14}{ratio:>9}{cpu_us:>14.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    proc, base_url, label = start_server()
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = base_url, KEY
    from zagent import Kernel

    kernel = Kernel()
    results: dict[str, list[float]] = {"bare": [], "local": [], "local+out": []}
    cpu: dict[str, list[float]] = {"bare": [], "local": [], "local+out": [], "ray": []}
    ray_ex, ray_start = None, None
    if not args.no_ray and "ray" in kernel.registries["executors"]:
        started = time.perf_counter()
        ray_ex = kernel.executor("ray", num_cpus=args.ray_cpus)
        kernel.batch(spec(), inputs(4 * args.ray_cpus), executor=ray_ex, concurrency=4 * args.ray_cpus)  # warm-up
        ray_start = time.perf_counter() - started
        results["ray"] = []
    try:
        kernel.batch(spec(), inputs(50), concurrency=args.concurrency)  # warm-up: connections, imports
        for _ in range(args.runs):
            runs = [("bare", lambda: asyncio.run(bare(base_url, args.items, args.concurrency))),
                    ("local", lambda: kernel_run(kernel, args, "local", False)),
                    ("local+out", lambda: kernel_run(kernel, args, "local", True))]
            if ray_ex is not None:
                runs.append(("ray", lambda: kernel_run(kernel, args, ray_ex, True)))
            for name, go in runs:
                before = time.process_time()
                results[name].append(go())
                cpu[name].append(time.process_time() - before)
    finally:
        kernel.close()
        proc.kill()
    print(f"server {base_url} ({label}), "
          f"{args.items} items, concurrency {args.concurrency}, median of {args.runs} runs, cpus {os.cpu_count()}")
    print(f"{'':<12}{'items/s':>10}{'us/item':>12}{'over bare us':>14}{'ratio':>9}{'cpu us/item':>14}")
    floor = statistics.median(results["bare"])
    for name, times in results.items():
        print(row(name, times, args.items, None if name == "bare" else floor, cpu[name]))
    if ray_ex is None:
        print("ray: skipped (zagent-ray not installed, or --no-ray)")
    else:
        print(f"ray start-up (local Ray with {args.ray_cpus} CPUs, first workers): {ray_start:.1f} s")


def kernel_run(kernel, args, executor, out: bool) -> float:
    from zagent import run_sync

    return run_sync(zagent_batch(kernel, args.items, args.concurrency, executor, out))


if __name__ == "__main__":
    main()
