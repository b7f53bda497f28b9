"""``Agent``: actions by name, short-term (and optional long-term) memory, an LLM.

``execute``/``aexecute`` run one action (missing inputs extracted from recent messages: ``ContextExtraction``),
record the inputs and the typed output in memory and return an ``AgentResult``; ``acall``/``__call__`` run the
default action. Safe to call concurrently: per-call state lives in the call.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Iterator, Optional, Sequence, Union, cast

import attrs
import msgspec
from zagent.agentkit.secrets import held_settings

from zagent.errors import ConfigError
from zagent.agentkit.guardrails import check as check_guardrails, check_history
from zagent.agentkit.holding import Held, hold
from zagent.agentkit.inputs import check_inputs
from zagent import LLM
from zagent.agentkit.inputs import to_messages
from zagent.agentkit.outputtypes import as_output
from zagent import run_sync
from zagent.types import Message

from .action import Action
from .actionrun import ActionOutput, judge_text, keep_judged
from .agentmemory import AgentMemory
from .agentresult import AgentResult
from .guardrails import Guardrail

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext, Tool
    from zagent.agentkit.streaming import StreamEvent

    from .chat import AgentResponse
    from .validators import OutputValidator


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class Agent(AgentMemory):
    """An agent: named actions, memory, an LLM (``llm`` or ``llm_config``, consistent if both).

    :ivar memory_size: short-term memory keeps the last ``memory_size`` messages (``None``: all).
    :ivar memory_chars: and cuts each to at most this many characters, ending in "..." (``None``: whole).
    :ivar use_long_term_memory: also keep every message whole in ``kernel.memory(long_term_memory["name"])``
        (default ``sqlite``; other keys are the backend's options, ``session`` makes a ``name/session``
        namespace), which ``recall``/``arecall`` search and missing inputs are extracted from too.
    :ivar context_messages: how many recent (and recalled) messages ``ContextExtraction`` reads.
    :ivar agent_config: per-run settings plugins read from ``ctx.agent_config``
        (``{"rails": {...}, "skills": True}``).
    """

    kernel: "Kernel"
    name: str
    description: str = ""
    system_prompt: Optional[str] = None
    actions: Any = attrs.field(factory=list)
    #: the ``llm`` argument (an ``LLM``, a ``"provider:model"`` string or ``None``): ``llm`` is made from it
    _llm_arg: Optional[Union[LLM, str]] = attrs.field(default=None, alias="llm")
    #: the agent's model, made at construction from the ``llm`` and ``llm_config`` arguments
    llm: LLM = attrs.field(init=False)
    llm_config: Optional[dict[str, Any]] = None
    memory_size: Optional[int] = 200
    memory_chars: Optional[int] = None
    use_long_term_memory: bool = False
    long_term_memory: Optional[dict[str, Any]] = None
    #: the long-term namespace root when not the name (an untrusted spec's, see ``memorykeys``)
    memory_key: Optional[str] = None
    context_messages: int = 10
    default_action: Optional[str] = None
    agent_config: dict[str, Any] = attrs.field(factory=dict)
    #: checks on the typed output that may raise ``ModelRetry`` (``zagent.plugins.actions.validators``)
    output_validators: list["OutputValidator"] = attrs.field(factory=list)
    max_output_retries: int = 1
    #: a pydantic model, msgspec Struct, dataclass or attrs class: the answer must fit it (else the model is asked
    #: again, as by a validator) and ``result.output`` is an instance of it (``zagent.agentkit.outputtypes``)
    output_type: Any = None
    #: ``{"input": [fn], "output": [fn]}``: this agent's guardrails, on top of the kernel's (``.guardrails``)
    guardrails: dict[str, list[Guardrail]] = attrs.field(factory=dict)
    #: the app's typed dependencies its tools read as ``ctx.deps`` (``RunContext[Deps]``); never serialized
    deps: Any = None

    def __attrs_post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ConfigError("an agent needs a non-empty name")
        self._actions: dict[str, Action] = {}
        for action in (self.actions.values() if isinstance(self.actions, dict) else self.actions):
            self.add_action(action)
        self.llm, config = _resolve_llm(self.kernel, self._llm_arg, self.llm_config)
        self.llm_config = held_settings(config)  # used: its secrets kept as ``Secret`` (to_dict drops them)
        self._memory: list[Message] = []
        self._ltm: Any = None
        self.session: Any = None  # a persistent conversation the app sets (``chat(session=...)``)
        self.query_engine: Any = None  # documents chat() routes to (``zagent.plugins.actions.docchat``)

    # -- actions ------------------------------------------------------------------

    def add_action(self, action: Action) -> None:
        if action.name in self._actions:
            raise ConfigError(f"agent {self.name!r} already has an action named {action.name!r}")
        self._actions[action.name] = action
        if self.default_action is None:
            self.default_action = action.name

    def action(self, name: Optional[str] = None) -> Action:
        key = name or self.default_action
        if key is None or key not in self._actions:
            raise ConfigError(f"agent {self.name!r} has no action {key!r}; its actions: {', '.join(self._actions) or 'none'}")
        return self._actions[key]

    @property
    def action_names(self) -> list[str]:
        return list(self._actions)

    # -- running ------------------------------------------------------------------

    async def aexecute(
        self, action_name: Optional[str] = None, *, msgs: Optional[Sequence[Any]] = None,
        inputs: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None,
    ) -> AgentResult:
        """Run one action and return its ``AgentResult``; the inputs and the result message (metadata: agent,
        action, prompt, duration, usage, run id, steps) are recorded in memory."""
        return await self._begin(action_name, msgs, inputs, ctx)

    def _begin(self, action_name: Optional[str], msgs: Optional[Sequence[Any]], inputs: Optional[dict[str, Any]],
               caller: Optional["RunContext[Any]"]) -> Awaitable[AgentResult]:
        """Check the call and make its context; the run to await. Without a caller's run and without event
        observers that is the run's own coroutine: one level less in the await chain, which is resumed at
        every wait of every HTTP call."""
        started = time.perf_counter()
        action = self.action(action_name)
        check_inputs(inputs or {})  # a lone surrogate or 50,000-deep value: a ConfigError naming the input
        # A caller's run (a workflow, a group chat) keeps its id; this agent's own rails apply.
        ctx = (caller.for_agent(self.name, self.agent_config) if caller is not None
               else self.kernel.context(agent=self.name, agent_config=dict(self.agent_config)))
        if self.deps is not None:  # the agent's own deps, else its caller's (carried by for_agent)
            ctx.deps = self.deps
        events = self.kernel.has_impls("zagent_event")
        if caller is None and not events:
            return self._work(action, msgs, dict(inputs or {}), ctx, started, events)
        return self._framed(action, msgs, dict(inputs or {}), ctx, started, events, caller)

    async def _framed(self, action: Action, msgs: Optional[Sequence[Any]], inputs: dict[str, Any],
                      ctx: "RunContext[Any]", started: float, events: bool, caller: Optional["RunContext[Any]"]) -> AgentResult:
        """The run, with events on framed by ``run_start`` and a ``run_end`` that also ends a failed or
        cancelled run's span; what it spent is added to the caller's run, if any."""
        try:
            if not events:
                return await self._work(action, msgs, inputs, ctx, started, events)
            await ctx.aemit("run_start", action=action.name, inputs=sorted(inputs),
                            **({"metadata": dict(ctx.metadata)} if ctx.metadata else {}))
            try:
                return await self._work(action, msgs, inputs, ctx, started, events)
            except BaseException as exc:  # the run's span still ends, with the error
                import asyncio

                status = "cancelled" if isinstance(exc, asyncio.CancelledError) else "failed"
                from zagent.agentkit.secrets import error_excerpt  # masked, then cut
                await ctx.aemit("run_end", action=action.name, status=status,
                                error=error_excerpt(exc))
                raise
        finally:
            if caller is not None:
                caller.add_usage(ctx.usage)  # what this agent spent counts in the caller's run too

    async def _work(self, action: Action, msgs: Optional[Sequence[Any]], inputs: dict[str, Any],
                    ctx: "RunContext[Any]", started: float, events: bool, held: Optional[Held] = None) -> AgentResult:
        if held is None and ctx.on_delta is not None:  # streamed: the answer waits for its output guardrails
            held = hold(ctx, self.guardrails.get("output", ()))
            if held is not None:
                try:
                    return await self._work(action, msgs, inputs, ctx, started, events, held)
                finally:
                    held.close()
        if msgs:  # the caller's conversation: judged before memory keeps it (a later chat or extraction reads it)
            given = to_messages(msgs)
            if self.guardrails or self.kernel.has_impls("zagent_check_input"):
                from .userturn import history_text

                await check_history(ctx, self.name, given, history_text, self.guardrails.get("input", ()))
            await self._remember(given)
        asked = Message(role="user", content=_json(inputs), name=self.name,
                        metadata={"kind": "inputs", "action": action.name})
        if self.use_long_term_memory:
            await self._remember([asked])
        else:  # short-term only: no coroutine
            self._keep([asked])
        missing = action.missing_inputs(inputs)
        if missing:
            inputs.update(await self._extract(action, ctx, missing))
        if self.guardrails or self.kernel.has_impls("zagent_check_input"):
            await check_guardrails(ctx, "input", self.name, inputs, self.guardrails.get("input", ()))
        out: ActionOutput = await action.start(self.llm, inputs, ctx=ctx, system_prompt=self.system_prompt)
        retries = 0
        if self.output_validators or self.output_type is not None:  # a ModelRetry re-asks with its reason
            from .validators import validated

            out, retries = await validated(self, action, out, ctx)
        if self.guardrails or self.kernel.has_impls("zagent_check_output"):
            await check_guardrails(ctx, "output", self.name, out.output, self.guardrails.get("output", ()))
        if held is not None:  # only what the guardrails judged (a structured answer's prose is not)
            keep_judged(held, action, out.output)
            await held.release(judge_text(ctx, self, action), out.raw)
        duration = time.perf_counter() - started
        message = Message(role="assistant", content=_json(out.output), name=self.name, metadata={
            "agent": self.name, "action": action.name, "prompt": out.prompt, "duration": round(duration, 6),
            "usage": msgspec.to_builtins(out.usage), "run_id": ctx.run_id, "steps": out.steps})
        if retries:
            message.metadata["output_retries"] = retries
        if self.use_long_term_memory:
            await self._remember([message])
        else:
            self._keep([message])
        if events:
            await ctx.aemit("run_end", action=action.name, steps=out.steps, duration=duration)
        output = out.output if self.output_type is None else as_output(self.output_type, out.output)
        result = AgentResult(output=output, message=message, agent=self.name, action=action.name,
                             usage=out.usage, duration=duration, steps=out.steps,
                             trajectory=out.messages, tool_results=out.tool_results)
        await self.kernel.arun_end(result, ctx)
        return result

    def execute(self, action_name: Optional[str] = None, **kwargs: Any) -> AgentResult:
        """Sync twin of ``aexecute`` (works in scripts, inside a running loop and from threads)."""
        return run_sync(self.aexecute(action_name, **kwargs))

    async def acall(self, **inputs: Any) -> AgentResult:
        """Run the default action with ``inputs`` (or EvoAgentX's ``acall(inputs={...})``); an input name the
        action does not declare is a ``ConfigError``."""
        inputs = self._call_inputs(inputs)
        if type(self).aexecute is not Agent.aexecute:  # a subclass's own aexecute runs
            return await self.aexecute(None, inputs=inputs)
        return await self._begin(None, None, inputs, None)

    def as_tool(self, name: Optional[str] = None, *, description: Optional[str] = None,
                timeout: Optional[float] = None, register: bool = True) -> "Tool":
        """This agent as a kernel ``Tool`` other agents can call, inside their run and under their rails
        (``zagent.plugins.actions.astool``); registered on the kernel unless ``register=False``."""
        from .astool import agent_tool

        return agent_tool(self, name=name, description=description, timeout=timeout, register=register)

    # -- chat -------------------------------------------------------------------

    @property
    def speaks_by_chat(self) -> bool:
        """Group chats and workflow nodes call ``achat`` on agents that say so (chat agents); a declared agent
        speaks through ``aexecute`` (the transcript or the node's values as inputs), unless it has no action."""
        return not self._actions

    def run_config(self) -> dict[str, Any]:
        """The ``agent_config`` each of this agent's runs gets."""
        return dict(self.agent_config)

    def chat_tools(self) -> list[str]:
        """The tools a chat may use: those of this agent's actions."""
        names: list[str] = []
        for action in self._actions.values():
            names += [t for t in getattr(action, "tools", ()) or () if t not in names]
        return names

    def chat_system_prompt(self) -> str:
        from .chat import DIRECT_SYSTEM

        return self.system_prompt or DIRECT_SYSTEM

    async def achat(self, user_input: Union[str, Message], history: Optional[Sequence[Any]] = None,
                    use_react: Optional[bool] = None, *, ctx: Optional["RunContext[Any]"] = None,
                    session: Any = None) -> "AgentResponse":
        """Answer a chat turn directly, or with the ReAct loop over this agent's tools; an ``AgentResponse``.

        ``user_input`` is text or a user ``Message`` with image/file parts (``Message.user(text, image=...)``);
        ``use_react=None`` lets the model decide when the agent has tools; ``history`` replaces the short-term
        memory; ``ctx`` is the caller's run; ``session`` (else ``agent.session``) is a persistent conversation
        whose items are the history and which the turn is appended to (docs/sessions.md)."""
        from .chat import achat

        return await achat(self, user_input, history, use_react, ctx=ctx, session=session)

    def chat(self, user_input: Union[str, Message], history: Optional[Sequence[Any]] = None,
             use_react: Optional[bool] = None, *, ctx: Optional["RunContext[Any]"] = None, session: Any = None
             ) -> "AgentResponse":
        """Sync twin of ``achat``."""
        return run_sync(self.achat(user_input, history, use_react, ctx=ctx, session=session))

    def messages_for_chat(self) -> list[Message]:
        """Earlier chat turns from short-term memory (user and assistant text, and the user's images and files)."""
        return [Message(role=m.role, content=m.content, parts=m.parts) for m in self.messages
                if m.role in ("user", "assistant") and m.content and m.metadata.get("kind") != "inputs"]

    async def _react(self, user_input: Union[str, Message], past: list[Message], ctx: "RunContext[Any]"
                     ) -> "AgentResponse":
        from .chat import react_through_kernel

        return await react_through_kernel(self, user_input, past, ctx)

    def __call__(self, **inputs: Any) -> AgentResult:
        return run_sync(self.aexecute(None, inputs=self._call_inputs(inputs)))

    def _call_inputs(self, given: dict[str, Any]) -> dict[str, Any]:
        """A call's inputs: ``inputs={...}`` unwrapped (unless ``inputs`` is a declared name); a name the
        default action does not declare is refused (an action declaring none takes any)."""
        action = self._actions.get(self.default_action) if self.default_action is not None else None
        names = action.input_spec.names if action is not None else ()  # no action: the subclass's aexecute says
        if set(given) == {"inputs"} and isinstance(given["inputs"], dict) and "inputs" not in names:
            given = dict(given["inputs"])
        unknown = [k for k in given if k not in names]
        if unknown and names:
            raise ConfigError(f"agent {self.name!r} has no input(s) {', '.join(map(repr, unknown))}; its inputs: "
                              f"{', '.join(names)}")
        return given

    def astream(self, **inputs: Any) -> AsyncIterator["StreamEvent"]:
        """Run the default action as ``acall`` does, yielding ``StreamEvent``s: text deltas, step events,
        ``partial`` objects in ``json`` mode and, last, the ``AgentResult`` (``zagent.agentkit.streaming``)."""
        from zagent.agentkit.streaming import astream_run

        json_mode = getattr(self.action(), "parse_mode", None) == "json"
        return astream_run(self.kernel, lambda: self.acall(**inputs), json_mode=json_mode)

    def astream_chat(self, user_input: str, history: Optional[Sequence[Any]] = None,
                     use_react: Optional[bool] = None, *, session: Any = None) -> AsyncIterator["StreamEvent"]:
        """``achat`` as a stream of ``StreamEvent``s, the ``AgentResponse`` last."""
        from zagent.agentkit.streaming import astream_run

        return astream_run(self.kernel, lambda: self.achat(user_input, history, use_react, session=session))

    def stream(self, **inputs: Any) -> Iterator["StreamEvent"]:
        """Sync twin of ``astream`` (an iterator of ``StreamEvent``s)."""
        from zagent.agentkit.streaming import sync_stream

        return sync_stream(self.astream(**inputs))

    async def _extract(self, action: Action, ctx: "RunContext[Any]", missing: Sequence[str]) -> dict[str, Any]:
        from .extraction import ContextExtraction

        messages = self._memory[-self.context_messages:]
        if self.use_long_term_memory:  # earlier runs, maybe in other processes: what matches the missing inputs
            recalled = await self.arecall(" ".join(missing), limit=self.context_messages)
            messages = [m for m in recalled if m not in messages] + messages
        found = await ContextExtraction(kernel=self.kernel).aextract(self.llm, action, messages, ctx=ctx)
        found = {k: v for k, v in found.items() if k in missing}  # the caller's own values are never replaced
        still = [n for n in missing if n not in found]
        if still:
            raise ConfigError(
                f"agent {self.name!r}: action {action.name!r} needs input(s) {', '.join(still)}, which were not "
                "given and could not be found in the recent messages; pass them as inputs")
        return found

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} llm={self.llm!r} actions={self.action_names}>"


def _resolve_llm(kernel: "Kernel", llm: Any, llm_config: Optional[dict[str, Any]]) -> tuple[LLM, dict[str, Any]]:
    """One of ``llm``/``llm_config`` derives the other; both given must agree on the model."""
    config = dict(llm_config or {})
    if isinstance(llm, str):
        if config.get("model") not in (None, llm):
            raise ConfigError(f"llm {llm!r} and llm_config model {config['model']!r} disagree; give one of them")
        config["model"] = llm
        llm = None
    if llm is not None:
        if not isinstance(llm, LLM):
            raise ConfigError(f"llm must be a zagent.LLM or a 'provider:model' string, got {type(llm).__name__}")
        if config.get("model") not in (None, llm.name):
            raise ConfigError(f"llm {llm.name!r} and llm_config model {config['model']!r} disagree; give one of them")
        unused = sorted(k for k in config if k != "model")
        if unused:  # an existing instance cannot take new options: say so instead of dropping them quietly
            import logging

            logging.getLogger("zagent").warning(
                "llm_config option(s) %s are not applied to the given LLM instance %s; pass them to "
                "kernel.llm(...) when making it", ", ".join(unused), llm.name)
        return llm, {"model": llm.name, **{k: v for k, v in config.items() if k != "model"}}
    options = {k: v for k, v in config.items() if k != "model"}
    model = config.get("model")
    if isinstance(model, list):  # a chain of models tried in order (the fallback plugin's provider)
        options["models"] = model
        model = "fallback:" + ",".join(m if isinstance(m, str) else str((m or {}).get("model")) for m in model)
    resolved = kernel.llm(model, **options)
    # a Model is the provider's LLM bound to the kernel's rails and passes for it (isinstance, every attribute:
    # zagent._model.run.Model), which its declared type cannot say
    return cast(LLM, resolved), {"model": resolved.name, **options}


_encoder = msgspec.json.Encoder(enc_hook=repr)


def _json(value: Any) -> str:
    return _encoder.encode(value).decode()
