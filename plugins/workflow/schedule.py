"""``Schedule``: which node runs next, and what a node's end does to the run. A node starts once its forward
predecessors have settled, if one led to it and its required inputs exist, else it is skipped; a failed node cancels
the others under ``fail_fast`` or a ``RunStopped``; a failed checkpoint write halts the run (``_halt``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Optional

from zagent.agentkit.interrupts import Interrupt
from zagent.errors import CheckpointError, Interrupted, RunStopped

from .attempts import NodeAttempts
from .errors import WorkFlowError
from .result import TraceEntry
from .routing import append as append_reducer, choose, reduce_outputs
from .running import short


class Schedule(NodeAttempts):
    """The scheduling of a workflow run's nodes (a base of ``WorkFlowRun``)."""

    def _pump(self) -> None:
        """Start or skip every node whose predecessors have all settled (a loop, not recursion)."""
        while self.queue:
            self._ready(self.queue.pop())

    def _ready(self, name: str) -> None:
        """All predecessors settled: start the node, or skip it (and settle its successors)."""
        if self.node_status[name] != "pending" or self.stopping:
            return
        if not self.led[name]:
            return self._skip(name, "no predecessor led to it (a branch not taken or a failed node)")
        node = self.nodes[name]
        missing = [i for i in node.required_inputs if self.values.get(i) is None]
        if missing:
            return self._skip(name, f"missing input(s) {', '.join(missing)}")
        self.node_status[name] = "running"
        task = asyncio.ensure_future(self._node_task(name))
        self.tasks[task] = name
        task.add_done_callback(self._task_done)  # also runs for a task cancelled before it started

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.pop(task, None)
        if not self.tasks:
            self.idle.set()

    def _skip(self, name: str, why: str) -> None:
        self.node_status[name] = "skipped"
        self.trace.append(TraceEntry(node=name, status="skipped", error=why))
        if self.events:
            self.background.append(asyncio.ensure_future(
                self._emit("node_end", node=name, status="skipped", reason=why)))
        self._settle(name, False)

    def _settle(self, name: str, ran: bool) -> None:
        chosen = self.routes.get(name)
        for succ in self.topo.succs[name]:
            edge = (name, succ)
            if edge in self.settled:
                continue
            self.settled.add(edge)
            if ran and (not self.topo.preds[succ][name] or (chosen is not None and succ in chosen)):
                self.led[succ].add(name)
            self.remaining[succ] -= 1
            if self.remaining[succ] == 0:
                self.queue.append(succ)

    # -- one node -------------------------------------------------------------------

    async def _node_task(self, name: str) -> None:
        started = time.time()
        try:
            try:
                outputs, attempts = await self._attempts(name)
                route, loop = self._route(name, outputs)
                merged = reduce_outputs(self.reducers, self.values, outputs, name)  # no await until it is applied
            except Interrupted as exc:  # it asks a person: paused, not failed (its successors wait)
                await self._paused_at(name, exc.interrupt, started)
                return
            except CheckpointError as exc:  # an inner run's checkpoint failed and it stopped: so does the run
                self._halt(exc)  # (the node stays unfinished in our checkpoint: a resume runs it again)
                return
            except Exception as exc:
                await self._failed(name, exc, started)
            else:
                await self._finished(name, outputs, merged, attempts, route, loop, started)
        except CheckpointError as exc:  # the node's own errors were handled above: this is its checkpoint's
            self._halt(exc)

    def _halt(self, exc: CheckpointError) -> None:
        """A checkpoint write failed: stop the run (it fails closed). No node starts, the running ones are
        cancelled (``go`` waits for them, then raises ``exc``) and nothing more is written, so the store keeps
        the run as of its last checkpoint that landed, to resume from."""
        if self._halted is None:
            self._halted = exc
        self.stopping = True
        for task, other in list(self.tasks.items()):
            if task is not asyncio.current_task() and not task.done():
                task.cancel()
                self.node_status[other] = "cancelled"

    async def _halted_end(self, exc: CheckpointError) -> None:
        if self.background:
            await asyncio.gather(*self.background)
        await self._end("failed", "workflow_end", save=False, errors=sorted(self.errors), error=short(exc, 500))

    def _route(self, name: str, outputs: dict[str, Any]) -> tuple[Optional[list[str]], Optional[str]]:
        """The router's choice after ``name`` ran: ``(forward targets, loop target or None)``."""
        found = self.routers.get(name)
        if found is None:
            return None, None
        edge, router = found
        picked = choose(edge, router, {**self.values, **outputs})
        loops = [t for t in picked if (name, t) in self.topo.loops]
        if not loops:
            return picked, None
        if len(picked) > 1:
            raise WorkFlowError(f"router of {name!r} chose {picked}: a loop target cannot be combined with others")
        key = f"{name}->{loops[0]}"
        if self.loops.get(key, 0) >= edge.max_loops:
            if edge.on_max_loops is None:
                raise WorkFlowError(f"loop {key} reached max_loops={edge.max_loops}; raise it or set on_max_loops")
            return [edge.on_max_loops], None
        return None, loops[0]

    async def _finished(self, name: str, outputs: dict[str, Any], merged: dict[str, Any], attempts: int,
                        route: Optional[list[str]], loop: Optional[str], started: float) -> None:
        for key, new in merged.items():
            old = self.values.get(key)
            self.values[key] = new
            if self.reducers.get(key) is append_reducer:  # a new list holding old's items first: the patch carries the items added
                self._log.grew("values", key, old, new)
            else:
                self._log.touch("values", key)
        iteration = self.passes.get(name, 0)
        self.passes[name] = iteration + 1
        answers = self.answers.pop(name, [])
        if answers:
            self._log.touch("answers", name)  # used: a later pass (a loop) asks afresh
        self.trace.append(TraceEntry(node=name, status="done", agents=self.agents[name], attempts=attempts,
                                     outputs=outputs, route=route if loop is None else [loop], iteration=iteration,
                                     started=started, duration=time.time() - started, answers=answers,
                                     counts=self.counts()))
        if loop is not None:
            self._restart_loop(name, loop)
            await self._checkpoint()
            await self._emit("workflow_loop", node=name, target=loop, iteration=self.loops[f"{name}->{loop}"])
            self.queue.append(loop)
            self._pump()
            return
        self.node_status[name] = "done"
        self.done[name] = outputs
        self._log.touch("done", name)
        if route is not None:
            self.routes[name] = route
            self._log.touch("routes", name)
        await self._checkpoint()
        await self._emit("node_end", node=name, status="done", attempts=attempts, outputs=sorted(outputs))
        self._settle(name, True)
        self._pump()

    def _restart_loop(self, source: str, target: str) -> None:
        key = f"{source}->{target}"
        self.loops[key] = self.loops.get(key, 0) + 1
        self._log.touch("loops", key)
        body = self.topo.loop_body(source, target)
        inside = set(body)
        for n in body:
            self.node_status[n] = "pending"
            for field, saved in (("done", self.done), ("routes", self.routes)):
                if n in saved:
                    del saved[n]
                    self._log.touch(field, n)
            self.led[n] = {p for p in self.led[n] if p not in inside}
            self.remaining[n] = sum(1 for p in self.topo.preds[n] if p in inside)
            self.settled -= {(n, s) for s in self.topo.succs[n] if s in inside}
        self.led[target].add(source)

    async def _paused_at(self, name: str, asked: Interrupt, started: float) -> None:
        """``name`` asked a person: it waits (not settled: its successors wait too), the run goes on."""
        self.node_status[name] = "paused"
        self.interrupts[name] = asked
        self._log.touch("interrupts", name)
        self.trace.append(TraceEntry(node=name, status="paused", agents=self.agents[name], question=asked.question,
                                     started=started, duration=time.time() - started, counts=self.counts()))
        await self._checkpoint()
        await self._emit("node_end", node=name, status="paused", outcome="paused", question=asked.question,
                         index=asked.index)

    async def _failed(self, name: str, exc: BaseException, started: float) -> None:
        self.node_status[name] = "failed"
        self.errors[name] = short(self.masked(exc), 500)
        self.failures[name] = exc
        self.trace.append(TraceEntry(node=name, status="failed", agents=self.agents[name], error=self.errors[name],
                                     started=started, duration=time.time() - started, counts=self.counts()))
        stopped = isinstance(exc, RunStopped)  # a usage limit or guardrail ends the run whatever on_error says
        if self.ex.on_error == "fail_fast" or stopped:
            self.stopping = True
            for task, other in list(self.tasks.items()):
                if task is not asyncio.current_task() and not task.done():
                    task.cancel()
                    self.node_status[other] = "cancelled"
                    self.trace.append(TraceEntry(node=other, status="cancelled",
                                                 error=f"cancelled: {name!r} " + (
                                                     f"stopped the run ({type(exc).__name__})" if stopped
                                                     else "failed (fail_fast)")))
        await self._checkpoint()
        await self._emit("node_end", node=name, status="failed", error=self.errors[name])
        if not self.stopping:
            self._settle(name, False)
            self._pump()
