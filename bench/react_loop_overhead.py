"""ReAct loop overhead per step versus the bare provider call, against a loopback server.

The peers' mock server (``../shared/bench/peers/mock_server.py``, started by
``provider_overhead.start_server``) answers the first call of a task with an
``add`` tool call and the next with ``"5"``. One ReAct run of that task is two
steps (two LLM calls, one tool call). Measured in paired rounds, in one process:

* bare: the same two requests sent with ``llm.asend`` and the tool called by hand;
* bare_thread: the same, the tool run in the kernel's thread pool by hand;
* loop: ``ReActLoop.arun`` (tool run through ``Kernel.arun_tool``, default
  thread pool), compared with bare_thread;
* loop_inline: the same with the tool registered ``inline=True``, compared with bare.

Prints per-step medians and the loop's ratio to the bare run doing the same
tool work (goal: within 1.2x). bare_thread/bare shows what the default thread
hop for sync tools costs.

    python bench/react_loop_overhead.py [--rounds 5] [--tasks 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider_overhead import start_server  # noqa: E402

import zagent  # noqa: E402
from zagent import Message, ToolCall  # noqa: E402

PROMPT = "What is 2 + 3? Use the add tool."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def bare_task(kernel, llm, tools, threaded: bool = False) -> str:
    messages = [Message.system("You solve requests step by step."), Message.user(PROMPT)]
    first = await llm.asend(llm.request(messages, tools=tools))
    call: ToolCall = first.tool_calls[0]
    if threaded:  # the same thread hop the kernel makes for a sync tool by default
        value = await asyncio.get_running_loop().run_in_executor(kernel.tool_executor(), lambda: add(**call.arguments))
    else:
        value = add(**call.arguments)
    messages += [first.message, Message.tool(str(value), call.id, call.name)]
    second = await llm.asend(llm.request(messages, tools=tools))
    return second.text


async def loop_task(kernel, llm, tool_name) -> str:
    from zagent.plugins.react import ReActLoop

    loop = ReActLoop(kernel=kernel, llm=llm, tools=[tool_name], system_prompt="You solve requests step by step.",
                     allow_clarification=False)
    return (await loop.arun(PROMPT)).content


async def timed(fn, n) -> float:
    for _ in range(10):
        await fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        assert (await fn()) == "5"
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) / 2 * 1e6  # per step, µs


def kernel_with(url: str, inline: bool):
    k = zagent.Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                               "zagent.plugins.react"], entry_points=False)
    k.add_tool(add, inline=inline)
    return k, k.llm("openai:mock", base_url=url, api_key="x")


async def main(rounds: int, tasks: int) -> None:
    proc, url, _label = start_server()
    try:
        k, llm = kernel_with(url, inline=False)
        ki, llmi = kernel_with(url, inline=True)
        tools = k.tools(["add"])
        rows = {"bare": [], "bare_thread": [], "loop": [], "loop_inline": []}
        for r in range(rounds):
            order = [("bare", lambda: bare_task(k, llm, tools)),
                     ("bare_thread", lambda: bare_task(k, llm, tools, threaded=True)),
                     ("loop", lambda: loop_task(k, llm, "add")),
                     ("loop_inline", lambda: loop_task(ki, llmi, "add"))]
            if r % 2:
                order.reverse()
            for name, fn in order:
                rows[name].append(await timed(fn, tasks))
        floor = {"bare": "bare", "bare_thread": "bare", "loop": "bare_thread", "loop_inline": "bare"}
        print(f"{'variant':<12} {'µs/step':>9} {'x floor':>8}  floor")
        for name, values in rows.items():
            ratios = [v / b for v, b in zip(values, rows[floor[name]])]
            print(f"{name:<12} {statistics.median(values):9.0f} {statistics.median(ratios):8.2f}  {floor[name]}")
        print(f"(bare = two llm.asend calls and the tool called by hand, inline or in the kernel's thread pool;"
              f" each loop variant is compared with the bare run doing the same tool work;"
              f" median of {rounds} paired rounds)")
        await k.aclose()
        await ki.aclose()
    finally:
        proc.kill()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=200)
    a = ap.parse_args()
    asyncio.run(main(a.rounds, a.tasks))
