"""``GroupChat``: several agents working one task by conversation.

One round: choose a speaker (``selection``) → the speaker replies with a
snapshot of the shared history as context (``speakers``) → the reply is
recorded once in the ``SharedHistory``, visible to all → termination
conditions are checked (``termination``). Agents come from spec dicts (built
through ``kernel.agent``, so any registered type), instances, or names known
to an ``AgentManager``; while an agent speaks it is RUNNING in the manager.

Control, like the react plugin's ``ReActLoop``: ``pause()``, ``resume()`` and
``abort()`` are safe from any thread or task. A pause takes effect at the next
turn boundary (the turn in flight finishes); ``abort()`` cancels the turn in
flight (it is not recorded) and ``arun`` raises ``RunAborted`` whose
``trajectory`` is the history. With ``checkpoints`` (a store from
``kernel.memory("checkpoints", path=...)`` or a path), the state is saved
after every turn (as a patch of the messages added when the store takes
patches: ``state.step_log``; whole at a pause, at the end and now and then)
and ``arun(run_id=...)`` continues a chat from its last checkpoint, in this
process or another. A checkpoint write that fails stops the chat (it fails
closed): ``arun`` raises ``zagent.errors.CheckpointError`` and writes nothing
more, so the chat resumes from its last checkpoint that landed.

Interrupts: a speaker (or its tool) calling ``zagent.interrupt(question)``
without an answer ends the chat ``paused`` (checkpointed, ``result.interrupts``;
the turn is not recorded). ``aresume(run_id, answer=...)`` records the answer,
then the same speaker takes the same round again, its interrupts getting the
answers in order (``zagent.agentkit.interrupts``). A chat running inside a
workflow node leaves its interrupts to the node (the node pauses, and reruns
the chat on resume).

Events (``zagent_event``, run id = the chat's): ``groupchat_start``,
``speaker_selected`` (speaker, how: policy/fallback/repeat_broken),
``turn_start``, ``turn_end`` (speaker, seq, chars, tokens), ``paused``,
``resumed``, ``groupchat_end`` (stopped_by). Speakers' own LLM and tool calls
go through the kernel (``LLM.asend``, ``Kernel.arun_tool``), so rails and
their events apply as in any other run.

Built on the actions plugin's agents and the manager plugin's ``AgentManager``
(imported here, as the design allows for a plugin built on another).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

import attrs
import msgspec

from zagent.agentkit.control import RunControl
from zagent.agentkit.interrupts import Asking, Interrupt, as_data, asking, bind
from zagent.agentkit.signing import aread_latest, signer_of
from zagent.agentkit.streaming import Streaming
from zagent._runs.context import ASKING
from zagent.agentkit.counters import join
from zagent.errors import CheckpointError, ConfigError, Interrupted, RunAborted
from zagent._trust.limits import check_text
from zagent import run_sync
from zagent._runs.sync import maybe_await

from . import termination as term
from .history import ChatMessage, SharedHistory
from .selection import Choice, Selection, SpeakerInfo, build_selector, check_names, choose
from .speakers import Turn, check_inputs, speak
from .state import ChatState, GroupChatResult, resumed, state_decoder, step_log

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

DEFAULT_MAX_ROUNDS = 20
_NO_ANSWER: Any = object()


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class GroupChat(Streaming):
    """A group chat (see the module docstring).

    :ivar agents: spec dicts, agent instances or names (resolved through ``manager``).
    :ivar selection: a policy name, a ``{"policy": ..., **options}`` mapping or a selector object.
    :ivar termination: a ``termination`` mapping (``termination.from_spec``) or a list of conditions;
        without a ``max_rounds`` condition, ``max_rounds`` (default 20) still bounds the chat.
    :ivar max_consecutive: turns one speaker may take in a row before selection is overruled
        (``None``: no limit).
    :ivar llm: model (or LLM) given to agents, the judge and the LLM selector built from dicts.
    :ivar on_turn: ``on_turn(message)`` (sync or async) after each recorded turn, e.g. to stream it.
    :ivar clock: the time source of the time budget (``time.monotonic``).
    :ivar output: the name the chat's outcome (last participant message) has in ``result.to_dict()``,
        e.g. the output a workflow node expects.
    :ivar deps: the app's typed dependencies every speaker's tools read as ``ctx.deps`` (``RunContext[Deps]``)
        unless the speaker has its own; ``arun(..., deps=)`` gives one run its own. Never checkpointed.
    """

    kernel: "Kernel"
    agents: Any = attrs.field(factory=list)
    selection: Any = "round_robin"
    termination: Any = None
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_consecutive: Optional[int] = 3
    name: str = "groupchat"
    description: str = ""
    manager: Any = None
    llm: Any = None
    checkpoints: Any = None
    on_turn: Optional[Callable[[ChatMessage], Any]] = None
    clock: Callable[[], float] = time.monotonic
    output: str = "content"
    deps: Any = None

    def __attrs_post_init__(self) -> None:
        if self.manager is None:
            from zagent.plugins.manager import AgentManager

            self.manager = AgentManager(kernel=self.kernel)
        self._speakers: dict[str, Any] = {}
        for item in self.agents:
            agent = self._resolve_agent(item)
            name = self.manager.name_of(agent)
            if name in self._speakers:
                raise ConfigError(f"group chat {self.name!r}: two agents are named {name!r}")
            self._speakers[name] = agent
        if not self._speakers:
            raise ConfigError(f"group chat {self.name!r} needs at least one agent")
        self._selector = build_selector(self.kernel, self._selection_spec())
        check_names(self._selector, self.speakers)
        self._conditions = self._build_conditions()
        self.history = SharedHistory()
        self.state: Optional[ChatState] = None
        self._control = RunControl()
        self._running = False
        self._store = self.kernel.memory("checkpoints", path=self.checkpoints) \
            if isinstance(self.checkpoints, str) else self.checkpoints

    @classmethod
    def from_dict(cls, data: dict[str, Any], kernel: "Kernel", **options: Any) -> "GroupChat":
        """Build from the declarative form (``spec.GroupChatSpec``); ``options``: manager, llm, checkpoints..."""
        from .spec import from_dict

        return from_dict(data, kernel, **options)

    @classmethod
    def load(cls, path: Any, kernel: "Kernel", **options: Any) -> "GroupChat":
        """Read a JSON or YAML group chat file."""
        from .spec import load

        return load(path, kernel, **options)

    # -- building -----------------------------------------------------------------

    def _resolve_agent(self, item: Any) -> Any:
        if isinstance(item, (str, dict)):
            return self.manager.add_agent(item, llm=self.llm if isinstance(item, dict) else None)
        return self.manager.add_agent(item)

    def _selection_spec(self) -> Any:
        spec = self.selection
        if isinstance(spec, str) and ":" not in spec:
            spec = {"policy": spec}
        if isinstance(spec, dict) and spec.get("policy") == "llm" and not spec.get("model") and not spec.get("llm"):
            spec = {**spec, "llm": self.llm}
        return spec

    def _build_conditions(self) -> list[Any]:
        if self.termination is None or isinstance(self.termination, dict):
            conditions = term.from_spec(self.termination, self._resolve_agent)
        else:
            conditions = list(self.termination)
        if not any(isinstance(c, term.MaxRounds) for c in conditions):
            conditions.append(term.MaxRounds(self.max_rounds))
        return conditions

    @property
    def speakers(self) -> list[str]:
        """Participants' names, in declaration order (round-robin order)."""
        return list(self._speakers)

    def agent(self, name: str) -> Any:
        return self._speakers[name]

    # -- control (any thread) ---------------------------------------------------------

    @property
    def status(self) -> str:
        return self.state.status if self.state is not None else "idle"

    def pause(self) -> None:
        """Pause at the next turn boundary (the turn in flight finishes and is recorded)."""
        self._control.request_pause()

    def resume(self, run_id: Optional[str] = None, *, answer: Any = _NO_ANSWER, deps: Any = None) -> Any:
        """Continue a chat paused with ``pause()``; or, given a ``run_id`` and an ``answer``, the sync twin of
        ``aresume`` (a chat paused at a turn's ``zagent.interrupt``)."""
        if run_id is None and answer is _NO_ANSWER:
            self._control.request_resume()
            return None
        if run_id is None or answer is _NO_ANSWER:
            raise ConfigError("resume(run_id, answer=...) needs both the run id and the answer")
        return run_sync(self.aresume(run_id, answer=answer, deps=deps))

    def abort(self) -> None:
        """End the chat now: the turn in flight is cancelled; ``arun`` raises ``RunAborted``."""
        self._control.request_abort()

    def post(self, content: str, *, speaker: str = "user") -> ChatMessage:
        """Add a message from outside (a human interjecting); the next speakers see it. Thread-safe."""
        return self.history.append(speaker, content, round=0)

    # -- running ------------------------------------------------------------------------

    async def arun(self, task: Optional[str] = None, *, run_id: Optional[str] = None, deps: Any = None,
                   **inputs: Any) -> GroupChatResult:
        """Run a chat on ``task`` until a termination condition holds; or, with ``run_id`` of a
        checkpointed chat and no task, continue it from its last checkpoint. ``deps`` (else the chat's)
        reach the speakers' tools as ``ctx.deps``."""
        return await self._arun(task, run_id, inputs, _NO_ANSWER, deps)

    async def aresume(self, run_id: str, *, answer: Any, deps: Any = None) -> GroupChatResult:
        """Continue chat ``run_id``, paused at a turn's ``zagent.interrupt``, with the person's ``answer``: it
        is checkpointed, then that speaker takes the turn again and its interrupt returns the answer. A run
        not in the store, or not paused at an interrupt, is a ``ConfigError`` saying so."""
        if self._store is None:
            raise ConfigError(f"group chat {self.name!r} has no checkpoints store, so run {run_id!r} cannot be "
                              "resumed; build it with checkpoints=... (the store the paused run was saved in)")
        return await self._arun(None, run_id, {}, as_data(answer), deps)

    async def _arun(self, task: Optional[str], run_id: Optional[str], inputs: dict[str, Any],
                    answer: Any, deps: Any = None) -> GroupChatResult:
        control = self._control
        with control.lock:
            if self._running:
                raise ConfigError(f"group chat {self.name!r} is already running; one run at a time per GroupChat")
            self._running, control.abort_requested = True, False
        try:
            self._deps = deps if deps is not None else self.deps
            await self._prepare(task, run_id, inputs, answer)
            return await self._drive()
        finally:
            self._running, self._outer = False, None
            self._control.unbind()

    def run(self, task: Optional[str] = None, **kwargs: Any) -> GroupChatResult:
        """Sync twin of ``arun``."""
        return run_sync(self.arun(task, **kwargs))

    async def acall(self, **inputs: Any) -> GroupChatResult:
        """Agent-style entry point: ``acall(task=..., **other_inputs)``."""
        return await self.arun(inputs.pop("task", None), **inputs)

    def __call__(self, **inputs: Any) -> GroupChatResult:
        return run_sync(self.acall(**inputs))

    async def aexecute(self, action_name: Optional[str] = None, *, inputs: Optional[dict[str, Any]] = None,
                       ctx: Optional["RunContext"] = None, msgs: Any = None) -> GroupChatResult:
        """Agent-style entry point (what a workflow node calls): the task is ``inputs["task"]``, else the inputs
        written as ``name: value`` lines. A chat is a run of its own whose tool budgets are ``ctx``'s run's."""
        inputs = dict(inputs or {})
        task = inputs.pop("task", None) or "\n".join(f"{k}: {v}" for k, v in inputs.items())
        self._outer = ctx.shared if ctx is not None else None  # taken by the run this starts
        deps = ctx.deps if ctx is not None and self.deps is None else None  # the caller's, unless the chat has its own
        return await self.arun(task, deps=deps, **inputs)

    def execute(self, action_name: Optional[str] = None, **kwargs: Any) -> GroupChatResult:
        """Sync twin of ``aexecute``."""
        return run_sync(self.aexecute(action_name, **kwargs))

    async def _prepare(self, task: Optional[str], run_id: Optional[str], inputs: dict[str, Any],
                       answer: Any = _NO_ANSWER) -> None:
        if task is not None:
            check_text(task, "the group chat's task")
        check_inputs(inputs, "group chat input")
        found = await aread_latest(self._store, run_id, signer_of(self.kernel)) if run_id and self._store else None
        if answer is not _NO_ANSWER and found is None:
            raise ConfigError(f"no group chat run {run_id!r} in {self._store!r}; check the run id (zagent memory "
                              "list --checkpoints lists the checkpointed runs)")
        if found is not None:
            state = resumed(found, task, run_id)
            self.history = SharedHistory(state.messages)
            if answer is not _NO_ANSWER:
                asked = state.interrupt
                if asked is None:
                    raise ConfigError(f"group chat run {run_id!r} is not paused at an interrupt: there is no "
                                      "question to answer (continue it with arun(run_id=...))")
                state.answers = [*state.answers[: asked.index], answer]
        else:
            if not task:
                raise ConfigError("give the chat a task (or the run_id of a checkpointed chat to continue)")
            from zagent._runs.context import new_run_id

            state = ChatState(run_id=run_id or new_run_id(), name=self.name, task=task, inputs=dict(inputs))
            self.history = SharedHistory()
            self.history.append("user", task, round=0)
        self._check_inputs(state)
        self.state = state
        self._log, self._saved = step_log(self.kernel), list(self.history.snapshot())
        self._control.bind()
        self._ctx = self.kernel.context(run_id=state.run_id, agent=self.name, metadata={"groupchat": self.name},
                                        share=getattr(self, "_outer", None), deps=self._deps)
        join(self.kernel, state.run_id, self._ctx.shared, state.counters)  # every turn counts in it
        self._ctx.usage = state.usage
        self._nested = ASKING.get() is not None  # inside a workflow node: its interrupts are the node's
        await self._emit("groupchat_start", resumed=found is not None, speakers=self.speakers, round=state.round)
        if answer is not _NO_ANSWER:
            self._log.reset()  # saved whole (answers are in full saves only), before the turn runs again
            await self._checkpoint()

    def _check_inputs(self, state: ChatState) -> None:
        available = set(state.inputs) | {"task"}
        for name, agent in self._speakers.items():
            missing = check_inputs(agent, available)
            if missing:
                raise ConfigError(f"agent {name!r} needs input(s) {', '.join(missing)}, which a group chat turn "
                                  f"does not fill; pass them to arun(...) or use inputs named transcript/task")

    async def _drive(self) -> GroupChatResult:
        state = self.state
        assert state is not None
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

    async def _turn(self) -> None:
        state = self.state
        number = state.round + 1
        again = state.interrupt
        if again is not None:  # the turn that asked a person, again
            if again.speaker not in self._speakers:
                raise ConfigError(f"group chat run {state.run_id!r} waits on {again.describe()}, but this chat has "
                                  f"no speaker {again.speaker!r} (its speakers: {', '.join(self.speakers)}); resume "
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
            with asking(Asking(state.answers, speaker=choice.speaker, round=number)) as scope:
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
            "usage": msgspec.to_builtins(reply.usage)})
        self._ctx.add_usage(reply.usage)
        state.round, state.usage = number, self._ctx.usage
        await self._emit("turn_end", round=number, speaker=choice.speaker, seq=message.seq,
                         chars=len(message.content), tokens=reply.usage.total_tokens, duration=duration)
        if self.on_turn is not None:
            await maybe_await(self.on_turn(message))

    async def _speak(self, name: str, agent: Any, turn: Turn) -> Any:
        async with self.manager.ausing(name):
            return await speak(agent, turn)

    def _infos(self) -> tuple[SpeakerInfo, ...]:
        return tuple(SpeakerInfo(n, str(getattr(a, "description", "") or "")) for n, a in self._speakers.items())

    def _view(self) -> term.ChatView:
        state = self.state
        return term.ChatView(round=state.round, messages=self.history.snapshot(),
                             elapsed=state.elapsed + (self.clock() - self._mark), task=state.task,
                             inputs=dict(state.inputs), ctx=self._ctx)

    def _tick(self) -> None:
        """Add the time since the last mark to ``elapsed`` (paused time is not counted)."""
        now = self.clock()
        self.state.elapsed += max(0.0, now - self._mark)
        self.state.usage = self._ctx.usage
        self._mark = now

    async def _boundary(self) -> None:
        """Honour abort and pause requests between turns; a pause waits here for resume or abort."""
        control = self._control
        if control.abort_requested:
            raise await self._aborted()
        if not control.pause_requested:
            return
        state = self.state
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

    async def _abortable(self, awaitable: Any) -> Any:
        """Await ``awaitable`` so that ``abort()`` cancels it; after an abort nothing new starts."""
        if self._control.abort_requested:
            close = getattr(awaitable, "close", None)
            if close is not None:
                close()
            raise asyncio.CancelledError
        return await self._control.abortable(awaitable)

    # -- ends ---------------------------------------------------------------------------

    async def _complete(self, condition: str, detail: str) -> GroupChatResult:
        state = self.state
        state.status, state.stopped_by, state.detail = "completed", condition, detail
        await self._checkpoint()
        await self._emit("groupchat_end", status="completed", stopped_by=condition, rounds=state.round)
        return GroupChatResult(run_id=state.run_id, stopped_by=condition, detail=detail, rounds=state.round,
                               messages=self.history.snapshot(), usage=state.usage, output_name=self.output)

    async def _paused_at(self, asked: Interrupt) -> GroupChatResult:
        """A turn asked a person: the chat ends ``paused`` (checkpointed), the turn unrecorded."""
        state = self.state
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
        state = self.state
        state.status = "aborted"
        self._tick()
        await self._checkpoint()
        await self._emit("groupchat_end", status="aborted", rounds=state.round)
        return RunAborted(f"group chat {state.run_id} was aborted after round {state.round}",
                          trajectory=list(self.history.snapshot()))

    def snapshot(self) -> ChatState:
        """A copy of the chat's state with the history as it is now."""
        assert self.state is not None, "the chat has not started"
        state = msgspec.structs.replace(self.state, messages=list(self.history.snapshot()))
        return state_decoder.decode(msgspec.json.encode(state))

    async def _checkpoint(self) -> None:
        """Save the state: the change since the last checkpoint when the store takes patches, else all of it."""
        store = self._store
        if store is None:
            return
        self.state.checkpoint += 1
        self.state.counters = self._ctx.shared.to_state()
        self._saved.extend(self.history.since(len(self._saved)))  # one list, only appended to
        state = msgspec.structs.replace(self.state, messages=self._saved)
        await self._log.asave(store, state.run_id, state.checkpoint, state, kind="groupchat",
                              metadata={"name": self.name, "status": state.status, "round": state.round},
                              resume=f"GroupChat(..., checkpoints=store).arun(run_id={state.run_id!r})")

    def _emit(self, type: str, **data: Any) -> Awaitable[None]:
        """``ctx.aemit``'s coroutine (await it): no coroutine of its own, the data passed on as is."""
        return self._ctx.aemit(type, **data)

    def __repr__(self) -> str:
        return f"<GroupChat {self.name!r} speakers={self.speakers} status={self.status}>"
