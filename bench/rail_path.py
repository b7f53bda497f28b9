"""What the rails cost the kernel per call: ``HookRunner``'s four rail loops (before/after tool, before/after
LLM), no network, no model.

Variants, each a kernel with ``N`` no-op rails on all four rail hooks (a plain function returning ``None``,
as most rails do on most calls), ``--calls`` calls of each loop per block:

* ``rails0``: no rail (the callers' ``hooks.active`` check skips the loop; measured here as a direct call);
* ``rails1``, ``rails3``: one and three sync no-op rails;
* ``async1``: one coroutine-function rail;
* ``rewrite1``: one rail returning a ``Rewrite`` of the tool call's arguments (before tool) or a new
  request/reply (LLM rails): the loops' verdict handling;
* ``floor``: the loop with an ``await`` of a trivial coroutine per call instead.

Prints CPU µs per call of all four loops together (median of ``--rounds`` blocks, variants interleaved
block by block) and the cost over ``floor``.

    python bench/rail_path.py [--rounds 7] [--calls 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import zagent
from zagent import Completion, LLMRequest, Message, Rewrite, ToolCall, ToolResult

CALL = ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
RESULT = ToolResult(call_id="c1", name="add", state="ok", content="3")
REQUEST = LLMRequest(model="m", messages=[Message.user("hi")])
REPLY = Completion(message=Message.assistant("hello"))


class NoOp:
    def zagent_before_tool_call(self, call, ctx):
        return None

    def zagent_after_tool_call(self, call, result, ctx):
        return None

    def zagent_before_llm_call(self, request, ctx):
        return None

    def zagent_after_llm_call(self, request, response, ctx):
        return None


class AsyncNoOp:
    async def zagent_before_tool_call(self, call, ctx):
        return None

    async def zagent_after_tool_call(self, call, result, ctx):
        return None

    async def zagent_before_llm_call(self, request, ctx):
        return None

    async def zagent_after_llm_call(self, request, response, ctx):
        return None


class Rewriting:
    def zagent_before_tool_call(self, call, ctx):
        return Rewrite(arguments={"a": 1, "b": 2})

    def zagent_after_tool_call(self, call, result, ctx):
        return result

    def zagent_before_llm_call(self, request, ctx):
        return request

    def zagent_after_llm_call(self, request, response, ctx):
        return response


VARIANTS: dict[str, list[Any]] = {
    "rails0": [], "rails1": [NoOp], "rails3": [NoOp, NoOp, NoOp], "async1": [AsyncNoOp], "rewrite1": [Rewriting],
}


async def _floor() -> None:
    return None


async def block(variant: str, kernel: Any, calls: int) -> float:
    ctx = kernel.context()
    hooks = kernel.hooks
    started = time.process_time()
    if variant == "floor":
        for _ in range(calls):
            await _floor()
    else:
        for _ in range(calls):
            await hooks.before_tool(CALL, ctx)
            await hooks.after_tool(CALL, RESULT, ctx)
            await hooks.before_llm(REQUEST, ctx)
            await hooks.after_llm(REQUEST, REPLY, ctx)
    return (time.process_time() - started) / calls * 1e6


async def main(rounds: int, calls: int) -> None:
    kernels = {v: zagent.Kernel([cls() for cls in VARIANTS[v]], entry_points=False) for v in VARIANTS}
    kernels["floor"] = zagent.Kernel(entry_points=False)
    times: dict[str, list[float]] = {v: [] for v in kernels}
    for _ in range(rounds):
        for variant, kernel in kernels.items():
            times[variant].append(await block(variant, kernel, calls))
    floor = statistics.median(times["floor"])
    print(f"{'variant':10} {'us/call (4 loops)':>18} {'over floor':>11}")
    for variant, got in times.items():
        med = statistics.median(got)
        print(f"{variant:10} {med:18.2f} {med - floor:11.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.calls))
