"""How a ReAct run ends and what it leaves: ``ReActResult``, the three endings, checkpoints and events.

``RunEnds`` is the base of ``ReActLoop`` (``loop.py``): it names the loop's fields the parts share.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Optional, Sequence

import attrs
import msgspec
from zagent.agentkit.control import RunControl
from zagent.agentkit.guardrails import check as check_guardrails
from zagent.agentkit.signing import signer_of
from zagent.agentkit.steplog import checkpoint_error
from zagent.errors import RunAborted, ZagentError

from .state import ReActState, ReActStepLog, Status, StepResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

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


class RunEnds:
    """The endings, checkpoints and events of a ``ReActLoop`` run (its fields are declared on ``ReActLoop``)."""

    kernel: "Kernel"
    llm: Any
    tools: Sequence[str]
    agent: str
    guardrails: dict[str, list[Any]]
    checkpoints: Any
    trajectory_path: Optional[str]
    state: Optional[ReActState]
    _ctx: "RunContext[Any]"
    _control: RunControl
    _checkpoint_lock: asyncio.Lock
    _log: ReActStepLog
    _live: Optional["LiveSteps"]
    _step_end: Optional[dict[str, Any]]

    @property
    def _running(self) -> ReActState:
        """The state of the run under way (set before any step)."""
        state = self.state
        assert state is not None, "the run has not started"
        return state

    # -- ends ---------------------------------------------------------------------

    async def _complete(self) -> ReActResult:
        state = self._running
        if state.final is not None and (self.guardrails or self.kernel.has_impls("zagent_check_output")):
            await check_guardrails(self._ctx, "output", self.agent, state.final,  # before it is recorded done
                                   self.guardrails.get("output", ()))
        state.status = "completed"
        await self._checkpoint()
        self._write_trajectory()
        await self._emit("run_end", status="completed", steps=len(state.steps))
        result = ReActResult(content=state.final or "", status="completed", steps=list(state.steps), state=state,
                             questions=list(state.questions))
        await self.kernel.arun_end(result, self._ctx)
        return result

    def _aborted(self) -> RunAborted:
        state = self._running
        state.status = "aborted"
        self._write_trajectory()
        if self.checkpoints is not None:
            self._save_sync()
        self._emit_soon("run_end", status="aborted", steps=len(state.steps))
        return RunAborted(f"run {state.run_id} was aborted at step {state.step}", trajectory=state.steps)

    async def _fail(self, error: Exception, status: Status = "failed") -> Exception:
        state = self._running
        state.status = status
        state.error = str(error) if status == "failed" else _named(error)
        await self._checkpoint()
        self._write_trajectory()
        await self._emit("run_end", status=status, steps=len(state.steps), error=str(error))
        return error

    def _emit_soon(self, type: str, **data: Any) -> None:
        """Emit from a sync path (an abort): scheduled on the run's loop, never awaited here."""
        loop = self._control.loop
        if loop is not None and not loop.is_closed() and self.kernel.has_impls("zagent_event"):
            loop.create_task(self._ctx.aemit(type, **data))

    async def _abortable(self, awaitable: Any) -> Any:
        """Await ``awaitable`` so that ``abort()`` cancels it (the CancelledError becomes ``RunAborted``)."""
        return await self._control.abortable(awaitable)

    # -- persistence and events -------------------------------------------------------------

    async def _checkpoint(self) -> None:
        """Save the state: the change since the last checkpoint when the store takes patches, else all of it.

        One at a time (a batch's calls finish concurrently), so each patch lands on the step before it."""
        if self._live is not None:  # the steps so far, in the live trajectory file
            self._live.sync(self._running)
        if self.checkpoints is None:
            return
        async with self._checkpoint_lock:  # the bytes are taken before the write: other calls of the batch
            state = self._running          # may add to the state while it is in flight
            state.checkpoint += 1
            self._keep_stash()
            await self._log.asave(self.checkpoints, state.run_id, state.checkpoint, state, kind="react",
                                  metadata={"agent": self.agent, "status": state.status}, resume=self._resume_hint(),
                                  signer=signer_of(self.kernel))

    def _save_sync(self) -> None:
        """A whole checkpoint written from a sync path (an abort), with ``ReActStepLog.asave``'s guarantees."""
        state = self._running
        last, state.checkpoint = self._log.step, state.checkpoint + 1
        self._keep_stash()
        try:
            captured = self._log.capture(state)
            data = msgspec.json.encode(state)
            meta = self._log.signed(signer_of(self.kernel), {"agent": self.agent, "status": state.status},
                                    state.run_id, state.checkpoint, "react", data, False)
            self.checkpoints.save(state.run_id, state.checkpoint, data, kind="react", metadata=meta)
            self._log.mac = (meta or {}).get("zagent_mac", "")
        except Exception as exc:
            self._log.reset()
            raise checkpoint_error(exc, self.checkpoints, state.run_id, state.checkpoint, last,
                                   self._resume_hint()) from exc
        except BaseException:
            self._log.reset()
            raise
        self._log.saved_full(captured, len(data))

    def _resume_hint(self) -> str:
        return f"ReActLoop.restore(kernel, {self._running.run_id!r}, checkpoints=store, llm=..., agent_config=...)"

    def _keep_stash(self) -> None:
        """Copy the plugins' per-run state that survives a restore (``to_state()``) into the state."""
        ctx = getattr(self, "_ctx", None)
        if ctx is not None:
            self._running.stash = ctx.stash.to_state()

    def _write_trajectory(self) -> None:
        if self._live is not None:
            self._live.sync(self._running)
        if self.trajectory_path:
            from .trajectory import append_trajectory

            append_trajectory(self.trajectory_path, self._running)

    def _emit(self, type: str, **data: Any) -> Awaitable[None]:
        """``ctx.aemit``'s coroutine (await it): no coroutine of its own, the data passed on as is."""
        return self._ctx.aemit(type, **data)


def _named(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ZagentError) else f"{type(exc).__name__}: {exc}"
