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
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Awaitable, Iterable, Optional, Sequence

import attrs
import msgspec
from zagent.agentkit.control import RunControl
from zagent.agentkit.guardrails import check as check_guardrails, handed_over
from zagent.agentkit.signing import signer_of
from zagent.agentkit.steplog import checkpoint_error
from zagent.agentkit.toolloop import NUDGE, ToolLoop, call_key, results_messages
from zagent.agentkit.turns import TOOL, bound
from zagent.errors import CheckpointError, ConfigError, NoAnswerError, ProviderError, RunAborted, ToolBlocked, ZagentError
from zagent._trust.limits import check_text
from zagent._model.llm import new_call_id, to_messages
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS, PENDING_APPROVAL, PENDING_KEYS
from zagent import public_data
from zagent.types import Message, ToolCall, ToolResult, ToolSpec

from .state import Decision, ReActState, ReActStepLog, StepResult, state_decoder

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

SYSTEM_PROMPT = """You are a helpful assistant that solves the user's request step by step.
At each step either call one or more tools, or give the final answer as plain text.
When the request cannot be done without more information from the user, ask the user for it.
Use tool results to decide the next step; when a tool fails, fix the call or try another way.
When none of the tools fits the request, answer directly without calling one: that is the right answer then."""

CLARIFY = ToolSpec(
    name="ask_clarification",
    description=("Ask the user clarifying questions, only when the request cannot be done without information "
                 "the user has not given."),
    parameters={"type": "object", "properties": {"questions": {"type": "array", "items": {"type": "string"}}},
                "required": ["questions"]},
)
ON_ERROR = ("continue", "stop")


