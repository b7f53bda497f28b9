"""``ReActLoop``: decide → act → observe, one model call a step, tools run through ``Kernel.arun_tool``.

RUNNING → PAUSED ⇄ RUNNING → COMPLETED | ABORTED | FAILED. ``pause()`` (next step or call), ``resume()`` and
``abort()`` (cancels the call in flight: ``RunAborted``) are safe from any thread. Steps and finished calls
are checkpointed: calls are at-least-once; a failed write raises ``CheckpointError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import attrs
import msgspec
from zagent.agentkit.guardrails import check as check_guardrails, check_history, handed_over, wanted
from zagent.agentkit.holding import hold
from zagent.agentkit.lifecycle import NO_ANSWER
from zagent.agentkit.toolloop import ToolLoop
from zagent.errors import ConfigError, NoAnswerError
from zagent.agentkit.inputs import check_text
from zagent.agentkit.inputs import to_messages
from zagent.agentkit.runkeys import APPROVED, CALL_KEYS, HELD_TOOLS
from zagent.agentkit.secrets import public_data
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

    :ivar on_error: ``"continue"`` (a step a rail blocked, or whose context compression failed, is recorded and
        the next step tries again) or ``"stop"`` (the run fails with ``NoAnswerError``). A ``ProviderError`` fails
        the run either way; any other error in a step aborts it (checkpointed) and is raised.
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
    agent_config: dict[str, Any] = attrs.field(factory=lambda: _NotGiven())
    """The agent's settings (rails...); left out, ``resume(run_id)`` uses a signed checkpoint's (``restore``)."""
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
        self._init_driver()
        self._tool_loop = ToolLoop(self.kernel, self.tool_format)
        self._log = ReActStepLog()
        self._live: Any = None

    # -- the run driver's hooks (``zagent.agentkit.lifecycle``: control, resume, the boundary) ------

    def _held(self) -> bool:
        return self._blocked_on_approval()

    def _answer_calls(self, approve: set[str], deny: set[str]) -> None:
        """An id approves the call awaiting under it (its minted id, tool and arguments); ``deny`` declines. The
        approval is spent as its call starts (``seals.claim_approval``): given twice it is one approval."""
        state = self._running
        approve = {i for i in approve if i in state.awaiting_approval and i in state.approval_keys} - set(deny)
        keys = {state.approval_keys[i] for i in approve}
        state.approved = sorted(set(state.approved) | keys)
        if deny:
            self._deny_pending(deny)

    def _position(self) -> dict[str, Any]:
        return {"step": self._running.step}

    def _paused_data(self) -> dict[str, Any]:
        return {"step": self._running.step, "awaiting_approval": list(self._running.awaiting_approval)}

    def _on_paused(self) -> None:
        if self.on_pause is not None:
            self.on_pause()

    def _on_resumed(self) -> None:
        self._release_approved()

    async def _aresume_run(self, run_id: str, answer: Any, approve: list[str], deny: list[str], deps: Any,
                           options: dict[str, Any]) -> ReActResult:
        """Continue run ``run_id`` from its latest checkpoint in ``checkpoints`` with this loop's settings
        (``restoring.restored`` checks it), its calls awaiting approval answered first."""
        if answer is not NO_ANSWER or options:
            raise ConfigError("a ReAct run takes approve=/deny= (call ids) and deps= on resume, not "
                              f"{'answer=' if answer is not NO_ANSWER else ', '.join(options)}; its questions are "
                              "answered by a new run")
        if self.checkpoints is None:
            raise ConfigError(f"this ReActLoop has no checkpoints store, so run {run_id!r} cannot be resumed; build "
                              "it with checkpoints=... (the store the run was saved in)")
        from .restoring import restored

        given = not isinstance(self.agent_config, _NotGiven)
        config = {"checkpoints": self.checkpoints, "agent": self.agent,
                  "agent_config": self.agent_config if given else None}
        found: dict[str, Any] = {}
        self.state, self._log = restored(self.kernel, run_id, config, found), ReActStepLog()
        self._found_tools = found
        self.agent_config = config["agent_config"]  # left out: the signed checkpoint's (else refused above)
        self._answer_calls(set(approve), set(deny))
        return await self._go(None, None, None, deps)

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

        found: dict[str, Any] = {}
        loop = cls(kernel=kernel, state=restored(kernel, state, config, found), **config)
        loop._found_tools = found  # the tools the restore checked: approvals cover these objects (``_go``)
        return loop

    # -- running --------------------------------------------------------------------

    async def arun(self, user_input: Optional[Union[str, Message]] = None, *,
                   history: Optional[Sequence[Any]] = None, ctx: Optional["RunContext[Any]"] = None) -> ReActResult:
        """Run (or continue) until an answer, clarification questions, abort or a bound. ``user_input`` is text or
        a user ``Message`` with image/file parts (``Message.user(text, image=...)``), sent as it is."""
        return await self._go(user_input, history, ctx, None)

    async def _go(self, user_input: Optional[Union[str, Message]], history: Optional[Sequence[Any]],
                  ctx: Optional["RunContext[Any]"], deps: Any) -> ReActResult:
        text, past = None, []
        if user_input is not None:
            from zagent.plugins.actions.userturn import check_parts, judged_text, user_turn

            turn = user_turn(user_input, "the ReAct run's user_input")
            text = judged_text(turn)  # what the input guardrails read: text parts and text files too
            past = to_messages(history or [])
            for i, message in enumerate(past):
                if message.content is not None:
                    check_text(message.content, f"the ReAct run's history message #{i}")
            check_parts(self.llm, turn)  # a part the model cannot take: an error before the run starts
            self._start(turn, past, ctx.run_id if ctx is not None else None)
        elif self.state is None:
            raise ConfigError("nothing to run: give user_input or restore a state")
        state = self._running
        self._start_driver()  # per run: a lock stays bound to the event loop it first waited on
        ctx = ctx or self.kernel.context(run_id=state.run_id, agent=self.agent, agent_config=self.agent_config,
                                         deps=deps if deps is not None else self.deps)
        for key, value in (self.agent_config or {}).items():  # a caller's context keeps its own settings,
            ctx.agent_config.setdefault(key, value)           # and gets the loop's rails for what it leaves out
        rails = (self.agent_config or {}).get("rails")
        if rails and ctx.agent_config.get("rails") != rails:  # the caller's rails and the loop's: both apply
            _add_rails(ctx.agent_config, rails, self.agent)
        self._ctx = ctx
        offered = ctx.offered_tools  # a caller's context gets its own offer back: the loop's never outlives the run
        ctx.stash.restore(state.stash)  # plain data: its plugin rebuilds its object on first use
        ctx.frame.setdefault(APPROVED, set()).update(state.approved)  # this agent's own slots (``RunContext.frame``)
        outer = ctx.frame.get(CALL_KEYS)  # an outer loop's, on a context shared with it (the app's)
        ctx.frame[CALL_KEYS] = state.call_keys
        found = self.__dict__.pop("_found_tools", None)  # a restored run's: another tool put under the name
        if found:                                         # since is asked about again (rails' ``ask``)
            held = ctx.frame.setdefault(HELD_TOOLS, {})
            held.update({state.approval_keys[i]: pair for i, pair in found.items() if i in state.approval_keys})
        if state.usage.calls and not ctx.usage.calls:
            ctx.usage = state.usage
        if self.live_trajectory_path:
            from .recorder import LiveSteps

            self._live = LiveSteps(self.live_trajectory_path, state, resumed=user_input is None)
        await self._emit("run_start", resumed=user_input is None,
                         **({"metadata": dict(ctx.metadata)} if ctx.metadata else {}))
        self._input, self._past = text, past  # judged before the first step (``_before_drive``)
        own = self.guardrails.get("output", ())  # streamed text waits for the output guardrails (``_complete``)
        self._stream_hold = hold(ctx, own)
        self._text_hold = [] if self.on_text is not None and wanted(ctx, "output", own) else None
        try:
            return await self._drive()
        finally:
            ctx.offered_tools = offered
            if self._stream_hold is not None:
                self._stream_hold.close()
            self._stream_hold = self._text_hold = None
            self._withdraw_approvals(outer)  # none outlives the run on its context
            self.__dict__.pop("_release_store", lambda: None)()
            self._stop_driver()

    def run(self, user_input: Optional[Union[str, Message]] = None, **kwargs: Any) -> ReActResult:
        """Sync twin of ``arun``."""
        from zagent import run_sync

        return run_sync(self.arun(user_input, **kwargs))

    def _start(self, turn: Message, history: Optional[Sequence[Any]], run_id: Optional[str]) -> None:
        """A new state; its run id is the caller's context's, so events and checkpoints agree."""
        from zagent.agentkit.runs import new_run_id

        messages = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        messages.extend(to_messages(history or []))
        messages.append(turn)
        self.state = ReActState(run_id=run_id or new_run_id(), agent=self.agent, messages=messages,
                                task=turn.content or "",
                                agent_config=public_data(self.agent_config))
        self._log = ReActStepLog()

    async def _before_drive(self) -> None:
        text, ctx, past = self._input, self._ctx, self._past
        from .stores import claim_store  # before any step is saved: no other agent of the run writes its store

        self.__dict__["_release_store"] = claim_store(ctx, self.checkpoints, self, self.agent)
        self._past = []
        if (text is not None and (self.guardrails or self.kernel.has_impls("zagent_check_input"))
                and not handed_over(ctx, text)):  # handed over by a chat: it judged its history too
            await check_guardrails(ctx, "input", self.agent, text, self.guardrails.get("input", ()))
            if past:  # the caller's history= (its user turns): each distinct text once per run
                from zagent.plugins.actions.userturn import history_text

                await check_history(ctx, self.agent, past, history_text, self.guardrails.get("input", ()))

    async def _advance(self) -> Optional[ReActResult]:
        state = self._running
        if state.pending:
            await self._run_batch()
            return None
        if state.final is not None or state.questions:
            return await self._complete()
        if state.step >= self.max_iterations:
            raise await self._fail(NoAnswerError(
                f"no answer within max_iterations={self.max_iterations}; raise it or inspect error.trajectory",
                trajectory=state.steps, limit="max_iterations"))
        await self._step()
        return None


class _NotGiven(dict[str, Any]):
    """An empty ``agent_config`` the caller did not give (``resume(run_id)`` then reads a signed checkpoint's)."""


def check_on_error(value: Any, where: str = "ReActLoop") -> None:
    """``ConfigError`` unless ``value`` is a known ``on_error`` policy."""
    if value not in ON_ERROR:
        raise ConfigError(f"{where}: on_error must be one of {', '.join(map(repr, ON_ERROR))}, got {value!r}")


def _add_rails(config: dict[str, Any], rails: Any, agent: Optional[str]) -> None:
    """Add ``rails`` (a loop's own) to a caller's context settings ``config`` as one more layer (``outer_rails``,
    whose: ``agent``) unless there already: rails only tighten, so a caller's context never drops a loop's rules."""
    outer = list(config.get("outer_rails") or ())
    if any(rails == layer for layer in outer):
        return
    names = [*list(config.get("outer_agents") or ())[:len(outer)], *["?"] * len(outer)][:len(outer)]
    config["outer_rails"], config["outer_agents"] = [*outer, rails], [*names, agent or "?"]
