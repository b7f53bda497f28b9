"""Very wide concurrency: N calls at once through zagent versus the best raw-httpx configuration, same run.

Starts the peers' mock server (``../shared/bench/peers/mock_server.py``, else
this repository's test server) in a child process, then for each N (default
1,000 and 5,000) runs ``asyncio.gather`` of N one-call tasks for each side:

* ``zagent``: ``k.llm("openai:...").acomplete`` with the defaults (httpx, pool
  100/20, ``max_in_flight`` = 100: a fair FIFO gate in front of the pool);
* ``zagent_nogate``: the same with ``max_in_flight=0`` (everything sent at the
  pool: the behaviour before the gate), only up to ``--nogate-max`` calls,
  because httpx's pool then slows down with the square of the waiters;
* ``zagent_httpx2``: zagent on httpx2 (when installed);
* raw httpx floors with a hand-written post: pool 100/20 with a semaphore of
  8, 32, 64, 100 or 200 in front, and pool 1000/200 with no semaphore up to
  ``--nogate-max``. The best of them (lowest wall time at that N) is the floor.

Each side runs one warm-up burst (which opens the connections), then
``--rounds`` bursts, the rounds interleaving the sides (order alternating, so
drift in the machine's load hits every side alike); prints per side the median
wall time of a burst, CPU time of this process per call, and the ratio to the
best raw floor.

    python bench/concurrency.py [--n 1000 5000] [--rounds 3] [--nogate-max 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent))

from provider_overhead import MESSAGES, Bare, Zagent, start_server  # noqa: E402


async def burst(side, n: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*[side.call() for _ in range(n)])
    assert all(results) and len(results) == n
    return time.perf_counter() - wall, time.process_time() - cpu


async def measure_all(sides: dict, n: int, rounds: int) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) of ``rounds`` bursts per side; rounds interleave the sides, order alternating."""
    built = {name: make() for name, make in sides.items()}
    walls: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    failed: dict[str, str] = {}
    try:
        for side in built.values():
            await burst(side, min(n, 100))  # open the connections
        for r in range(rounds):
            order = list(built) if r % 2 == 0 else list(reversed(built))
            for name in order:
                if name in failed:
                    continue
                gc.collect()
                try:
                    wall, cpu = await burst(built[name], n)
                except Exception as exc:  # e.g. httpx's pool timeout when thousands wait inside it
                    failed[name] = f"{type(exc).__name__}: {str(exc)[:160]}"
                    print(f"  round {r + 1} N={n:<6} {name:<15} FAILED {failed[name]}", flush=True)
                    continue
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"  round {r + 1} N={n:<6} {name:<15} wall {wall:7.3f} s   cpu {cpu / n * 1e6:7.0f} us/call",
                      flush=True)
    finally:
        for side in built.values():
            await side.aclose()
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in sides
            if name not in failed}


def sides_for(base_url: str, n: int, args) -> dict:
    import httpx

    same = httpx.Limits(max_connections=100, max_keepalive_connections=20)
    wide = httpx.Limits(max_connections=1000, max_keepalive_connections=200)
    sides = {"zagent": lambda: Zagent(base_url, http_module="httpx")}
    for gate in args.zagent_gates:
        sides[f"zagent_gate{gate}"] = (lambda g: lambda: Zagent(base_url, http_module="httpx", max_in_flight=g))(gate)
    for spec in args.zagent_side:  # NAME:key=int,key=int
        label, _, opts = spec.partition(":")
        kw = {k: int(v) for k, v in (o.split("=", 1) for o in opts.split(",") if o)}
        sides[label] = (lambda o: lambda: Zagent(base_url, http_module="httpx", **o))(kw)
    for spec in args.raw_side:  # NAME:connections,keepalive,gate
        label, _, opts = spec.partition(":")
        conns, keep, gate = (int(x) for x in opts.split(","))
        sides[label] = (lambda c, k, g: lambda: Bare(
            base_url, httpx.Limits(max_connections=c, max_keepalive_connections=k), gate=g))(conns, keep, gate)
    if n <= args.nogate_max:
        sides["zagent_nogate"] = lambda: Zagent(base_url, http_module="httpx", max_in_flight=0)
    if not args.no_httpx2:
        try:
            import httpx2  # noqa: F401

            sides["zagent_httpx2"] = lambda: Zagent(base_url, http_module="httpx2")
        except ImportError:
            pass
    for gate in args.raw_gates:
        sides[f"raw_gate{gate}"] = (lambda g: lambda: Bare(base_url, same, gate=g))(gate)
    if n <= args.nogate_max:
        sides["raw_pool1000"] = lambda: Bare(base_url, wide)
    return sides


def raise_fd_limit() -> None:
    """Every side keeps its pool open through the interleaved rounds: allow the sockets (here and in the server)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


async def main_async(args, base_url: str) -> None:
    for n in args.n:
        sides = sides_for(base_url, n, args)
        results = await measure_all(sides, n, args.rounds)
        raw = {k: v for k, v in results.items() if k.startswith("raw_")}
        best = min(raw, key=lambda k: raw[k][0])
        print(f"N={n}: best raw floor {best} wall {raw[best][0]:.3f} s")
        for name, (wall, cpu) in results.items():
            if name.startswith("zagent"):
                print(f"N={n}: {name:<15} wall {wall:7.3f} s  ratio {wall / raw[best][0]:.3f} x best raw   "
                      f"cpu/call {cpu / n * 1e6:.0f} us  ratio {cpu / raw[best][1]:.3f}")
        print(flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nogate-max", type=int, default=1000,
                    help="largest N for the sides without an in-flight gate (they slow down quadratically)")
    ap.add_argument("--raw-gates", type=int, nargs="*", default=[8, 32, 64, 100, 200],
                    help="raw floors: pool 100/20 with a semaphore of this size in front")
    ap.add_argument("--zagent-gates", type=int, nargs="*", default=[],
                    help="extra zagent sides with max_in_flight set to these values")
    ap.add_argument("--zagent-side", action="append", default=[], metavar="NAME:KEY=INT,...",
                    help="an extra zagent side with these k.llm options, e.g. ka100:max_keepalive_connections=100")
    ap.add_argument("--raw-side", action="append", default=[], metavar="NAME:CONNS,KEEPALIVE,GATE",
                    help="an extra raw floor with these pool limits and semaphore size")
    ap.add_argument("--no-httpx2", action="store_true")
    args = ap.parse_args()
    assert MESSAGES
    raise_fd_limit()
    proc, base_url, _label = start_server()
    try:
        print(f"server {base_url}, N {args.n}, rounds {args.rounds}", flush=True)
        asyncio.run(main_async(args, base_url))
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