class CompressionFailed(ZagentError):
    """Summarising older turns failed; the step is recorded as an error and ``on_error`` decides."""


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


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class ReActLoop:
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

    async def arun(self, user_input: Optional[str] = None, *, history: Optional[Sequence[Any]] = None,
                   ctx: Optional["RunContext"] = None) -> ReActResult:
        """Run (or continue) until an answer, clarification questions, abort or a bound."""
        if user_input is not None:
            check_text(user_input, "the ReAct run's user_input")
            for i, message in enumerate(to_messages(history or [])):
                if message.content is not None:
                    check_text(message.content, f"the ReAct run's history message #{i}")
            self._start(user_input, history, ctx.run_id if ctx is not None else None)
        elif self.state is None:
            raise ConfigError("nothing to run: give user_input or restore a state")
        self._control.bind()
        self._checkpoint_lock = asyncio.Lock()  # per run: a lock stays bound to the event loop it first waited on
        ctx = ctx or self.kernel.context(run_id=self.state.run_id, agent=self.agent, agent_config=self.agent_config,
                                         deps=self.deps)
        for key, value in (self.agent_config or {}).items():  # a caller's context keeps its own settings,
            ctx.agent_config.setdefault(key, value)           # and gets the loop's rails for what it leaves out
        self._ctx = ctx
        ctx.stash.restore(self.state.stash)  # plain data: its plugin rebuilds its object on first use
        ctx.stash.setdefault(APPROVED, set()).update(self.state.approved)
        ctx.stash[CALL_KEYS] = self.state.call_keys
        if self.state.usage.calls and not ctx.usage.calls:
            ctx.usage = self.state.usage
        if self.live_trajectory_path:
            from .recorder import LiveSteps

            self._live = LiveSteps(self.live_trajectory_path, self.state, resumed=user_input is None)
        await self._emit("run_start", resumed=user_input is None,
                         **({"metadata": dict(ctx.metadata)} if ctx.metadata else {}))
        try:
            if (user_input is not None and (self.guardrails or self.kernel.has_impls("zagent_check_input"))
                    and not handed_over(ctx, user_input)):
                await check_guardrails(ctx, "input", self.agent, user_input, self.guardrails.get("input", ()))
            return await self._drive()
        except asyncio.CancelledError:
            if self._control.abort_requested:
                raise self._aborted() from None
            raise
        finally:
            self._control.unbind()

    def run(self, user_input: Optional[str] = None, **kwargs: Any) -> ReActResult:
        """Sync twin of ``arun``."""
        from zagent import run_sync

        return run_sync(self.arun(user_input, **kwargs))

    def _start(self, user_input: str, history: Optional[Sequence[Any]], run_id: Optional[str]) -> None:
        """A new state; its run id is the caller's context's, so events and checkpoints agree."""
        from zagent._runs.context import new_run_id

        messages = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        messages.extend(to_messages(history or []))
        messages.append(Message(role="user", content=user_input))
        self.state = ReActState(run_id=run_id or new_run_id(), agent=self.agent, messages=messages, task=user_input,
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
        state = self.state
        state.status = "paused"
        await self._checkpoint()
        await self._emit("paused", step=state.step, awaiting_approval=list(state.awaiting_approval))

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

    def _blocked_on_approval(self) -> bool:
        state = self.state
        if not state.awaiting_approval:
            return False
        approved = set(state.approved)
        return any(state.approval_keys.get(c) not in approved for c in state.awaiting_approval)

    def _release_approved(self) -> None:
        state = self.state
        approved = set(state.approved)
        state.awaiting_approval = [c for c in state.awaiting_approval if state.approval_keys.get(c) not in approved]
        self._ctx.stash.setdefault(APPROVED, set()).update(approved)

    def _deny_pending(self, denied: set[str]) -> None:
        for call in self.state.pending:
            if call.id in denied and call.id not in self.state.finished:
                self.state.finished[call.id] = ToolResult(
                    call_id=call.id, name=call.name, state="blocked", error="a human declined the call",
                    content="Error: the call was blocked: a human declined the call")
        self.state.awaiting_approval = [c for c in self.state.awaiting_approval if c not in denied]

    # -- one step -------------------------------------------------------------------

    async def _step(self) -> None:
        state = self.state
        state.step += 1
        await self._emit("step_start", step=state.step)
        started = time.perf_counter()
        try:
            await self._maybe_compress()
            tools = await self._offered_tools()
            decision, reply = await self._decide(tools)
        except (RunAborted, CheckpointError):
            raise
        except Exception as exc:  # not only the step errors below: any other is Agent-Z's ABORTED (after them)
            state.steps.append(StepResult(step=state.step, action="direct_response", is_error=True,
                                          is_blocked=isinstance(exc, ToolBlocked), reason=_named(exc),
                                          duration=time.perf_counter() - started))
            await self._emit("step_end", step=state.step, error=str(exc))
            provider_error = _provider_error(exc)
            if provider_error is not None:  # the provider already retried what was worth retrying
                raise await self._fail(provider_error) from None
            if not isinstance(exc, (ToolBlocked, CompressionFailed)):
                await self._fail(exc, status="aborted")
                raise
            if self.on_error == "stop":
                raise await self._fail(NoAnswerError(f"step {state.step} failed: {exc}", trajectory=state.steps,
                                                     limit="step_error")) from exc
            await self._checkpoint()
            return
        took = time.perf_counter() - started
        state.messages.append(reply)
        state.usage = self._ctx.usage
        state.reasoning = decision.reasoning
        state.feedback = decision.feedback
        if decision.action == "use_tool":
            state.pending = list(decision.calls)
            state.finished = {}
            state.call_keys = {c.id: new_call_id() for c in state.pending}  # approvals bind these, not the model's ids
            state.approval_keys = {}
            self._ctx.stash[CALL_KEYS] = state.call_keys
        elif decision.feedback:
            state.messages.append(Message(role="user", content=decision.feedback))
            state.feedback = ""
            state.steps.append(StepResult(step=state.step, action="use_tool", is_error=True,
                                          reason="malformed tool call", result=decision.feedback, duration=took))
        elif decision.action == "ask_clarification":
            state.questions = decision.questions
            state.steps.append(StepResult(step=state.step, action="ask_clarification", reasoning=decision.reasoning,
                                          result="\n".join(decision.questions), duration=took))
        elif decision.content:
            state.final = decision.content
            state.steps.append(StepResult(step=state.step, action="direct_response", result=decision.content,
                                          reasoning=decision.reasoning, duration=took))
        else:
            state.messages.append(Message(role="user", content=NUDGE))
            state.steps.append(StepResult(step=state.step, action="direct_response", is_error=True,
                                          reason="empty reply", duration=took))
        end = {"step": state.step, "action": decision.action, "tools": [c.name for c in decision.calls]}
        if state.pending:  # the step's span stays open over its tool calls (ended in _run_batch)
            self._step_end = end
        else:
            await self._emit("step_end", **end)
        await self._checkpoint()

    async def _decide(self, tools: list[Any]) -> tuple[Decision, Message]:
        core = self._tool_loop
        if tools:
            await core.prepare(self.llm)
        clarify = self.allow_clarification
        if clarify is None:  # prompt mode: the model asks in plain text (see the module docstring)
            clarify = self.llm.profile.native_tools
        offer = core.offer(self.llm, tools, [CLARIFY] if clarify else [])
        self._ctx.offered_tools = offer.names  # the kernel blocks any other name
        turn = await core.turn(self.llm, offer, self.state.messages, self._ctx, ask=self._ask_abortable,
                               stream=self.on_text is not None, **(bound(self.llm, TOOL) if offer.specs else {}))
        decision = _decision(turn.calls, turn.text)
        if decision.action == "use_tool" and not turn.errors and offer.prompt_tools is not None:
            decision = _echo_answer(decision, turn.text, self.state.steps) or decision
        if turn.errors:
            decision.feedback = offer.feedback(turn.errors)
        return decision, turn.reply

    def _ask_abortable(self, request: Any, ctx: Any) -> Any:
        """The model call for ``request`` as an awaitable that ``abort()`` cancels (``ctx`` is the loop's own)."""
        return self._abortable(self._ask(request))

    async def _ask(self, request: Any) -> Any:
        """One model call; streamed to ``on_text`` when it is set."""
        if self.on_text is None or (request.tools and not self.llm.profile.streaming_tools):
            return await self.llm.asend(request, self._ctx)
        final = None
        async for chunk in self.llm.astream(request.messages, tools=request.tools or None, ctx=self._ctx,
                                            **(request.options or {})):
            if chunk.type == "text" and chunk.text:
                self.on_text(chunk.text)
            elif chunk.type == "reasoning" and self.on_reasoning is not None:
                self.on_reasoning(chunk.text)
            elif chunk.type == "done":
                final = chunk.completion
        if final is None:
            raise ProviderError("the stream ended without a final chunk", provider=self.llm.provider)
        return final

    async def _offered_tools(self) -> list[Any]:
        tools = self.kernel.tools(list(self.tools)) if self.tools else []
        if len(tools) <= self.tool_limit:
            return tools
        from .retrieval import aselect_tools

        # The user's request, not the latest "user" message: in prompt mode tool results and nudges are
        # user messages too, and ranking tools against a tool's output picks the wrong ones.
        query = self.state.task or next(
            (m.content for m in reversed(self.state.messages) if m.role == "user" and m.content), "")
        return await aselect_tools(tools, query, limit=self.tool_limit, pinned=self.pinned_tools,
                                   embedder=self.kernel.embedder())

    async def _maybe_compress(self) -> None:
        if self.max_context_messages is None and self.max_context_tokens is None:
            return
        from .compression import SUMMARY_KEY, compress, needs_compression

        state = self.state
        if needs_compression(state.messages, max_messages=self.max_context_messages,
                             max_tokens=self.max_context_tokens):
            try:
                compressed = await self._abortable(
                    compress(state.messages, self.llm, keep_recent=self.keep_recent, ctx=self._ctx))
            except (ProviderError, ValueError) as exc:
                raise CompressionFailed(f"compressing the context failed: {exc}") from exc
            kept = {id(m) for m in compressed}
            state.archived.extend(m for m in state.messages
                                  if id(m) not in kept and not m.metadata.get(SUMMARY_KEY))
            state.messages = compressed
            await self._emit("compressed", messages=len(state.messages))

    # -- tool batches -------------------------------------------------------------------

    async def _run_batch(self) -> None:
        state = self.state
        if self._ctx.offered_tools is None:  # restored mid-batch: the turn's selection is gone; the agent's tools
            self._ctx.offered_tools = frozenset(self.tools)
        self._release_approved()
        gate = asyncio.Semaphore(max(1, self.max_tool_call_concurrency))
        waiting = set(state.awaiting_approval)
        todo = [c for c in state.pending if c.id not in state.finished and c.id not in waiting]
        if len(todo) == 1:
            await self._run_call(todo[0], gate)
        elif todo:  # none left when a human declined every call that was waiting
            await _all_or_none([self._run_call(c, gate) for c in todo])
        if self._control.abort_requested:
            raise self._aborted()
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
        if call.name == CLARIFY.name:
            result = ToolResult(call_id=call.id, name=call.name, state="error", error="mixed with tool calls",
                                content="Error: ask_clarification must be the only call of a reply; the other "
                                        "calls ran. Ask again on its own if you still need the user's answer.")
        else:
            result = await self._abortable(self.kernel.arun_tool(call, self._ctx))
        state = self.state
        pending = self._ctx.stash.get(PENDING_APPROVAL)
        if pending and call.id in pending:
            pending.discard(call.id)
            key = (self._ctx.stash.get(PENDING_KEYS) or {}).pop(call.id, None)
            if key is not None:
                state.approval_keys[call.id] = key
            if call.id not in state.awaiting_approval:
                state.awaiting_approval.append(call.id)
            await self._emit("approval_needed", tool=call.name, call_id=call.id)
            await self._checkpoint()
            return
        state.finished[call.id] = result
        state.steps.append(_step_result(state.step, call, result, state.reasoning, time.perf_counter() - started))
        if all(c.id in state.finished for c in state.pending):
            self._close_batch()  # the batch's last result: one checkpoint holds it and the closed batch
        await self._checkpoint()

    def _close_batch(self) -> None:
        state = self.state
        results = [state.finished[c.id] for c in state.pending]
        state.messages.extend(results_messages(results, native=self.llm.profile.native_tools, feedback=state.feedback))
        state.pending, state.finished, state.feedback = [], {}, ""
        state.call_keys, state.approval_keys, state.approved = {}, {}, []

    # -- ends ---------------------------------------------------------------------

    async def _complete(self) -> ReActResult:
        state = self.state
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
        state = self.state
        state.status = "aborted"
        self._write_trajectory()
        if self.checkpoints is not None:
            self._save_sync()
        self._emit_soon("run_end", status="aborted", steps=len(state.steps))
        return RunAborted(f"run {state.run_id} was aborted at step {state.step}", trajectory=state.steps)

    async def _fail(self, error: Exception, status: str = "failed") -> Exception:
        self.state.status = status
        self.state.error = str(error) if status == "failed" else _named(error)
        await self._checkpoint()
        self._write_trajectory()
        await self._emit("run_end", status=status, steps=len(self.state.steps), error=str(error))
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
            self._live.sync(self.state)
        if self.checkpoints is None:
            return
        async with self._checkpoint_lock:  # the bytes are taken before the write: other calls of the batch
            state = self.state             # may add to the state while it is in flight
            state.checkpoint += 1
            self._keep_stash()
            await self._log.asave(self.checkpoints, state.run_id, state.checkpoint, state, kind="react",
                                  metadata={"agent": self.agent, "status": state.status}, resume=self._resume_hint(),
                                  signer=signer_of(self.kernel))

    def _save_sync(self) -> None:
        """A whole checkpoint written from a sync path (an abort), with ``ReActStepLog.asave``'s guarantees."""
        state = self.state
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
        return f"ReActLoop.restore(kernel, {self.state.run_id!r}, checkpoints=store, llm=..., agent_config=...)"

    def _keep_stash(self) -> None:
        """Copy the plugins' per-run state that survives a restore (``to_state()``) into the state."""
        ctx = getattr(self, "_ctx", None)
        if ctx is not None:
            self.state.stash = ctx.stash.to_state()

    def _write_trajectory(self) -> None:
        if self._live is not None:
            self._live.sync(self.state)
        if self.trajectory_path:
            from .trajectory import append_trajectory

            append_trajectory(self.trajectory_path, self.state)

    def _emit(self, type: str, **data: Any) -> Awaitable[None]:
        """``ctx.aemit``'s coroutine (await it): no coroutine of its own, the data passed on as is."""
        return self._ctx.aemit(type, **data)


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
    failed = next((t.exception() for t in tasks if not t.cancelled() and t.exception() is not None), None)
    if failed is not None:
        raise failed
    for task in tasks:
        task.result()


def check_on_error(value: Any, where: str = "ReActLoop") -> None:
    """``ConfigError`` unless ``value`` is a known ``on_error`` policy."""
    if value not in ON_ERROR:
        raise ConfigError(f"{where}: on_error must be one of {', '.join(map(repr, ON_ERROR))}, got {value!r}")


def _named(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ZagentError) else f"{type(exc).__name__}: {exc}"


def _provider_error(exc: BaseException) -> Optional[ProviderError]:
    """The provider's error behind a failed step (also under a failed compression), if any.

    It ends the run whatever ``on_error`` says: a non-retryable one (auth, bad request, a
    reply that is not the protocol) fails the same way on every try, and a retryable one
    has already been retried by the provider's own policy; asking again each step would
    multiply those requests by ``max_iterations`` and hide the error behind ``NoAnswerError``.
    """
    while exc is not None and not isinstance(exc, ProviderError):
        exc = exc.__cause__
    return exc


def _decision(calls: list[ToolCall], text: str) -> Decision:
    """Tool calls win over a clarification asked in the same reply (that call is answered with a
    note, so every call of the assistant message gets its result)."""
    clarify = [c for c in calls if c.name == CLARIFY.name]
    if clarify and len(clarify) == len(calls):
        args = clarify[0].arguments if isinstance(clarify[0].arguments, dict) else {}
        questions = args.get("questions") or []
        if isinstance(questions, str):
            questions = [questions]
        return Decision(action="ask_clarification", reasoning=text, questions=[str(q) for q in questions])
    if calls:
        return Decision(action="use_tool", reasoning=text, calls=calls)
    return Decision(action="direct_response", reasoning="", content=text.strip())


def _echo_answer(decision: Decision, text: str, steps: Sequence[StepResult]) -> Optional[Decision]:
    """Prompt mode: a reply whose every call repeats one that already succeeded is an echo, not a request (small models
    restate ``[word_count(text='...'), 5]`` next to its result): the answer is the reply's own text, else
    those results. ``None`` when any call is new."""
    done = {call_key(ToolCall(id="", name=s.tool, arguments=s.parameters)): s.result for s in steps
            if s.action == "use_tool" and s.tool and not s.is_error and not s.is_blocked}
    if not done:
        return None
    keys = [call_key(c) for c in decision.calls if c.name != CLARIFY.name]  # restated next to a question, too
    if not keys or not all(k in done for k in keys):
        return None
    said = text.strip().strip("[](),;` \n")
    answer = said if any(ch.isalnum() for ch in said) else "\n".join(done[k] for k in dict.fromkeys(keys))
    return Decision(action="direct_response", reasoning="", content=answer)


def _step_result(step: int, call: ToolCall, result: ToolResult, reasoning: str, duration: float) -> StepResult:
    params = call.arguments if isinstance(call.arguments, dict) else {"_raw": call.arguments}
    return StepResult(step=step, action="use_tool", tool=call.name, call_id=call.id, parameters=params,
                      result=result.content, reasoning=reasoning, is_error=result.state in ("error", "timeout"),
                      is_blocked=result.state == "blocked", reason=result.error or "", duration=duration)
