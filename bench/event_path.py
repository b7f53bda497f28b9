"""What one ``zagent_event`` costs the kernel: the 12 paired events of a peers task, in a loop, no network.

The events a peers task sends (run, 2 steps, 2 LLM calls, 1 tool call: start and end each), emitted the
way the plugins emit them (``ctx.aemit`` for run/step/tool, ``kernel.aemit(..., run_id=, agent=)`` for the
LLM calls; as kernel/_model/llm.py of the version measured does), with:

* ``none``: no ``zagent_event`` observer (the emitters' own ``hooks.active`` check, then nothing);
* ``unchecked``: no observer, and ``ctx.aemit``/``kernel.aemit`` awaited without that check (what an
  emitter that does not check pays when nobody listens);
* ``sync``: one observer whose ``zagent_event`` is a plain function doing nothing;
* ``async``: one observer whose ``zagent_event`` is a coroutine function doing nothing;
* ``sync3``: three sync no-op observers;
* ``floor``: the loop with an ``await`` of a trivial coroutine per event instead (what the loop itself costs).

Prints CPU µs per event (median of ``--rounds`` blocks of ``--tasks`` tasks, variants interleaved block by
block) and the cost over ``floor``. ``--profile VARIANT`` prints a cProfile of that variant instead.

    python bench/event_path.py [--rounds 7] [--tasks 2000] [--profile sync]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

EVENTS_PER_TASK = 12


class SyncObserver:
    def zagent_event(self, event: Any) -> None:
        return None


class AsyncObserver:
    async def zagent_event(self, event: Any) -> None:
        return None


def make(variant: str) -> Any:
    """An ``async def task()`` sending one peers task's events on a fresh kernel set up for ``variant``."""
    import zagent

    kernel = zagent.Kernel(entry_points=False)
    observers = {"none": [], "unchecked": [], "sync": [SyncObserver()], "async": [AsyncObserver()],
                 "sync3": [SyncObserver(), SyncObserver(), SyncObserver()], "floor": []}[variant]
    for i, observer in enumerate(observers):
        kernel.add_plugin(observer, name=f"observer-{i}")
    ctx = kernel.context(agent="Adder")
    hooks = kernel.hooks
    if variant == "unchecked":
        class Always:
            def active(self, name: str) -> bool:
                return True
        hooks = Always()  # the emitters below skip their own check; aemit still checks

    if variant == "floor":
        async def nothing(type: str, **data: Any) -> None:
            return None

        async def floor_task() -> None:
            for _ in range(EVENTS_PER_TASK):
                await nothing("x", a=1)
        return floor_task

    def tags() -> dict[str, Any]:
        return {"run_id": ctx.run_id, "agent": ctx.agent}

    try:  # how kernel/_model/llm.py sends its events, in the version measured
        from zagent._model.llm import _emitter
    except ImportError:  # older: kernel.aemit with the context's tags as keywords
        _emitter = None

    async def llm_call(n: int) -> None:
        if not hooks.active("zagent_event"):
            return
        if _emitter is not None:
            await _emitter(kernel, ctx).aemit("llm_start", model="mock-model", provider="openai", messages=n)
            await _emitter(kernel, ctx).aemit("llm_end", model="mock-model", finish_reason="stop", input_tokens=20,
                                              output_tokens=5, tool_calls=2 - n, duration=0.001)
        else:
            await kernel.aemit("llm_start", **tags(), model="mock-model", provider="openai", messages=n)
            await kernel.aemit("llm_end", **tags(), model="mock-model", finish_reason="stop", input_tokens=20,
                               output_tokens=5, tool_calls=2 - n, duration=0.001)

    async def task() -> None:
        if hooks.active("zagent_event"):
            await ctx.aemit("run_start", action="Adder", inputs=["question"])
        for step in (1, 2):
            if hooks.active("zagent_event"):
                await ctx.aemit("step_start", step=step, action="Adder")
            await llm_call(step)
            if step == 1:
                if hooks.active("zagent_event"):
                    await ctx.aemit("tool_start", tool="add", call_id="call_1")
                    await ctx.aemit("tool_end", tool="add", call_id="call_1", state="done", error=None,
                                    duration=0.0001)
                if hooks.active("zagent_event"):
                    await ctx.aemit("step_end", step=step, action="Adder", tools=["add"])
            elif hooks.active("zagent_event"):
                await ctx.aemit("step_end", step=step, action="Adder", answered=True)
        if hooks.active("zagent_event"):
            await ctx.aemit("run_end", action="Adder", steps=2, duration=0.002)

    return task


async def measure(variants: list[str], rounds: int, tasks: int) -> dict[str, list[float]]:
    fns = {v: make(v) for v in variants}
    out: dict[str, list[float]] = {v: [] for v in variants}
    for fn in fns.values():
        for _ in range(200):
            await fn()
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for v in order:
            fn = fns[v]
            c = time.process_time()
            for _ in range(tasks):
                await fn()
            out[v].append((time.process_time() - c) / tasks / EVENTS_PER_TASK * 1e6)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--variants", default="floor,none,unchecked,sync,async,sync3")
    ap.add_argument("--profile", default=None, help="cProfile this variant instead of timing")
    a = ap.parse_args()
    if a.profile:
        import cProfile
        import pstats

        fn = make(a.profile)

        async def run() -> None:
            for _ in range(a.tasks):
                await fn()

        with cProfile.Profile() as prof:
            asyncio.run(run())
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
        return
    variants = a.variants.split(",")
    out = asyncio.run(measure(variants, a.rounds, a.tasks))
    floor = statistics.median(out["floor"]) if "floor" in out else 0.0
    print(f"CPU µs per event (median of {a.rounds} blocks of {a.tasks} tasks x {EVENTS_PER_TASK} events):")
    for v, values in out.items():
        med = statistics.median(values)
        print(f"  {v:<7} {med:6.2f}   over floor {med - floor:6.2f}   per task {med * EVENTS_PER_TASK:7.1f}")


if __name__ == "__main__":
    main()
