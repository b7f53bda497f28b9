"""The sync-tool paths against raw sequential, CPU time, task by task interleaved with the floor.

The peer task (question -> ``add`` tool call -> tool -> "5", two LLM calls,
the peers' mock server) run sequentially by a zagent ``CustomizeAgent`` and by
the hand-written httpx loop, alternating task by task in one process, so both
see the same machine load (on a shared machine the load drifts faster than a
300-task block). Each variant runs in its own child process (one kernel, as
a user's program has):

* ``default``: ``k.add_tool(add)`` -- measured: its first calls run in the
  kernel's tool threads, then on the loop once they proved quick;
* ``threads``: ``inline=False`` -- every call hops to a tool thread;
* ``inline``: ``inline=True`` -- every call on the loop.

Prints, per variant, the median over blocks of (zagent CPU / raw CPU) with each
block's ratio; a process per variant per round, rounds alternating the order.

    python bench/tool_path.py [--rounds 2] [--blocks 4] [--tasks 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

VARIANTS = {"default": {}, "threads": {"inline": False}, "inline": {"inline": True}}


async def child(variant: str, url: str, blocks: int, tasks: int) -> None:
    import zagent
    from scale import PROMPT, add, raw_client, raw_loop

    client = raw_client(url)
    k = zagent.Kernel()
    k.add_tool(add, **VARIANTS[variant])
    llm = k.llm("openai:mock", base_url=url, api_key="x")
    agent = k.agent({"type": "customize", "name": "Adder", "prompt": "{question}",
                     "inputs": [{"name": "question", "type": "string"}],
                     "outputs": [{"name": "answer", "type": "string"}],
                     "parse_mode": "str", "tools": ["add"], "llm": llm.name})
    agent.llm = llm

    async def raw() -> str:
        return await raw_loop(client, [{"role": "user", "content": PROMPT}])

    async def z() -> str:
        return (await agent.acall(question=PROMPT)).answer

    for _ in range(30):
        await raw()
        await z()
    clock, ratios, raw_us = time.process_time, [], []
    for _ in range(blocks):
        spent = [0.0, 0.0]
        for _ in range(tasks):
            t = clock()
            assert await raw() == "5"
            spent[0] += clock() - t
            t = clock()
            assert await z() == "5"
            spent[1] += clock() - t
        ratios.append(spent[1] / spent[0])
        raw_us.append(spent[0] / tasks * 1e6)
    print(json.dumps({"variant": variant, "ratios": ratios, "raw_us": statistics.median(raw_us)}))
    await client.aclose()
    await k.aclose()


def main(rounds: int, blocks: int, tasks: int) -> None:
    from scale import start_server

    proc, url = start_server()
    results: dict[str, list[float]] = {v: [] for v in VARIANTS}
    try:
        for r in range(rounds):
            order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
            for variant in order:
                out = subprocess.run([sys.executable, __file__, "--child", variant, url, str(blocks), str(tasks)],
                                     capture_output=True, text=True, check=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                results[variant].extend(row["ratios"])
                print(f"round {r} {variant:<8} CPU x raw: {' '.join(f'{x:.3f}' for x in row['ratios'])}"
                      f"  (raw {row['raw_us']:.0f} µs/task)", flush=True)
    finally:
        proc.kill()
    for variant, ratios in results.items():
        print(f"{variant:<8} CPU x raw sequential: median {statistics.median(ratios):.3f} over {len(ratios)} blocks")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        asyncio.run(child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
    else:
        ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
        ap.add_argument("--rounds", type=int, default=2)
        ap.add_argument("--blocks", type=int, default=4)
        ap.add_argument("--tasks", type=int, default=300)
        a = ap.parse_args()
        main(a.rounds, a.blocks, a.tasks)
