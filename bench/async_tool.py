"""An async tool's call through the kernel against a hand-written floor, CPU time, blocks interleaved.

``zagent``: ``await k.arun_tool(...)`` of ``async def ping(x)`` registered with the defaults (a 60 s timeout:
the call runs in a task of its own, so a tool ignoring its cancellation can be left behind). ``floor``: the
same coroutine awaited in ``asyncio.wait_for(..., 60)``, what an app timing out its own calls writes. Prints
the median µs per call of each over ``--blocks`` blocks, and their ratio.

    python bench/async_tool.py [--blocks 7] [--calls 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time


async def ping(x: int) -> int:
    """Return x."""
    return x


async def _main(blocks: int, calls: int) -> None:
    from zagent import Kernel

    k = Kernel(entry_points=False)
    k.add_tool(ping)
    call, ctx = {"name": "ping", "arguments": {"x": 1}}, k.context()

    async def zagent() -> None:
        for _ in range(calls):
            await k.arun_tool(call, ctx)

    async def floor() -> None:
        for _ in range(calls):
            await asyncio.wait_for(ping(1), 60)

    await zagent()  # warm: the kernel's first call imports the tool path
    times: dict[str, list[float]] = {"zagent": [], "floor": []}
    for _ in range(blocks):
        for name, run in (("zagent", zagent), ("floor", floor)):
            began = time.process_time()
            await run()
            times[name].append((time.process_time() - began) / calls * 1e6)
    z, f = statistics.median(times["zagent"]), statistics.median(times["floor"])
    print(f"async tool call: zagent {z:.1f} µs, floor (wait_for) {f:.1f} µs, ratio {z / f:.2f}")
    await k.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    asyncio.run(_main(args.blocks, args.calls))
