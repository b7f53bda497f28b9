"""``ChatTurn``: one turn of a group chat: choose the speaker, let it speak on a snapshot of the history, record
its reply once.

After a resume, the speaker that asked a person takes the round again; an interrupt it raises, even one it
caught, pauses the chat (in a workflow node: the node).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import msgspec

from zagent.agentkit.counters import rail_counts, shared_counter
from zagent.agentkit.interrupts import QUESTIONS, Asking, asking, bind
from zagent.agentkit.signing import store_identity
from zagent.errors import ConfigError, Interrupted
from zagent.agentkit.awaits import maybe_await

from .ends import ChatEnds
from .history import ChatMessage
from .selection import Choice, Selection, SpeakerInfo, choose
from .speakers import Reply, Turn, speak


class ChatTurn(ChatEnds):
    """The turn of a ``GroupChat`` (a base of it; its fields are set by ``GroupChat``)."""

    manager: Any
    max_consecutive: Optional[int]
    on_turn: Optional[Callable[[ChatMessage], Any]]
    _speakers: dict[str, Any]
    _selector: Any
    _deps: Any
    _nested: bool
    #: positions of the answers this process gave, with the questions they answered; ``None``: every answer
    #: counts (``Asking.vouches``)
    _vouched: Optional[dict[int, Any]] = None

    async def _turn(self) -> None:
        state = self._running
        number = state.round + 1
        again = state.interrupt
        if again is not None:  # the turn that asked a person, again
            if again.speaker not in self._speakers:
                raise ConfigError(f"group chat run {state.run_id!r} waits on {again.describe()}, but this chat has "
                                  f"no speaker {again.speaker!r} (its speakers: {', '.join(self._speakers)}); resume "
                                  "it with the chat it was started with")
            choice = Choice(again.speaker, "interrupt")
        else:
            sel = Selection(speakers=self._infos(), messages=self.history.snapshot(), round=number, task=state.task,
                            ctx=self._ctx)
            choice = await self._abortable(choose(self._selector, sel, max_consecutive=self.max_consecutive))
        await self._emit("speaker_selected", round=number, speaker=choice.speaker, how=choice.how,
                         proposed=choice.proposed, error=choice.error)
        await self._emit("turn_start", round=number, speaker=choice.speaker)
        started = time.perf_counter()
        agent = self._speakers[choice.speaker]
        ctx = self.kernel.context(run_id=state.run_id, agent=choice.speaker,
                                  agent_config={"rails": dict(getattr(agent, "rails", None) or {})},
                                  metadata={"groupchat": self.name, "round": number}, share=self._ctx.shared,
                                  deps=self._deps)
        turn = Turn(speaker=choice.speaker, round=number, task=state.task, inputs=dict(state.inputs),
                    messages=self.history.snapshot(), ctx=ctx)
        if self._nested:
            reply = await self._abortable(self._speak(choice.speaker, agent, turn))
        else:
            with asking(Asking(state.answers, vouched=self._vouched, speaker=choice.speaker, round=number,
                               record=shared_counter(self._ctx, QUESTIONS), run=state.run_id,
                               store=store_identity(self._store))) as scope:
                bind(ctx)
                try:
                    reply = await self._abortable(self._speak(choice.speaker, agent, turn))
                finally:
                    if scope.asked is not None:  # asked, even if the speaker caught it: the chat pauses
                        raise Interrupted(scope.asked.describe(), interrupt=scope.asked)
            if state.interrupt is not None or state.answers:
                state.interrupt, state.answers = None, []
                self._log.reset()  # the next checkpoint is whole, so it drops them
        duration = time.perf_counter() - started
        message = self.history.append(choice.speaker, reply.content, round=number, metadata={
            "selected_by": choice.how, "adapter": reply.adapter, "duration": round(duration, 6),
            "usage": msgspec.to_builtins(reply.usage), "counts": rail_counts(self._ctx.shared)})
        self._ctx.add_usage(reply.usage)
        state.round, state.usage = number, self._ctx.usage
        await self._emit("turn_end", round=number, speaker=choice.speaker, seq=message.seq,
                         chars=len(message.content), tokens=reply.usage.total_tokens, duration=duration)
        if self.on_turn is not None:
            await maybe_await(self.on_turn(message))

    async def _speak(self, name: str, agent: Any, turn: Turn) -> Reply:
        async with self.manager.ausing(name):
            return await speak(agent, turn)

    def _infos(self) -> tuple[SpeakerInfo, ...]:
        return tuple(SpeakerInfo(n, str(getattr(a, "description", "") or "")) for n, a in self._speakers.items())

