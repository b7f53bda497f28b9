"""Handoffs (docs/agents.md#handoffs): ``Handoffs(kernel, agents)`` runs the first agent's ReAct loop with a
``transfer_to_<name>(reason)`` tool per agent it may hand over to, at most ``max_handoffs`` times, as one run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional, Sequence

import attrs
import msgspec
from zagent.errors import ConfigError, RunAborted, ToolError
from zagent.agentkit.guardrails import check as check_guardrails, wanted
from zagent.agentkit.inputs import to_messages
from zagent import StashKey
from zagent import run_sync
from zagent import Tool
from zagent.types import Message

from zagent.plugins.actions.asked import arun_asking

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext
    from zagent.plugins.actions.chat import AgentResponse

    from .loop import ReActLoop

__all__ = ["Handoffs", "HandoffResult", "Hop"]

_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
_CTX = "_zagent_handoff_ctx"


@attrs.define(kw_only=True)
class Hop:
    """One agent's turn in a handoff run: who, why it got the conversation, what it said (if it answered)."""

    agent: str
    reason: str = ""
    content: str = ""


@attrs.define(kw_only=True, repr=False)
class HandoffResult:
    """How a handoff run ended: the final ``content``, ``answered_by`` and the ``trace`` of hops."""

    content: str
    answered_by: str
    trace: list[Hop]
    messages: list[Message]
    run_id: str

    def __repr__(self) -> str:
        return f"<HandoffResult by {self.answered_by!r} hops={[h.agent for h in self.trace]}>"


@attrs.define
class _Pending:
    loop: Optional["ReActLoop"] = None
    target: Optional[str] = None
    reason: str = ""
    targets: dict[str, str] = attrs.Factory(dict)
    """This run's agents by their transfer tool's name (a later ``Handoffs`` reusing a tool installs its handler)."""
    routed: frozenset[str] = frozenset()
    """The transfer tools the routes give the agent holding the conversation now (its own tool list may name others)."""


_PENDING: StashKey[_Pending] = StashKey("zagent.handoff")


#: hand-over tools one kernel holds (specs naming agents anew add one per agent)
MAX_HANDOFF_TOOLS = 1024


def transfer_tool_name(agent: str) -> str:
    """The name of the tool that hands a conversation over to ``agent``."""
    return "transfer_to_" + _BAD.sub("_", agent)


