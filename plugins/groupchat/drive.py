"""``ChatDrive``: one group chat run from its start to an ending: prepare it, then turn after turn.

``_prepare`` starts a new chat on a task, or continues a checkpointed one (with a person's answer when it
paused at an interrupt: checkpointed before the turn runs again). ``_drive`` runs the rounds: the boundary
(abort, pause: a pause waits there for resume or abort), a turn, the termination conditions, a checkpoint.
Any error ends the chat ``failed`` (checkpointed, except a failed checkpoint: the chat fails closed).
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from zagent.agentkit.signing import aread_latest, signer_of
from zagent._runs.context import ASKING, new_run_id
from zagent._runs.share import RunShare
from zagent.agentkit.counters import join
from zagent.errors import CheckpointError, ConfigError, Interrupted, RunAborted
from zagent.agentkit.inputs import check_inputs, check_text

from . import termination as term
from .history import SharedHistory
from .speakers import check_inputs as unfilled_inputs
from .state import ChatState, GroupChatResult, resumed, step_log
from .turn import ChatTurn

NO_ANSWER: Any = object()  # no answer given (``None`` is an answer)


class ChatDrive(ChatTurn):
    """The run of a ``GroupChat`` (a base of it; its fields are set by ``GroupChat``)."""

    _conditions: list[Any]
    _outer: Optional[RunShare]

    async def _prepare(self, task: Optional[str], run_id: Optional[str], inputs: dict[str, Any],
                       answer: Any = NO_ANSWER) -> None:
        if task is not None:
            check_text(task, "the group chat's task")
        check_inputs(inputs, "group chat input")
        found = await aread_latest(self._store, run_id, signer_of(self.kernel)) if run_id and self._store else None
        if answer is not NO_ANSWER and found is None:
            raise ConfigError(f"no group chat run {run_id!r} in {self._store!r}; check the run id (zagent memory "
                              "list --checkpoints lists the checkpointed runs)")
        if found is not None and run_id:  # (a checkpoint is only looked up by a run id)
            state = resumed(found, task, run_id)
            self.history = SharedHistory(state.messages)
            if answer is not NO_ANSWER:
                asked = state.interrupt
                if asked is None:
                    raise ConfigError(f"group chat run {run_id!r} is not paused at an interrupt: there is no "
                                      "question to answer (continue it with arun(run_id=...))")
                state.answers = [*state.answers[: asked.index], answer]
        else:
            if not task:
                raise ConfigError("give the chat a task (or the run_id of a checkpointed chat to continue)")
            state = ChatState(run_id=run_id or new_run_id(), name=self.name, task=task, inputs=dict(inputs))
            self.history = SharedHistory()
            self.history.append("user", task, round=0)
        self._check_inputs(state)
        self.state = state
        self._log, self._saved = step_log(self.kernel), list(self.history.snapshot())
        self._control.bind()
        self._ctx = self.kernel.context(run_id=state.run_id, agent=self.name, metadata={"groupchat": self.name},
                                        share=self._outer, deps=self._deps)
        join(self.kernel, state.run_id, self._ctx.shared, state.counters)  # every turn counts in it
        self._ctx.usage = state.usage
        self._nested = ASKING.get() is not None  # inside a workflow node: its interrupts are the node's
        await self._emit("groupchat_start", resumed=found is not None, speakers=list(self._speakers),
                         round=state.round)
        if answer is not NO_ANSWER:
            self._log.reset()  # saved whole (answers are in full saves only), before the turn runs again
            await self._checkpoint()

    def _check_inputs(self, state: ChatState) -> None:
        available = set(state.inputs) | {"task"}
        for name, agent in self._speakers.items():
            missing = unfilled_inputs(agent, available)
            if missing:
                raise ConfigError(f"agent {name!r} needs input(s) {', '.join(missing)}, which a group chat turn "
                                  f"does not fill; pass them to arun(...) or use inputs named transcript/task")

    async def _drive(self) -> GroupChatResult:
        state = self._running
        self._mark = self.clock()
        try:
            while True:
                await self._boundary()
                await self._turn()
                stop = await self._abortable(term.first_met(self._conditions, self._view()))
                self._tick()
                if stop is not None:
                    return await self._complete(*stop)
                await self._checkpoint()
        except asyncio.CancelledError:
            if self._control.abort_requested:
                raise await self._aborted() from None
            raise
        except RunAborted:
            raise
        except Interrupted as exc:
            if self._nested:
                raise
            return await self._paused_at(exc.interrupt)
        except CheckpointError as exc:  # fail closed: nothing is written after a failed checkpoint, so the
            state.status, state.error = "failed", f"{type(exc).__name__}: {exc}"  # store keeps the last good one
            await self._emit("groupchat_end", status="failed", error=state.error)
            raise
        except Exception as exc:
            state.status, state.error = "failed", f"{type(exc).__name__}: {exc}"
            self._tick()
            await self._checkpoint()
            await self._emit("groupchat_end", status="failed", error=state.error)
            raise

    def _view(self) -> term.ChatView:
        state = self._running
        return term.ChatView(round=state.round, messages=self.history.snapshot(),
                             elapsed=state.elapsed + (self.clock() - self._mark), task=state.task,
                             inputs=dict(state.inputs), ctx=self._ctx)

    async def _boundary(self) -> None:
        """Honour abort and pause requests between turns; a pause waits here for resume or abort."""
        control = self._control
        if control.abort_requested:
            raise await self._aborted()
        if not control.pause_requested:
            return
        state = self._running
        self._tick()
        state.status = "paused"
        await self._checkpoint()
        await self._emit("paused", round=state.round)

        def mark_paused() -> None:
            state.status = "paused"

        await control.wait_while(lambda: control.pause_requested, mark_paused)
        if control.abort_requested:
            raise await self._aborted()
        state.status = "running"
        self._mark = self.clock()
        await self._emit("resumed", round=state.round)
