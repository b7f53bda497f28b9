"""Streaming floor check: the peer harness's raw streaming loop versus a corrected one, beside zagent.

The shared harness's raw streaming floor (``bench_common.raw_stream_loop``)
stops reading at ``data: [DONE]``, before the end of the chunked body, so httpx
cannot put the connection back in its pool: every streamed call opens a new
connection, and zagent's streaming ratios there are flattered. This bench runs,
in one process against the peers' mock server, the peer task streamed (two
calls: a tool call, then the answer):

* ``raw_break``: the harness's way (stops at ``[DONE]``; a connection per call);
* ``raw_drain``: the same parsing, but the body read to its end (connections reused);
* ``zagent``: ``llm.astream`` + ``kernel.arun_tools``, as the zagent peer adapter.

Prints CPU and wall per task, time to first token of the answer, and zagent's
ratios to both floors (median of paired rounds, order rotated). Connections
opened per task come from the mock's ``/stats``.

    python bench/stream_floor.py [--rounds 5] [--tasks 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402

import zagent  # noqa: E402
from scale import ADD, PROMPT, add, start_server  # noqa: E402


async def raw_stream(client: httpx.AsyncClient, first_token, drain: bool) -> str:
    messages = [{"role": "user", "content": PROMPT}]
    while True:
        text, calls = [], {}
        body = {"model": "mock", "messages": messages, "tools": [ADD], "stream": True}
        async with client.stream("POST", "/chat/completions", json=body) as r:
            r.raise_for_status()
            done = False
            async for line in r.aiter_lines():
                if done or not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    if not drain:
                        break
                    done = True
                    continue
                for ch in json.loads(data).get("choices") or ():
                    d = ch.get("delta") or {}
                    if d.get("content"):
                        if not text:
                            first_token()
                        text.append(d["content"])
                    for tc in d.get("tool_calls") or ():
                        slot = calls.setdefault(tc["index"], {"id": None, "type": "function",
                                                              "function": {"name": "", "arguments": ""}})
                        if tc.get("id"):
                            slot["id"] = tc["id"]
                        f = tc.get("function") or {}
                        slot["function"]["name"] += f.get("name") or ""
                        slot["function"]["arguments"] += f.get("arguments") or ""
        if not calls:
            return "".join(text)
        calls = [calls[i] for i in sorted(calls)]
        messages.append({"role": "assistant", "content": "".join(text) or None, "tool_calls": calls})
        for c in calls:
            value = add(**json.loads(c["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": str(value)})


async def zagent_stream(kernel, llm, first_token) -> str:
    tools = kernel.tools(["add"])
    messages = [zagent.Message.user(PROMPT)]
    run = kernel.context()
    while True:
        final = None
        async for chunk in llm.astream(messages, tools=tools, ctx=run):
            if chunk.type == "text" and chunk.text:
                first_token()
            elif chunk.type == "done":
                final = chunk.completion
        messages.append(final.message)
        if not final.tool_calls:
            return final.text
        results = await kernel.arun_tools(final.tool_calls, run)
        messages.extend(r.to_message() for r in results)


async def measure(fn, tasks: int, stats) -> dict[str, float]:
    conns = (await stats())["conns_total"]
    cpu, wall, ttft = time.process_time(), time.perf_counter(), []
    for _ in range(tasks):
        started, seen = time.perf_counter(), []

        def first_token() -> None:
            if not seen:
                seen.append(time.perf_counter() - started)

        assert (await fn(first_token)) == "5"
        ttft.append(seen[0] * 1e3)
    return {"cpu_us": (time.process_time() - cpu) / tasks * 1e6, "wall_us": (time.perf_counter() - wall) / tasks * 1e6,
            "ttft_ms": statistics.median(ttft), "conns": ((await stats())["conns_total"] - conns) / tasks}


async def main(rounds: int, tasks: int) -> None:
    proc, url = start_server()
    try:
        client = httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer x"}, timeout=120.0)
        probe = httpx.AsyncClient(base_url=url.rsplit("/v1", 1)[0])

        async def stats() -> dict:
            return (await probe.get("/stats")).json()

        k = zagent.Kernel(plugins=["zagent.plugins.openai"], entry_points=False)
        k.add_tool(add)
        llm = k.llm("openai:mock", base_url=url, api_key="x")
        variants = {"raw_break": lambda ft: raw_stream(client, ft, drain=False),
                    "raw_drain": lambda ft: raw_stream(client, ft, drain=True),
                    "zagent": lambda ft: zagent_stream(k, llm, ft)}
        for fn in variants.values():
            await measure(fn, 10, stats)
        rows: dict[str, list[dict]] = {name: [] for name in variants}
        for r in range(rounds):
            names = list(variants)
            for name in names[r % 3:] + names[:r % 3]:
                rows[name].append(await measure(variants[name], tasks, stats))
        print(f"streamed peer task, {tasks} tasks x {rounds} rounds (medians)")
        print(f"{'variant':<10} {'CPU µs/task':>12} {'wall µs/task':>13} {'TTFT ms':>8} {'conns/task':>11}")
        for name, values in rows.items():
            med = {key: statistics.median(v[key] for v in values) for key in values[0]}
            print(f"{name:<10} {med['cpu_us']:12.0f} {med['wall_us']:13.0f} {med['ttft_ms']:8.2f} {med['conns']:11.2f}")
        for floor in ("raw_break", "raw_drain"):
            cpu = statistics.median(z["cpu_us"] / f["cpu_us"] for z, f in zip(rows["zagent"], rows[floor]))
            ttft = statistics.median(z["ttft_ms"] / f["ttft_ms"] for z, f in zip(rows["zagent"], rows[floor]))
            print(f"zagent / {floor}: CPU {cpu:.2f}x, TTFT {ttft:.2f}x")
        await client.aclose()
        await probe.aclose()
        await k.aclose()
    finally:
        proc.kill()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=100)
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.tasks))