class Handoffs:
    """Agents that may hand a conversation to each other (see the module docstring).

    :param agents: the agents, the first one answers first; names must differ.
    :param routes: who may hand over to whom, by name (default: any to any other).
    :param max_handoffs: hand-overs in one run before the last agent's answer stands.
    :param output_guardrails: checked on the answer whoever gives it, after that agent's own (an agent chatting
        with ``handoffs`` passes its own, so handing over never skips them).
    """

    def __init__(self, kernel: "Kernel", agents: Sequence[Any], *, routes: Optional[dict[str, list[str]]] = None,
                 max_handoffs: int = 5, output_guardrails: Sequence[Any] = ()) -> None:
        if not agents:
            raise ConfigError("Handoffs needs at least one agent")
        self.kernel = kernel
        self.agents = {a.name: a for a in agents}
        if len(self.agents) != len(agents):
            raise ConfigError("Handoffs: two agents share a name; give each its own")
        self.routes = routes if routes is not None else {n: [m for m in self.agents if m != n] for n in self.agents}
        for source, targets in self.routes.items():
            for name in [source, *targets]:
                if name not in self.agents:
                    raise ConfigError(f"Handoffs route names unknown agent {name!r}; agents: {', '.join(self.agents)}")
        if not isinstance(max_handoffs, int) or max_handoffs < 0:
            raise ConfigError(f"max_handoffs must be a whole number >= 0, got {max_handoffs!r}")
        self.max_handoffs = max_handoffs
        self.output_guardrails = list(output_guardrails)
        by_tool: dict[str, str] = {}
        for name in self.agents:  # one tool per target: a shared name would hand over to the later agent
            other = by_tool.setdefault(transfer_tool_name(name), name)
            if other != name:
                raise ConfigError(f"Handoffs: agents {other!r} and {name!r} would share the hand-over tool "
                                  f"{transfer_tool_name(name)!r} (names differing only outside A-Z, a-z, 0-9, '_', "
                                  "'.' and '-'), so a call meant for one could reach the other; rename one of them")
        self._tools = {name: self._transfer_tool(name) for name in self.agents}

    def _transfer_tool(self, target: str) -> str:
        name = transfer_tool_name(target)
        agent = self.agents[target]

        async def handler(reason: str = "", **kwargs: Any) -> str:
            ctx: "RunContext[Any]" = kwargs[_CTX]
            pending = ctx.stash.get(_PENDING)
            if pending is None or pending.loop is None:
                raise ToolError(f"{name} only works inside a handoff run (zagent.plugins.react.Handoffs)")
            if pending.target is not None:  # another transfer of this reply came first: it stands
                raise ToolError(f"not transferred: this reply already hands the conversation to {pending.target!r} "
                                "(one handoff per reply)")
            held = getattr(pending.loop, "_ctx", None)
            if held is None or ctx.frame is not held.frame:  # an agent it called as a tool: not its to hand over
                raise ToolError(f"not transferred: {name} hands over only the conversation of the agent holding it, "
                                "not from an agent that agent called; answer the task you were given")
            chosen = pending.targets.get(name)  # this run's agent, whichever Handoffs installed this handler
            if chosen is not None and name not in pending.routed:  # the agent's file listed it: no route there
                allowed = ", ".join(sorted(pending.routed)) or "none"
                raise ToolError(f"not transferred: the routes of this handoff run do not let this agent hand over to "
                                f"{chosen!r} (it may hand over only with: {allowed}); answer yourself")
            if chosen is None:
                raise ToolError(f"not transferred: {name} names no agent of this handoff run (its agents: "
                                f"{', '.join(pending.targets.values())}); answer yourself")
            # one line: it goes into the user's turn for the target, where a line break could fake a turn
            pending.target, pending.reason = chosen, " ".join(str(reason).split())[:2000]
            pending.loop.abort()  # this agent's run ends here; the target takes the conversation
            return f"transferred to {chosen}"

        tool = Tool(name=name, handler=handler, is_async=True, ctx_param=_CTX, toolset="handoffs", timeout=None,
                    description=f"Hand the conversation over to {target}: {agent.description or target}. "
                                "Use it when that agent should answer instead of you.",
                    parameters={"type": "object", "properties": {"reason": {
                        "type": "string", "description": "why, in one sentence"}}})
        existing = self.kernel.find("tools", name)
        if existing is None:
            k = self.kernel  # each kept (its handler holding a group) for the kernel's life
            if len([n for n in k.names("tools") if getattr(k.find("tools", n), "toolset", None) == "handoffs"]) \
                    >= MAX_HANDOFF_TOOLS:
                raise ConfigError(f"handoff tool {name!r} was not added: this kernel holds at most {MAX_HANDOFF_TOOLS} "
                                  "hand-over tools; drop those no longer used (k.remove_toolset('handoffs') between "
                                  "runs), reuse agent names, or use a new kernel")
            self.kernel.add_tool(tool)
        elif existing.toolset == "handoffs":  # registered by an earlier Handoffs: this one's handler answers now
            existing.handler = handler
        else:
            raise ConfigError(f"handoff tool {name!r} clashes with a registered tool of that name; rename "
                              f"agent {target!r}")
        return name

    async def achat(self, user_input: Any, history: Optional[Sequence[Any]] = None, *,
                    ctx: Optional["RunContext[Any]"] = None) -> HandoffResult:
        """Run the conversation turn from the first agent until one answers (see the module docstring);
        ``user_input`` is text or a user ``Message`` with image/file parts (each agent gets them)."""
        from zagent.plugins.actions.astool import outer_config
        from zagent.plugins.actions.userturn import user_turn

        turn = user_turn(user_input, "the user_input of a handoff chat")
        user_text = turn.content or ""
        root = ctx or self.kernel.context(agent=next(iter(self.agents)))
        past = to_messages(history or [])
        pending = root.stash[_PENDING] = _Pending(targets={transfer_tool_name(n): n for n in self.agents})
        name, reason = next(iter(self.agents)), ""
        trace: list[Hop] = []
        handed: list[tuple[str, Any]] = []  # the agents that handed over so far, with their rails
        try:
            for hop in range(self.max_handoffs + 1):
                agent = self.agents[name]
                extra = [self._tools[t] for t in self.routes.get(name, []) if hop < self.max_handoffs]
                loop = _loop_for(agent, extra)
                outer = [g for g in self.output_guardrails if g not in loop.guardrails.get("output", ())]
                if outer:  # checked by the loop before its answer is done, as the agent's own are
                    loop.guardrails = {**loop.guardrails, "output": [*loop.guardrails.get("output", ()), *outer]}
                pending.loop, pending.target, pending.routed = loop, None, frozenset(extra)
                # the caller's rails (the agent handing over, its callers) stay a floor for whoever answers
                agent_ctx = root.for_agent(agent.name, _kept_rails(outer_config(loop.agent_config, root), handed,
                                                                   agent.name))
                asked = turn if not hop else msgspec.structs.replace(
                    turn, content=f"{user_text}\n\n(Handed over to you by {trace[-1].agent}: {reason})")
                step = Hop(agent=agent.name, reason=reason)
                trace.append(step)
                try:
                    # approvals in a node: interrupts; elsewhere a "later" no one can give: ToolBlocked
                    result = await arun_asking(loop, asked, past, agent_ctx, owned=True)
                except RunAborted:
                    if pending.target is None:
                        raise
                    said = _said(loop, len(past))
                    past = [*past, *[Message(role="assistant", content=m.content, name=agent.name) for m in said]]
                    own = loop.guardrails.get("output", ())
                    if root.on_delta is not None and wanted(root, "output", own):  # streamed: the event shows the
                        await check_guardrails(agent_ctx, "output", agent.name, pending.reason, own)  # reason: judged
                    handed.append((agent.name, (loop.agent_config or {}).get("rails")))  # a floor for the next
                    await root.aemit("handoff", source=agent.name, target=pending.target, reason=pending.reason)
                    name, reason = pending.target, pending.reason
                    continue
                finally:
                    root.add_usage(agent_ctx.usage)
                step.content = result.content
                messages = [*past, asked,
                            Message(role="assistant", content=result.content, name=agent.name)]
                return HandoffResult(content=result.content, answered_by=agent.name, trace=trace,
                                     messages=messages, run_id=root.run_id)
        finally:
            root.stash.pop(_PENDING, None)
        raise AssertionError("unreachable: the last hop offers no transfer tools")  # pragma: no cover

    def chat(self, user_input: Any, history: Optional[Sequence[Any]] = None, **kwargs: Any) -> HandoffResult:
        """Sync twin of ``achat``."""
        return run_sync(self.achat(user_input, history, **kwargs))


