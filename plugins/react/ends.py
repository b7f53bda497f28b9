"""How a ReAct run ends and what it leaves: ``ReActResult``, the three endings, checkpoints and events. ``RunEnds``
is ``ReActLoop``'s base: the fields its parts share and the hooks of the run driver (``zagent.agentkit.lifecycle``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import attrs
from zagent.agentkit.guardrails import check as check_guardrails
from zagent.agentkit.holding import unjudged
from zagent.agentkit.lifecycle import Resumable, RunDriver
from zagent.errors import RunAborted, ZagentError

from .state import ReActState, ReActStepLog, Status, StepResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

    from .recorder import LiveSteps


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class ReActResult:
    """How a run ended: the answer (or clarification questions), steps and state."""

    content: str
    status: str
    steps: list[StepResult]
    state: ReActState
    questions: list[str] = attrs.field(factory=list)

    @property
    def needs_clarification(self) -> bool:
        return bool(self.questions)


class RunEnds(RunDriver[ReActState, ReActResult], Resumable[ReActResult]):
    """The endings, checkpoints and events of a ``ReActLoop`` run, on the run driver
    (``zagent.agentkit.lifecycle``; the loop's fields are declared on ``ReActLoop``)."""

    kind = "react"
    idle_status = "running"
    abort_saves_sync = True
    kernel: "Kernel"
    llm: Any
    tools: Sequence[str]
    agent: str
    guardrails: dict[str, list[Any]]
    checkpoints: Any
    trajectory_path: Optional[str]
    state: Optional[ReActState]
    _log: ReActStepLog
    _live: Optional["LiveSteps"]
    _step_end: Optional[dict[str, Any]]
    _input: Optional[str]
    _past: list[Any]  # the caller's history of a new run, until ``_before_drive`` judges it
    _stream_hold: Any = None
    _text_hold: Optional[list[Any]] = None

    # -- ends ---------------------------------------------------------------------

    async def _complete(self) -> ReActResult:
        state = self._running
        # clarification questions are shown to the user as an answer is: the output guardrails check them too
        shown = state.final if state.final is not None else ("\n".join(state.questions) if state.questions else None)
        if shown is not None and (self.guardrails or self.kernel.has_impls("zagent_check_output")):
            await check_guardrails(self._ctx, "output", self.agent, shown,  # before it is recorded done
                                   self.guardrails.get("output", ()))
            await self._release_held()
        await self._end("completed", "run_end", steps=len(state.steps))
        result = ReActResult(content=state.final or "", status="completed", steps=list(state.steps), state=state,
                             questions=list(state.questions))
        await self.kernel.arun_end(result, self._ctx)
        return result

    async def _release_held(self) -> None:
        """The answer passed its output guardrails: the streamed pieces held until now go on (``loop._go``), once
        the guardrails passed what they did not judge yet (text before tool calls, reasoning: ``Held.release``).
        A text both held and shown through ``on_text`` is judged once."""
        judged: set[str] = set()

        async def judge(text: str) -> None:
            if text not in judged:
                judged.add(text)
                await check_guardrails(self._ctx, "output", self.agent, text, self.guardrails.get("output", ()))

        final = self._running.final
        if self._stream_hold is not None:
            await self._stream_hold.release(judge, final)
        shown, self._text_hold = self._text_hold or [], [] if self._text_hold is not None else None
        replies: list[dict[Any, str]] = []  # on_text/on_reasoning: each reply's pieces follow a ``(None, "")`` mark
        for said, text in shown:
            if said is None:
                replies.append({})
            elif replies:
                replies[-1][said] = replies[-1].get(said, "") + text
        for text in unjudged(replies, final, getattr(self, "on_text", None)):
            await judge(text)
        for said, text in shown:
            if said is not None:
                said(text)

    async def _fail(self, error: Exception, status: Status = "failed") -> Exception:
        state = self._running
        state.error = str(error) if status == "failed" else _named(error)
        await self._end(status, "run_end", steps=len(state.steps), error=str(error))
        return error

    # -- the driver's hooks ---------------------------------------------------------------

    def _end_data(self) -> tuple[str, dict[str, Any]]:
        return "run_end", {"steps": len(self._running.steps)}

    def _abort_error(self) -> RunAborted:
        state = self._running
        return RunAborted(f"run {state.run_id} was aborted at step {state.step}", trajectory=state.steps)

    def _closed(self) -> None:
        self._write_trajectory()

    def _on_checkpoint(self) -> None:
        if self._live is not None:  # the steps so far, in the live trajectory file
            self._live.sync(self._running)

    def _checkpoint_store(self) -> Any:
        return self.checkpoints

    def _checkpoint_payload(self) -> tuple[str, int, Any, dict[str, Any]]:
        state = self._running
        state.checkpoint += 1
        self._keep_stash()
        return state.run_id, state.checkpoint, state, {"agent": self.agent, "status": state.status}

    def _resume_hint(self) -> str:
        return f"ReActLoop(kernel, ..., checkpoints=store, agent_config=...).resume({self._running.run_id!r})"

    def _keep_stash(self) -> None:
        """Copy the plugins' per-run state that survives a restore (``to_state()``) into the state."""
        ctx = getattr(self, "_ctx", None)
        if ctx is not None:
            self._running.stash = ctx.stash.to_state()
        from .seals import seal_counts

        seal_counts(self.kernel, self._running, self.checkpoints)  # an edited unsigned store cannot lower them

    def _write_trajectory(self) -> None:
        if self._live is not None:
            self._live.sync(self._running)
        if self.trajectory_path:
            from .trajectory import append_trajectory

            append_trajectory(self.trajectory_path, self._running)


def _named(exc: BaseException) -> str:
    from zagent.agentkit.secrets import env_masker

    return env_masker()(str(exc) if isinstance(exc, ZagentError) else f"{type(exc).__name__}: {exc}")
