"""Start-up benchmark: ``import zagent`` and ``zagent.Kernel()`` against their dependencies.

Prints the median wall time of three commands, each run in a fresh
interpreter, and their ratio to the first:

* ``import pluggy, attrs, msgspec``  (the floor: zagent's own dependencies)
* ``import zagent``                  (budget: 1.25x the floor)
* ``import zagent; zagent.Kernel()`` (budget: 1.6x; every installed plugin loaded)

Runs are interleaved (A B C, A B C, ...) so drift in machine load hits every
command alike. Bytecode caching is enabled for the children even when the
environment sets ``PYTHONDONTWRITEBYTECODE`` (an installed package has its
``.pyc`` files; an uncached source checkout would measure the compiler), and
warm-up runs fill the caches before timing. This is a benchmark, not a test:
it never fails, it reports. ``--check`` makes it exit 1 when a budget is missed.

Usage: ``python bench/startup.py [--runs 15] [--check]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = [
    ("import pluggy, attrs, msgspec", None),
    ("import zagent", 1.25),
    ("import zagent; zagent.Kernel()", 1.6),
]


def child_env() -> dict[str, str]:
    """The environment of the timed interpreters: bytecode caching on, no hook tracing."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("ZAGENT_TRACE_HOOKS", None)
    return env


def time_once(code: str, env: dict[str, str]) -> float:
    """Wall time of one fresh interpreter running ``code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(runs: int, warmup: int = 3) -> list[list[float]]:
    """Interleaved timings: one list of ``runs`` durations per command."""
    env = child_env()
    for _ in range(warmup):
        for code, _budget in COMMANDS:
            time_once(code, env)
    times: list[list[float]] = [[] for _ in COMMANDS]
    for _ in range(runs):
        for i, (code, _budget) in enumerate(COMMANDS):
            times[i].append(time_once(code, env))
    return times


def report(times: list[list[float]]) -> bool:
    """Print medians and ratios; return whether every budget was met."""
    base = statistics.median(times[0])
    ok = True
    print(f"{'command':<34} {'median ms':>10} {'ratio':>7} {'budget':>7}")
    for (code, budget), samples in zip(COMMANDS, times):
        med = statistics.median(samples)
        ratio = med / base
        met = budget is None or ratio <= budget
        ok = ok and met
        mark = "" if budget is None else f"{budget:>6.2f}x {'ok' if met else 'MISSED'}"
        print(f"{code:<34} {med * 1000:>10.1f} {ratio:>6.2f}x {mark}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command (default 15)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a budget is missed")
    args = parser.parse_args(argv)
    ok = report(measure(args.runs))
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
