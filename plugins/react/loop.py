"""``ReActLoop``: decide → act → observe, step by step, pausable, resumable, abortable.

State machine: RUNNING → PAUSED ⇄ RUNNING → COMPLETED | ABORTED | FAILED
(a provider error, or any failed step when the error policy is ``stop``; a
failed run's last checkpoint can be restored once the cause is fixed; a step
raising anything else is ABORTED, checkpointed, and the error raised).
``pause()``, ``resume()`` and ``abort()`` are safe from any thread or task
while a step is in flight:

* a pause takes effect at the next boundary: between steps, or inside a batch
  of tool calls before the next call starts (calls already running finish);
* ``abort()`` cancels the in-flight LLM or tool call and ends the run with
  ``RunAborted`` carrying the steps so far;
* every finished tool call and every step is checkpointed (when a checkpoint
  store is given), so a run resumed in another process never runs a call whose
  result was checkpointed again; calls awaiting human approval resume with the
  approval given. Calls are at-least-once: one cut off between its start and
  its result's checkpoint runs again, with the same ``ctx.idempotency_key``
  (README, "Restoring a run"). A checkpoint write that fails stops the run
  (``CheckpointError``; the batch's other calls are cancelled, nothing more
  is written), to be restored from the last checkpoint that landed.

Each step asks the model once. Tool calls (native, or ``<tool_call>`` text
for models whose profile says ``native_tools=False``) run through
``Kernel.arun_tool``, so every rail applies. A pseudo-tool
``ask_clarification`` lets the model ask the user instead (offered natively; in prompt mode the model asks in
plain text, since a small model writes it in place of, or beside, the calls a request needs). Offering tools,
reading calls and feeding results back go through the tool-loop core
(``zagent.agentkit.toolloop``), shared with declared agents; this loop keeps
its own policy: steps, rails, checkpoints, approvals, the answer and questions.
This module holds the run's control and driver; one step is in ``step.py``,
its tool calls and approvals in ``batch.py``, the endings and checkpoints in ``ends.py``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

import attrs
import msgspec
from zagent.agentkit.control import RunControl
from zagent.agentkit.guardrails import check as check_guardrails, handed_over
from zagent.agentkit.toolloop import ToolLoop
from zagent.errors import ConfigError, NoAnswerError
from zagent.agentkit.inputs import check_text
from zagent._model.inputs import to_messages
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS
from zagent import public_data
from zagent.types import Message

from .batch import ToolBatches
from .ends import ReActResult
from .state import ReActState, ReActStepLog, state_decoder
from .step import Steps

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

SYSTEM_PROMPT = """You are a helpful assistant that solves the user's request step by step.
At each step either call one or more tools, or give the final answer as plain text.
When the request cannot be done without more information from the user, ask the user for it.
Use tool results to decide the next step; when a tool fails, fix the call or try another way.
When none of the tools fits the request, answer directly without calling one: that is the right answer then."""

ON_ERROR = ("continue", "stop")


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class ReActLoop(Steps, ToolBatches):
    """A ReAct run over ``tools`` with ``llm`` (see the module docstring).

    :ivar on_error: ``"continue"`` (a step a rail blocked, or whose context compression
        failed, is recorded and the next step tries again) or ``"stop"`` (the run fails
        with ``NoAnswerError``). A provider's error (``ProviderError``) ends the run with
        that error either way: the provider's own retry policy has already run.
    :ivar checkpoints: a checkpoint store (``kernel.memory("checkpoints", path=...)``).
    :ivar tool_limit: offer at most this many tools per step (retrieval picks them).
    """

    kernel: "Kernel"
    llm: Any
    tools: Sequence[str] = ()
    system_prompt: str = SYSTEM_PROMPT
    max_iterations: int = 20
    max_tool_call_concurrency: int = 4
    on_error: str = "continue"
    allow_clarification: Optional[bool] = None  # None: offered in native mode only
    tool_limit: int = 16
    pinned_tools: Sequence[str] = ()
    max_context_messages: Optional[int] = None
    max_context_tokens: Optional[int] = None
    keep_recent: int = 6
    checkpoints: Any = None
    trajectory_path: Optional[str] = None
    live_trajectory_path: Optional[str] = None
    """A JSONL file each step is appended to as it happens (``recorder.TrajectoryRecorder``)."""
    tool_format: str = "tool_call"
    agent: str = "react"
    agent_config: dict[str, Any] = attrs.field(factory=dict)
    deps: Any = None
    """The app's dependencies its tools read as ``ctx.deps`` when the loop makes its own context."""
    guardrails: dict[str, list[Any]] = attrs.field(factory=dict)
    """The agent's own ``{"input": [fn], "output": [fn]}`` guardrails, run before the kernel's (``zagent.agentkit.guardrails``)."""
    state: Optional[ReActState] = None
    on_text: Optional[Any] = None
    """Called with each text delta of the model's replies: the loop then streams (``llm.astream``)."""
    on_reasoning: Optional[Any] = None
    """Called with each reasoning delta while streaming (never part of the answer text)."""
    on_pause: Optional[Any] = None
    """Called (no arguments, on the run's event loop) each time the run pauses, once its checkpoint is written."""

    def __attrs_post_init__(self) -> None:
        check_on_error(self.on_error)
        self._control = RunControl()
        self._tool_loop = ToolLoop(self.kernel, self.tool_format)
        self._checkpoint_lock = asyncio.Lock()
        self._log = ReActStepLog()
        self._live: Any = None

    # -- control (any thread) ---------------------------------------------------------

    @property
    def status(self) -> str:
        return self.state.status if self.state is not None else "running"

    def pause(self) -> None:
        """Ask the run to pause at the next boundary (between steps or tool calls)."""
        self._control.request_pause()

    def resume(self, *, approve: Iterable[str] = (), deny: Iterable[str] = ()) -> None:
        """Continue a paused run; ``approve``/``deny`` answer calls awaiting human approval (by call id)."""
        control = self._control
        with control.lock:
            control.pause_requested = False
            if self.state is not None:
                state = self.state  # an id approves the call awaiting under it: its minted id, tool and arguments
                keys = {state.approval_keys[i] for i in approve
                        if i in state.awaiting_approval and i in state.approval_keys}
                state.approved = sorted(set(state.approved) | keys)
                denied = set(deny)
                if denied:
                    self._deny_pending(denied)
                if self.state.status == "paused" and not self._blocked_on_approval():
                    self.state.status = "running"
        control.wakeup()

    def abort(self) -> None:
        """End the run: cancel the in-flight call; ``arun`` raises ``RunAborted``."""
        self._control.request_abort()

    async def wait_for_status(self, status: str) -> None:
        """Wait (from the loop's event loop) until the run reaches ``status`` (e.g. ``"paused"``)."""
        while self.status != status:
            await asyncio.sleep(0.005)

    # -- state --------------------------------------------------------------------

    def snapshot(self) -> ReActState:
        """A copy of the run's state, safe to encode and store."""
        assert self.state is not None, "the run has not started"
        self._keep_stash()
        return state_decoder.decode(msgspec.json.encode(self.state))

    def save(self, path: str) -> None:
        """Write the state as JSON to ``path`` (atomically)."""
        from zagent.agentkit.files import write_atomic

        write_atomic(path, msgspec.json.encode(self.snapshot()))

    @classmethod
    def restore(cls, kernel: "Kernel", state: Any, **config: Any) -> "ReActLoop":
        """A loop continuing ``state``: a ``ReActState``, JSON bytes, a file path, or a run id with
        ``checkpoints=store`` (its latest checkpoint). A paused or failed run resumes running.
        A missing run or file, or a state that does not decode, is a ``ConfigError`` saying which.

        Policy comes from ``kernel`` and ``config``, never from the state (``restoring.restored``): pass the
        agent's settings as ``agent_config=`` (a signed checkpoint's are used when it is left out)."""
        from .restoring import restored

        return cls(kernel=kernel, state=restored(kernel, state, config), **config)

    # -- running --------------------------------------------------------------------

    async def arun(self, user_input: Optional[Union[str, Message]] = None, *,
                   history: Optional[Sequence[Any]] = None, ctx: Optional["RunContext[Any]"] = None) -> ReActResult:
        """Run (or continue) until an answer, clarification questions, abort or a bound. ``user_input`` is text or
        a user ``Message`` with image/file parts (``Message.user(text, image=...)``), sent as it is."""
        text = None
        if user_input is not None:
            from zagent.plugins.actions.userturn import check_parts, user_turn

            turn = user_turn(user_input, "the ReAct run's user_input")
            text = turn.content or ""
            for i, message in enumerate(to_messages(history or [])):
                if message.content is not None:
                    check_text(message.content, f"the ReAct run's history message #{i}")
            check_parts(self.llm, turn)  # a part the model cannot take: an error before the run starts
            self._start(turn, history, ctx.run_id if ctx is not None else None)
        elif self.state is None:
            raise ConfigError("nothing to run: give user_input or restore a state")
        state = self._running
        self._control.bind()
        self._checkpoint_lock = asyncio.Lock()  # per run: a lock stays bound to the event loop it first waited on
        ctx = ctx or self.kernel.context(run_id=state.run_id, agent=self.agent, agent_config=self.agent_config,
                                         deps=self.deps)
        for key, value in (self.agent_config or {}).items():  # a caller's context keeps its own settings,
            ctx.agent_config.setdefault(key, value)           # and gets the loop's rails for what it leaves out
        self._ctx = ctx
        ctx.stash.restore(state.stash)  # plain data: its plugin rebuilds its object on first use
        ctx.stash.setdefault(APPROVED, set()).update(state.approved)
        ctx.stash[CALL_KEYS] = state.call_keys
        if state.usage.calls and not ctx.usage.calls:
            ctx.usage = state.usage
        if self.live_trajectory_path:
            from .recorder import LiveSteps

            self._live = LiveSteps(self.live_trajectory_path, state, resumed=user_input is None)
        await self._emit("run_start", resumed=user_input is None,
                         **({"metadata": dict(ctx.metadata)} if ctx.metadata else {}))
        try:
            if (text is not None and (self.guardrails or self.kernel.has_impls("zagent_check_input"))
                    and not handed_over(ctx, text)):
                await check_guardrails(ctx, "input", self.agent, text, self.guardrails.get("input", ()))
            return await self._drive()
        except asyncio.CancelledError:
            if self._control.abort_requested:
                raise self._aborted() from None
            raise
        finally:
            self._control.unbind()

    def run(self, user_input: Optional[Union[str, Message]] = None, **kwargs: Any) -> ReActResult:
        """Sync twin of ``arun``."""
        from zagent import run_sync

        return run_sync(self.arun(user_input, **kwargs))

    def _start(self, turn: Message, history: Optional[Sequence[Any]], run_id: Optional[str]) -> None:
        """A new state; its run id is the caller's context's, so events and checkpoints agree."""
        from zagent._runs.context import new_run_id

        messages = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        messages.extend(to_messages(history or []))
        messages.append(turn)
        self.state = ReActState(run_id=run_id or new_run_id(), agent=self.agent, messages=messages,
                                task=turn.content or "",
                                agent_config=public_data(self.agent_config))
        self._log = ReActStepLog()

    async def _drive(self) -> ReActResult:
        state = self.state
        assert state is not None
        while True:
            await self._boundary()
            if state.pending:
                await self._run_batch()
                continue
            if state.final is not None or state.questions:
                return await self._complete()
            if state.step >= self.max_iterations:
                raise await self._fail(NoAnswerError(
                    f"no answer within max_iterations={self.max_iterations}; raise it or inspect error.trajectory",
                    trajectory=state.steps, limit="max_iterations"))
            await self._step()

    async def _boundary(self) -> None:
        """Honour abort and pause requests; a pause waits here until resume or abort."""
        control = self._control
        if control.abort_requested:
            raise self._aborted()
        if not control.pause_requested and not self._blocked_on_approval():
            return
        state = self._running
        state.status = "paused"
        await self._checkpoint()
        await self._emit("paused", step=state.step, awaiting_approval=list(state.awaiting_approval))
        if self.on_pause is not None:
            self.on_pause()

        def still_paused() -> bool:
            return control.pause_requested or self._blocked_on_approval()

        def mark_paused() -> None:
            state.status = "paused"  # again: a resume() may have raced with a new pause()

        await control.wait_while(still_paused, mark_paused)
        if control.abort_requested:
            raise self._aborted()
        state.status = "running"
        self._release_approved()
        await self._emit("resumed", step=state.step)



def check_on_error(value: Any, where: str = "ReActLoop") -> None:
    """``ConfigError`` unless ``value`` is a known ``on_error`` policy."""
    if value not in ON_ERROR:
        raise ConfigError(f"{where}: on_error must be one of {', '.join(map(repr, ON_ERROR))}, got {value!r}")

