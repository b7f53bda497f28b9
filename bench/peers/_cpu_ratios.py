"""CPU ratios of a peer-harness run: each system's client CPU per task over its paired raw_httpx run's.

The harness's tables give wall-time ratios; on a loaded shared machine wall time
mostly measures the load, so the goals are checked on CPU (user+sys of the
client process). For every seq/conc measurement the harness pairs a system's
run with an adjacent raw_httpx run (``pair`` = "round:system"); this prints the
median over rounds of the per-pair ratio, with each round's ratio, and the
first-task cost from the cold-start runs (interpreter + import + setup + first
task, which pays the lazy imports: the cold CPU ratio).

    python bench/peers/_cpu_ratios.py bench-results/latest.json [more.json ...]

(The leading underscore keeps the harness from taking this file for an adapter.)
"""

from __future__ import annotations

import json
import statistics
import sys


def ratios(report: dict, mode: str, field: str = "cpu_per_task_us") -> dict[str, list[float]]:
    runs = report["raw"].get(mode) or {}
    raw = {r["pair"]: r for r in runs.get("raw_httpx", []) if r.get("pair")}
    out: dict[str, list[float]] = {}
    for system, rows in runs.items():
        if system == "raw_httpx":
            continue
        for row in rows:
            floor = raw.get(row.get("pair"))
            if floor and floor.get(field) and row.get(field):
                out.setdefault(system, []).append(row[field] / floor[field])
    return out


def cold(report: dict) -> dict[str, dict[str, float]]:
    rows = report["raw"].get("cold") or {}
    out = {}
    for system, runs in rows.items():
        cpu = [r.get("process_cpu_s") for r in runs if r.get("process_cpu_s")]
        first = [r.get("first_task_ms") for r in runs if r.get("first_task_ms") is not None]
        out[system] = {"cpu_ms": statistics.median(cpu) * 1e3 if cpu else float("nan"),
                       "first_task_ms": statistics.median(first) if first else float("nan")}
    return out


def main(paths: list[str]) -> None:
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        print(f"{path}: started {report.get('started_utc')}, loadavg {report.get('machine', {}).get('loadavg_start')}")
        for mode in ("seq", "conc"):
            for system, values in sorted(ratios(report, mode).items()):
                each = " ".join(f"{v:.3f}" for v in values)
                print(f"  {mode:<4} {system:<16} CPU x raw_httpx: median {statistics.median(values):.3f}  ({each})")
        for system, c in sorted(cold(report).items()):
            print(f"  cold {system:<16} process CPU {c['cpu_ms']:.0f} ms, first task {c['first_task_ms']:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
