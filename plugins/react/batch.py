"""A ReAct step's tool calls: run as one batch (at most ``max_tool_call_concurrency`` at a time), each result
checkpointed as it lands, calls awaiting human approval held until approved or declined.

``ToolBatches`` is a base of ``ReActLoop``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Awaitable, Optional

import msgspec

from zagent.agentkit.approvals import declined, tool_identity
from zagent.agentkit.callcap import refuse_past, reply_limit
from zagent.agentkit.toolloop import results_messages
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS, PENDING_APPROVAL, PENDING_KEYS
from zagent.types import ToolCall, ToolResult

from .ends import RunEnds
from .seals import claim_approval, seal_held
from .state import StepResult
from .step import CLARIFY, clarifies


class ToolBatches(RunEnds):
    """The tool batches and approvals of a ``ReActLoop`` (its fields are declared on ``ReActLoop``)."""

    max_tool_call_concurrency: int

    def _blocked_on_approval(self) -> bool:
        state = self._running
        if not state.awaiting_approval:
            return False
        approved = set(state.approved)
        return any(state.approval_keys.get(c) not in approved for c in state.awaiting_approval)

    def _release_approved(self) -> None:
        state = self._running
        approved = set(state.approved)
        state.awaiting_approval = [c for c in state.awaiting_approval if state.approval_keys.get(c) not in approved]
        self._ctx.frame.setdefault(APPROVED, set()).update(approved)

    def _deny_pending(self, denied: set[str]) -> None:
        for call in self._running.pending:
            if call.id in denied and call.id not in self._running.finished:
                self._running.finished[call.id] = declined(call)
        self._running.awaiting_approval = [c for c in self._running.awaiting_approval if c not in denied]

    # -- tool batches -------------------------------------------------------------------

    async def _run_batch(self) -> None:
        state = self._running
        if self._ctx.offered_tools is None:  # restored mid-batch: the turn's selection is gone; the agent's tools
            self._ctx.offered_tools = frozenset(self.tools)
        limit = reply_limit(self.llm.profile.max_tool_calls_per_reply, self._ctx)
        if len(state.pending) > limit:  # a batch read back holding more calls than one reply may run (an edited store)
            state.pending = refuse_past(state.pending, limit)
        self._release_approved()
        gate = asyncio.Semaphore(max(1, self.max_tool_call_concurrency))
        waiting = set(state.awaiting_approval)
        todo = [c for c in state.pending if c.id not in state.finished and c.id not in waiting]
        if len(todo) == 1:
            await self._run_call(todo[0], gate)
        elif todo:  # none left when a human declined every call that was waiting
            await _all_or_none([self._run_call(c, gate) for c in todo])
        if self._control.abort_requested:
            raise await self._abort_end()
        if state.pending and all(c.id in state.finished for c in state.pending):
            self._close_batch()  # only when no call ran here (a restored batch whose calls had all finished)
            await self._checkpoint()
        if not state.pending:  # the batch is closed (by its last result's record, or just above)
            end, self._step_end = getattr(self, "_step_end", None), None
            if end is not None:
                await self._emit("step_end", **end)

    async def _run_call(self, call: ToolCall, gate: asyncio.Semaphore) -> None:
        # The slot is held until the result is checkpointed: with one call at a time, the next call
        # starts only once this one's result is durable, so a crash never reruns a finished call.
        async with gate:
            if self._control.pause_requested or self._control.abort_requested:
                return  # not started: it runs after resume
            await self._run_and_record(call)

    async def _run_and_record(self, call: ToolCall) -> None:
        started = time.perf_counter()
        if call.name == CLARIFY.name and clarifies(self):  # not offered: the kernel blocks it
            result = ToolResult(call_id=call.id, name=call.name, state="error", error="mixed with tool calls",
                                content="Error: ask_clarification must be the only call of a reply; the other "
                                        "calls ran. Ask again on its own if you still need the user's answer.")
        elif not claim_approval(self._running, call):  # its approval ran it before (a rollback, a second resume)
            from zagent.plugins.actions.asked import ran_result

            result = ran_result(call)
        else:
            result = await self._abortable(self.kernel.arun_tool(call, self._ctx))
        state = self._running
        pending = self._ctx.frame.get(PENDING_APPROVAL)
        if pending and call.id in pending:
            pending.discard(call.id)
            key = (self._ctx.frame.get(PENDING_KEYS) or {}).pop(call.id, None)
            if key is not None:
                state.approval_keys[call.id] = key
                identity = state.held_tools[call.id] = tool_identity(self.kernel.find("tools", call.name))
                seal_held(self.kernel, state, call, identity, self.checkpoints)  # an edited store's: asked again
            if call.id not in state.awaiting_approval:
                state.awaiting_approval.append(call.id)
            await self._emit("approval_needed", tool=call.name, call_id=call.id)
            await self._checkpoint()
            return
        # the checkpoint keeps what the model reads, never the tool's own value (50 MB, or no JSON at all)
        state.finished[call.id] = result if result.value is None else msgspec.structs.replace(result, value=None)
        state.steps.append(_step_result(state.step, call, result, state.reasoning, time.perf_counter() - started))
        if all(c.id in state.finished for c in state.pending):
            self._close_batch()  # the batch's last result: one checkpoint holds it and the closed batch
        await self._checkpoint()

    def _close_batch(self) -> None:
        state = self._running
        results = [state.finished[c.id] for c in state.pending]
        state.messages.extend(results_messages(results, native=self.llm.profile.native_tools, feedback=state.feedback))
        state.pending, state.finished, state.feedback = [], {}, ""
        self._withdraw_approvals()
        state.call_keys, state.approval_keys, state.approved = {}, {}, []
        if state.held_tools:  # (a new dict only then: the step log writes an unchanged one in no patch)
            state.held_tools = {}
        if state.held_seals:
            state.held_seals = {}
        self._ctx.frame[CALL_KEYS] = state.call_keys

    def _withdraw_approvals(self, outer: Optional[dict[str, str]] = None) -> None:
        """Take this run's approvals and minted ids out of its context (a closed batch's, or all of them when
        the run stops): an approval covers one call of this run, never a later call on the same context (the
        app's, or an outer loop's); ``outer``: the minted ids the context held before this run (an outer loop's)."""
        state, stash = self._running, self._ctx.frame
        granted = stash.get(APPROVED)
        if granted:
            granted.difference_update(state.approved)
        if stash.get(CALL_KEYS) is state.call_keys:
            if outer is None:
                stash.pop(CALL_KEYS, None)
            else:
                stash[CALL_KEYS] = outer


async def _all_or_none(calls: list[Awaitable[None]]) -> None:
    """Await ``calls`` at once, each in its own task. The first to raise (a checkpoint that failed, say) cancels
    the others there and then, before they run on, and they are awaited before its error is raised: none keeps
    running after the batch has ended (``asyncio.gather`` would leave them running). A call cancelled from
    outside (an abort) makes it raise ``CancelledError`` once all have ended."""
    tasks: list[asyncio.Future[None]] = []

    async def run(call: Awaitable[None]) -> None:
        try:
            await call
        except asyncio.CancelledError:
            raise
        except BaseException:
            for task in tasks:
                if task is not asyncio.current_task():
                    task.cancel()
            raise

    tasks.extend(asyncio.ensure_future(run(c)) for c in calls)
    try:
        await asyncio.wait(tasks)
    except asyncio.CancelledError:  # the batch itself was cancelled: so are its calls
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        for call in calls:  # a task cancelled before it started never awaited its call: close it unrun (no
            if inspect.iscoroutine(call) and inspect.getcoroutinestate(call) == inspect.CORO_CREATED:  # warning)
                call.close()
    failed = next((t.exception() for t in tasks if not t.cancelled() and t.exception() is not None), None)
    if failed is not None:
        raise failed
    for task in tasks:
        task.result()


def _step_result(step: int, call: ToolCall, result: ToolResult, reasoning: str, duration: float) -> StepResult:
    params = call.arguments if isinstance(call.arguments, dict) else {"_raw": call.arguments}
    return StepResult(step=step, action="use_tool", tool=call.name, call_id=call.id, parameters=params,
                      result=result.content, reasoning=reasoning, is_error=result.state in ("error", "timeout"),
                      is_blocked=result.state == "blocked", reason=result.error or "", duration=duration)
