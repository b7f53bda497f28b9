"""``ChatEnds``: a group chat run's state under way, its three endings, its checkpoints and its events.

The endings: ``completed`` (a termination condition held), ``paused`` at a turn's interrupt (the turn not
recorded) and ``aborted`` (``RunAborted`` carrying the history); each is checkpointed. A checkpoint saves the
change since the last one when the store takes patches (``state.step_log``), else the whole state.
``_abortable`` and ``_tick`` (time spent, paused time not counted) serve the turns too.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

import msgspec

from zagent.agentkit.control import RunControl
from zagent.agentkit.interrupts import Interrupt
from zagent.agentkit.steplog import StepLog
from zagent.errors import RunAborted

from .history import ChatMessage, SharedHistory
from .state import ChatState, GroupChatResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext


class ChatEnds:
    """The endings, checkpoints and events of a ``GroupChat`` run (its fields are set by ``GroupChat``)."""

    kernel: "Kernel"
    name: str
    output: str
    clock: Callable[[], float]
    state: Optional[ChatState]
    history: SharedHistory
    _store: Any
    _control: RunControl
    _ctx: "RunContext[Any]"
    _log: StepLog
    _saved: list[ChatMessage]
    _mark: float

    @property
    def _running(self) -> ChatState:
        """The state of the run under way (set before its first turn)."""
        state = self.state
        assert state is not None, "the chat has not started"
        return state

    async def _complete(self, condition: str, detail: str) -> GroupChatResult:
        state = self._running
        state.status, state.stopped_by, state.detail = "completed", condition, detail
        await self._checkpoint()
        await self._emit("groupchat_end", status="completed", stopped_by=condition, rounds=state.round)
        return GroupChatResult(run_id=state.run_id, stopped_by=condition, detail=detail, rounds=state.round,
                               messages=self.history.snapshot(), usage=state.usage, output_name=self.output)

    async def _paused_at(self, asked: Interrupt) -> GroupChatResult:
        """A turn asked a person: the chat ends ``paused`` (checkpointed), the turn unrecorded."""
        state = self._running
        state.status, state.interrupt = "paused", asked
        self._tick()
        await self._checkpoint()
        await self._emit("paused", round=state.round, question=asked.question, speaker=asked.speaker)
        await self._emit("groupchat_end", status="paused", outcome="paused", rounds=state.round,
                         question=asked.question, speaker=asked.speaker)
        return GroupChatResult(run_id=state.run_id, stopped_by="interrupt", detail=asked.describe(),
                               rounds=state.round, messages=self.history.snapshot(), usage=state.usage,
                               status="paused", output_name=self.output, interrupts=(asked,))

    async def _aborted(self) -> RunAborted:
        state = self._running
        state.status = "aborted"
        self._tick()
        await self._checkpoint()
        await self._emit("groupchat_end", status="aborted", rounds=state.round)
        return RunAborted(f"group chat {state.run_id} was aborted after round {state.round}",
                          trajectory=list(self.history.snapshot()))

    async def _checkpoint(self) -> None:
        """Save the state: the change since the last checkpoint when the store takes patches, else all of it."""
        store = self._store
        if store is None:
            return
        running = self._running
        running.checkpoint += 1
        running.counters = self._ctx.shared.to_state()
        self._saved.extend(self.history.since(len(self._saved)))  # one list, only appended to
        state = msgspec.structs.replace(running, messages=self._saved)
        await self._log.asave(store, state.run_id, state.checkpoint, state, kind="groupchat",
                              metadata={"name": self.name, "status": state.status, "round": state.round},
                              resume=f"GroupChat(..., checkpoints=store).arun(run_id={state.run_id!r})")

    def _emit(self, type: str, **data: Any) -> Awaitable[None]:
        """``ctx.aemit``'s coroutine (await it): no coroutine of its own, the data passed on as is."""
        return self._ctx.aemit(type, **data)

    def _tick(self) -> None:
        """Add the time since the last mark to ``elapsed`` (paused time is not counted)."""
        now, state = self.clock(), self._running
        state.elapsed += max(0.0, now - self._mark)
        state.usage = self._ctx.usage
        self._mark = now

    async def _abortable(self, awaitable: Any) -> Any:
        """Await ``awaitable`` so that ``abort()`` cancels it; after an abort nothing new starts."""
        if self._control.abort_requested:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()
            raise asyncio.CancelledError
        return await self._control.abortable(awaitable)