def _kept_rails(config: dict[str, Any], handed: list[tuple[str, Any]], name: str) -> dict[str, Any]:
    """``config`` of agent ``name`` answering now, with the rails of each agent that handed the conversation over
    before it as outer layers (not its own, nor a layer already there): a hand-over never drops the rules of the
    agent handing over, whoever built the ``Handoffs`` and whatever context it was given."""
    outer = list(config.get("outer_rails") or ())
    names = [*list(config.get("outer_agents") or ())[:len(outer)], *["?"] * len(outer)][:len(outer)]
    for who, rails in handed:
        if rails and who != name and not any(rails == layer for layer in outer):
            outer.append(rails)
            names.append(who)
    if len(outer) == len(config.get("outer_rails") or ()):
        return config
    return {**config, "outer_rails": outer, "outer_agents": names}


def _said(loop: "ReActLoop", history: int) -> list[Message]:
    """What the agent of ``loop`` wrote (text only) after the ``history`` messages and the request."""
    messages = loop.state.messages if loop.state is not None else []
    start = (1 if messages and messages[0].role == "system" else 0) + history + 1
    return [m for m in messages[start:] if m.role == "assistant" and m.content and m.content.strip()]


def _loop_for(agent: Any, extra_tools: list[str]) -> "ReActLoop":
    """A ReAct loop for ``agent`` with ``extra_tools`` offered too (a declared agent: through the react type)."""
    loop: "ReActLoop"
    if hasattr(agent, "loop"):
        loop = agent.loop()  # a ReActAgent's
    else:
        from .agent import ReActAgent

        config = dict(agent.agent_config)  # its own rails too (a ReAct agent keeps them in ``rails``)
        react = ReActAgent(kernel=agent.kernel, name=agent.name, description=agent.description,
                           system_prompt=agent.system_prompt, llm=agent.llm, tools=agent.chat_tools(),
                           agent_config=config, rails=dict(config.get("rails") or {}),
                           guardrails=dict(getattr(agent, "guardrails", None) or {}), deps=agent.deps)
        loop = react.loop()
    added = [t for t in extra_tools if t not in loop.tools]
    loop.tools = [*loop.tools, *added]
    loop.pinned_tools = [*loop.pinned_tools, *added]  # offered every turn, however many tools there are
    return loop


async def chat_with_handoffs(agent: Any, user_input: Any, past: list[Message], ctx: Optional["RunContext[Any]"]
                             ) -> "AgentResponse":
    """``ReActAgent.chat`` for an agent with ``handoffs``: it may hand over to them (not they to others)."""
    from zagent.plugins.actions.chat import AgentResponse

    group = getattr(agent, "_handoff_group", None)
    if group is None:
        group = agent._handoff_group = Handoffs(agent.kernel, [agent, *agent.handoffs],
                                                routes={agent.name: [h.name for h in agent.handoffs]})
    group.output_guardrails = list((getattr(agent, "guardrails", None) or {}).get("output", ()))  # as set now
    result = await group.achat(user_input, past, ctx=ctx)
    return AgentResponse(content=result.content, mode="handoff", metadata={
        "run_id": result.run_id, "answered_by": result.answered_by,
        "trace": [attrs.asdict(h) for h in result.trace]})
