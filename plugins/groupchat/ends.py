"""``ChatEnds``: a group chat run's endings, checkpoints and events, as hooks of the run driver
(``zagent.agentkit.lifecycle``).

Endings: ``completed``, ``paused`` at a turn's interrupt (the turn not recorded), ``failed``, ``aborted``
(``RunAborted`` carrying the history); each is checkpointed, except after a failed checkpoint write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import msgspec

from zagent.agentkit.interrupts import Interrupt
from zagent.agentkit.lifecycle import Resumable, RunDriver
from zagent.agentkit.steplog import StepLog
from zagent.errors import RunAborted

from .history import ChatMessage, SharedHistory
from .state import ChatState, GroupChatResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


class ChatEnds(RunDriver[ChatState, GroupChatResult], Resumable[GroupChatResult]):
    """The endings, checkpoints and events of a ``GroupChat`` run, on the run driver
    (``zagent.agentkit.lifecycle``; its fields are set by ``GroupChat``)."""

    kind = "groupchat"
    kernel: "Kernel"
    name: str
    output: str
    clock: Callable[[], float]
    state: Optional[ChatState]
    history: SharedHistory
    _store: Any
    _log: StepLog
    _saved: list[ChatMessage]
    _mark: float

    async def _complete(self, condition: str, detail: str) -> GroupChatResult:
        state = self._running
        state.stopped_by, state.detail = condition, detail
        await self._end("completed", "groupchat_end", stopped_by=condition, rounds=state.round)
        return GroupChatResult(run_id=state.run_id, stopped_by=condition, detail=detail, rounds=state.round,
                               messages=self.history.snapshot(), usage=state.usage, output_name=self.output)

    async def _paused_at(self, asked: Interrupt) -> GroupChatResult:
        """A turn asked a person: the chat ends ``paused`` (checkpointed), the turn unrecorded."""
        state = self._running
        state.interrupt = asked
        await self._end("paused", "groupchat_end", outcome="paused", rounds=state.round, question=asked.question,
                        speaker=asked.speaker,
                        first=("paused", {"round": state.round, "question": asked.question, "speaker": asked.speaker}))
        return GroupChatResult(run_id=state.run_id, stopped_by="interrupt", detail=asked.describe(),
                               rounds=state.round, messages=self.history.snapshot(), usage=state.usage,
                               status="paused", output_name=self.output, interrupts=(asked,))

    async def _failed(self, exc: Exception, save: bool = True) -> None:
        """Any error ends the chat ``failed``: checkpointed, except after a failed checkpoint (it fails closed)."""
        state = self._running
        from zagent.agentkit.secrets import config_masker, mask_exception

        # a library may quote a key or a URL password, the app's speaker the token of its config or deps
        masker = config_masker((self.kernel.config, getattr(self, "_deps", None)))
        mask_exception(exc, masker)
        state.error = masker(f"{type(exc).__name__}: {exc}")
        await self._end("failed", "groupchat_end", save=save, error=state.error)

    # -- the driver's hooks ---------------------------------------------------------------

    def _end_data(self) -> tuple[str, dict[str, Any]]:
        return "groupchat_end", {"rounds": self._running.round}

    def _abort_error(self) -> RunAborted:
        state = self._running
        return RunAborted(f"group chat {state.run_id} was aborted after round {state.round}",
                          trajectory=list(self.history.snapshot()))

    def _position(self) -> dict[str, Any]:
        return {"round": self._running.round}

    def _closing(self) -> None:
        self._tick()

    def _on_resumed(self) -> None:
        self._mark = self.clock()

    def _checkpoint_store(self) -> Any:
        return self._store

    def _checkpoint_payload(self) -> tuple[str, int, Any, dict[str, Any]]:
        running = self._running
        running.checkpoint += 1
        running.counters = self._ctx.shared.to_state()
        from zagent.agentkit.countseal import seal_counts

        from .state import counts_now

        running.counted = seal_counts(self.kernel, running.run_id, "groupchat", counts_now(running), store=self._store)
        self._saved.extend(self.history.since(len(self._saved)))  # one list, only appended to
        state = msgspec.structs.replace(running, messages=self._saved)
        return state.run_id, state.checkpoint, state, {"name": self.name, "status": state.status, "round": state.round}

    def _resume_hint(self) -> str:
        return f"GroupChat(..., checkpoints=store).resume({self._running.run_id!r})"

    def _tick(self) -> None:
        """Add the time since the last mark to ``elapsed`` (paused time is not counted)."""
        now, state = self.clock(), self._running
        state.elapsed += max(0.0, now - self._mark)
        state.usage = self._ctx.usage
        self._mark = now
