"""``ChatDrive``: one group chat run from its start to an ending.

``_prepare`` starts a chat on a task or continues a checkpointed one (a person's answer is checkpointed before
its turn runs again); ``_advance`` takes a turn, checks the termination conditions, then checkpoints. Any error
ends the chat ``failed``.
"""

from __future__ import annotations

from typing import Any, Optional

from zagent.agentkit.countseal import akept_seals
from zagent.agentkit.signing import aread_latest, signer_of
from zagent.agentkit.runs import ASKING, RunShare, new_run_id
from zagent import StashKey
from zagent.agentkit.counters import RunCounter, join
from zagent.agentkit.lifecycle import NO_ANSWER
from zagent.errors import CheckpointError, ConfigError, Interrupted
from zagent.agentkit.inputs import check_inputs, check_text

from . import termination as term
from .history import SharedHistory
from .speakers import check_inputs as unfilled_inputs
from .state import ChatState, GroupChatResult, raise_to_sealed, resumed, step_log
from .turn import ChatTurn

#: group chat turns one run takes, in every chat nested in it (Kernel config ``max_chat_turns``)
MAX_CHAT_TURNS = 1000
CHAT_TURNS: "StashKey[RunCounter]" = StashKey("zagent.groupchat.turns")  # per run (``ctx.shared``)


class ChatDrive(ChatTurn):
    """The run of a ``GroupChat`` (a base of it; its fields are set by ``GroupChat``)."""

    _conditions: list[Any]
    _outer: Optional[RunShare]

    async def _prepare(self, task: Optional[str], run_id: Optional[str], inputs: dict[str, Any],
                       answer: Any = NO_ANSWER, resuming: bool = False) -> None:
        if task is not None:
            check_text(task, "the group chat's task")
        check_inputs(inputs, "group chat input")
        found = await aread_latest(self._store, run_id, signer_of(self.kernel)) if run_id and self._store else None
        if (answer is not NO_ANSWER or resuming) and found is None:
            raise ConfigError(f"no group chat run {run_id!r} in {self._store!r}; check the run id (zagent memory "
                              "list --checkpoints lists the checkpointed runs)")
        self._vouched = None
        if found is not None and run_id:  # (a checkpoint is only looked up by a run id)
            state = resumed(found, task, run_id)
            unsigned = signer_of(self.kernel) is None  # (an edit lowers none, nor an earlier step moved up)
            kept = await akept_seals(self.kernel, self._store, run_id, "groupchat", found[0]) if unsigned else ()
            raise_to_sealed(self.kernel, state, found[0], unsigned, self._store, kept)
            # an unsigned store may have been edited: its answers never approve a tool call, this resume's may
            self._vouched = {} if signer_of(self.kernel) is None else None
            self.history = SharedHistory(state.messages)
            if answer is not NO_ANSWER:
                asked = state.interrupt
                if asked is None:
                    raise ConfigError(f"group chat run {run_id!r} is not paused at an interrupt: there is no "
                                      "question to answer (continue it with arun(run_id=...))")
                state.answers = [*state.answers[: asked.index], answer]
                if self._vouched is not None:
                    self._vouched[asked.index] = asked.question  # approves only the call it asked about
        else:
            if not task:
                raise ConfigError("give the chat a task (or the run_id of a checkpointed chat to continue)")
            state = ChatState(run_id=run_id or new_run_id(), name=self.name, task=task, inputs=dict(inputs))
            self.history = SharedHistory()
            self.history.append("user", task, round=0)
        self._check_inputs(state)
        self.state = state
        self._log, self._saved = step_log(self.kernel), list(self.history.snapshot())
        self._start_driver()
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

    async def _before_drive(self) -> None:
        self._mark = self.clock()

    async def _advance(self) -> Optional[GroupChatResult]:
        """One turn, then the termination conditions: the chat's result when one holds. A run's turns, in every
        chat nested in it, are at most ``max_chat_turns``: each chat's ``max_rounds`` alone multiplies by depth."""
        most = self.kernel.config.get("max_chat_turns") or MAX_CHAT_TURNS
        if not self._ctx.shared.get_or_create(CHAT_TURNS, RunCounter).take("turns", most):
            return await self._complete("max_chat_turns", f"this run already took {most} group chat turns (at most "
                                        f"{most} in one run, chats inside chats included: Kernel config "
                                        "'max_chat_turns'); nest fewer chats or give them fewer rounds")
        await self._turn()
        stop = await self._abortable(term.first_met(self._conditions, self._view()))
        if stop is not None:
            return await self._complete(*stop)
        self._tick()
        await self._checkpoint()
        return None

    async def _on_failure(self, exc: Exception) -> Optional[GroupChatResult]:
        """A turn that asked a person pauses the chat (inside a workflow node, the node); any other error
        ends it ``failed``, checkpointed except after a failed checkpoint (it fails closed: the store keeps
        the last good one)."""
        if isinstance(exc, Interrupted):
            return None if self._nested else await self._paused_at(exc.interrupt)
        await self._failed(exc, save=not isinstance(exc, CheckpointError))
        return None

    def _view(self) -> term.ChatView:
        state = self._running
        return term.ChatView(round=state.round, messages=self.history.snapshot(),
                             elapsed=state.elapsed + (self.clock() - self._mark), task=state.task,
                             inputs=dict(state.inputs), ctx=self._ctx)
