"""``WorkFlowRun``: drives one run to its end (``go``): ``failed`` (raising ``WorkFlowFailed``), ``paused`` (a node
waits on an interrupt) or ``finished``. A failed checkpoint write raises its ``CheckpointError`` once nodes end."""

from __future__ import annotations

import asyncio
from typing import Any

from zagent.agentkit.secrets import mask_exception
from zagent.errors import CheckpointError

from .errors import WorkFlowFailed
from .result import WorkFlowResult
from .schedule import Schedule


class WorkFlowRun(Schedule):
    """One run of a graph (made by ``WorkFlowExecutor``, never shared between runs)."""

    async def go(self) -> WorkFlowResult:
        """Start the nodes that can start, wait until every node task has ended, and end the run. Cancelled from
        outside, it cancels its node tasks and waits for them (as a task group does), then sends ``workflow_end``
        with status ``cancelled``; nothing is checkpointed for it, so its last checkpoint resumes it."""
        try:
            return await self._go()
        except asyncio.CancelledError:
            self.stopping = True
            running = [task for task in self.tasks if not task.done()]
            for task in running:
                task.cancel()
                self.node_status[self.tasks[task]] = "cancelled"
            if running or self.background:
                await asyncio.wait([*running, *self.background])
            await self._cancelled_end()
            raise

    async def _go(self) -> WorkFlowResult:
        await self._emit("workflow_start", workflow=self.graph.name, nodes=len(self.nodes), resumed=self.resumed)
        if self.given:  # the answers are in the store before anything else happens
            await self._checkpoint()
        for name in self.topo.order:
            if name in self.done:
                self.node_status[name] = "done"
                self._settle(name, True)
            elif not self.topo.preds[name]:
                self.led[name].add("")
                self.queue.append(name)
        self._pump()
        if self.tasks:
            await self.idle.wait()
        if self._halted is not None:  # every node task has ended (the others were cancelled)
            await self._halted_end(self._halted)
            raise self._halted
        return await self._finish()

    async def _finish(self) -> WorkFlowResult:
        status = "failed" if self.errors else "paused" if self.interrupts else "finished"
        outputs = {k: v for n in self.topo.names if n in self.done and not self._leads_on(n)
                   for k, v in self.done[n].items()}
        asked = [self.interrupts[n] for n in self.topo.order if n in self.interrupts]
        result = WorkFlowResult(run_id=self.run_id, status=status, outputs=outputs, values=dict(self.values),
                                trace=list(self.trace), errors=dict(self.errors), resumed=self.resumed,
                                usage=self.usage, interrupts=asked)
        if self.background:
            await asyncio.gather(*self.background)
        extra: dict[str, Any] = {"outcome": "paused", "questions": [a.describe() for a in asked]} \
            if status == "paused" else {}
        try:
            await self._end(status, "workflow_end", errors=sorted(self.errors), **extra)
        except CheckpointError as exc:
            await self._halted_end(exc)
            raise
        if self.errors:
            lines = "; ".join(f"{n}: {e}" for n, e in self.errors.items())
            cause = next(iter(self.failures.values()), None)  # e.g. the provider's AuthenticationError
            for failure in self.failures.values():  # a node's exception quoting OPENAI_API_KEY: shown by ``causes``
                mask_exception(failure)  # and by the traceback, as ``errors`` masks it
            raise WorkFlowFailed(f"workflow {self.graph.name!r} run {self.run_id} failed: {lines}", result=result,
                                 causes=self.failures) from cause
        return result

    def _closed(self) -> None:
        """Checkpointed: an executor without a store keeps a paused run, to resume from it."""
        if self.ex.checkpoints is None and self._halted is None:
            if self.interrupts:
                self.ex._paused[self.run_id] = (0, self._state(self.run_status))
            else:
                self.ex._paused.pop(self.run_id, None)

    def _leads_on(self, name: str) -> bool:
        """Whether a successor of ``name`` ran (then ``name``'s outputs are not the run's outputs)."""
        return any(self.node_status.get(s) == "done" for s in self.topo.succs[name])
