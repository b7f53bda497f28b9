"""``ReActAgent`` and ``Agent.chat``: a chat agent that answers directly or runs the ReAct loop.

``chat(user_input, history=None, use_react=None)`` returns an ``AgentResponse``.
With ``use_react=None`` the agent first asks the model (one short call)
whether the request needs tools or several steps; "no" (or no tools at all)
gives a single direct answer, "yes" runs a ``ReActLoop``. Turns are kept in
the agent's short-term memory, so later chats see earlier ones as history.
Built on the actions plugin's ``Agent``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Optional, Sequence

import attrs
import msgspec
from zagent.credentials import spec_options
from zagent.imports import check_spec_path, resolve_approver
from zagent.kernel import convert_spec
from zagent.llm import to_messages
from zagent.plugins.actions.agent import Agent
from zagent.sync import run_sync
from zagent.toolrefs import resolve_tool_refs
from zagent.types import Message

from .loop import SYSTEM_PROMPT, ReActLoop
from .state import StepResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

ROUTER = """Decide how to handle the user's request below.
Answer "yes" if it needs tools ({tools}) or several steps of work, "no" if you can answer it directly.
Reply with the single word yes or no.

Request: {request}"""


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class AgentResponse:
    """The reply of ``chat``: content, the tools used and their results, steps and timing."""

    content: str
    mode: str
    tool_used: Optional[str] = None
    tool_result: Optional[str] = None
    steps: list[StepResult] = attrs.field(factory=list)
    questions: list[str] = attrs.field(factory=list)
    execution_time: float = 0.0
    metadata: dict[str, Any] = attrs.field(factory=dict)

    def __repr__(self) -> str:
        return f"<AgentResponse {self.mode} steps={len(self.steps)} content={self.content[:60]!r}>"


class ReActSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The declarative form of a ``ReActAgent``."""

    name: str
    type: str = "react"
    description: str = ""
    system_prompt: str = SYSTEM_PROMPT
    tools: list[str] = []
    pinned_tools: list[str] = []
    llm: Optional[str] = None
    llm_config: Optional[dict[str, Any]] = None
    max_iterations: int = 20
    max_tool_call_concurrency: int = 4
    tool_limit: int = 16
    max_context_messages: Optional[int] = None
    max_context_tokens: Optional[int] = None
    rails: dict[str, Any] = {}
    agent_config: dict[str, Any] = {}
    on_error: str = "continue"
    memory_size: Optional[int] = 200
    trajectory_path: Optional[str] = None


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class ReActAgent(Agent):
    """A chat agent over ``tools`` with the ReAct loop (see the module docstring)."""

    tools: Sequence[str] = ()
    pinned_tools: Sequence[str] = ()
    max_iterations: int = 20
    max_tool_call_concurrency: int = 4
    tool_limit: int = 16
    max_context_messages: Optional[int] = None
    max_context_tokens: Optional[int] = None
    rails: dict[str, Any] = attrs.field(factory=dict)
    on_error: str = "continue"
    trajectory_path: Optional[str] = None
    checkpoints: Any = None

    def run_config(self) -> dict[str, Any]:
        """The ``agent_config`` each run's context gets: the agent's plugin settings
        (``Agent.agent_config``, e.g. ``{"skills": True}``) plus ``"rails"``."""
        return {**self.agent_config, "rails": dict(self.rails)}

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        for name in self.tools:
            self.kernel.tool(name)  # unknown tools fail now, with the list of registered ones
        if self.system_prompt is None:
            self.system_prompt = SYSTEM_PROMPT

    @classmethod
    def from_dict(cls, data: dict[str, Any], kernel: "Kernel") -> "ReActAgent":
        spec = convert_spec(data, ReActSpec, "react agent spec")
        fields = msgspec.structs.asdict(spec)
        fields.pop("type")
        fields["rails"] = resolve_approver(fields["rails"], kernel)
        fields["tools"] = resolve_tool_refs(kernel, fields["tools"], key="tool")  # names, toolset:, import paths
        fields["pinned_tools"] = resolve_tool_refs(kernel, fields["pinned_tools"], key="pinned tool")
        check_spec_path(spec.trajectory_path, "trajectory_path", (".jsonl",))
        with spec_options(f"agent {spec.name!r}", kernel):  # the user's key goes only to the user's base URL
            return cls(kernel=kernel, **fields)

    def loop(self) -> ReActLoop:
        """A new ``ReActLoop`` configured like this agent."""
        return ReActLoop(
            kernel=self.kernel, llm=self.llm, tools=list(self.tools), system_prompt=self.system_prompt or SYSTEM_PROMPT,
            max_iterations=self.max_iterations, max_tool_call_concurrency=self.max_tool_call_concurrency,
            tool_limit=self.tool_limit, pinned_tools=list(self.pinned_tools),
            max_context_messages=self.max_context_messages, max_context_tokens=self.max_context_tokens,
            on_error=self.on_error, checkpoints=self.checkpoints, trajectory_path=self.trajectory_path,
            agent=self.name, agent_config=self.run_config())

    async def achat(self, user_input: str, history: Optional[Sequence[Any]] = None,
                    use_react: Optional[bool] = None, *, ctx: Optional[Any] = None) -> AgentResponse:
        """Answer ``user_input`` directly or with the ReAct loop (decided by the model when None).

        ``ctx``: the caller's run (a group chat, a workflow): this chat runs under its run id
        and metadata, with this agent's own name and ``agent_config`` (its rails stay its own)."""
        started = time.perf_counter()
        past = to_messages(history) if history is not None else self.messages_for_chat()
        ctx = self.kernel.context(agent=self.name, agent_config=self.run_config(),
                                  **({"run_id": ctx.run_id, "metadata": dict(ctx.metadata)} if ctx is not None else {}))
        if use_react is None:
            use_react = await self._needs_react(user_input, ctx)
        if use_react:
            result = await self.loop().arun(user_input, history=past, ctx=ctx)
            used = [s for s in result.steps if s.tool]
            response = AgentResponse(
                content=result.content, mode="react", steps=result.steps, questions=result.questions,
                tool_used=used[-1].tool if used else None, tool_result=used[-1].result if used else None,
                metadata={"run_id": result.state.run_id, "iterations": result.state.step})
        else:
            response = await self._direct(user_input, past, ctx)
        response.execution_time = time.perf_counter() - started
        response.metadata["usage"] = msgspec.to_builtins(ctx.usage)
        await self._remember([Message(role="user", content=user_input),
                              Message(role="assistant", content=response.content, name=self.name,
                                      metadata={"mode": response.mode, **response.metadata})])
        return response

    async def _direct(self, user_input: str, past: list[Message], ctx: Any) -> AgentResponse:
        """One model call, framed as a run (``run_start``/``run_end`` events) like a loop run."""
        events = self.kernel.hooks.active("zagent_event")
        if events:
            await ctx.emit("run_start", mode="direct")
        messages = [Message(role="system", content=self.system_prompt or SYSTEM_PROMPT), *past,
                    Message(role="user", content=user_input)]
        try:
            reply = await self.llm.asend(self.llm.request(messages), ctx)
        except Exception as exc:
            if events:
                await ctx.emit("run_end", status="failed", mode="direct", error=str(exc))
            raise
        if events:
            await ctx.emit("run_end", status="completed", mode="direct", steps=1)
        return AgentResponse(content=reply.text.strip(), mode="direct", metadata={"run_id": ctx.run_id})

    def chat(self, user_input: str, history: Optional[Sequence[Any]] = None,
             use_react: Optional[bool] = None, *, ctx: Optional[Any] = None) -> AgentResponse:
        """Sync twin of ``achat``."""
        return run_sync(self.achat(user_input, history, use_react, ctx=ctx))

    def messages_for_chat(self) -> list[Message]:
        """Earlier chat turns from short-term memory (user and assistant text only)."""
        return [Message(role=m.role, content=m.content) for m in self.messages
                if m.role in ("user", "assistant") and m.content and m.metadata.get("kind") != "inputs"]

    async def _needs_react(self, user_input: str, ctx: Any) -> bool:
        if not self.tools:
            return False
        prompt = ROUTER.format(tools=", ".join(self.tools), request=user_input)
        reply = await self.llm.asend(self.llm.request(prompt, output_spec={
            "mode": "str", "fields": [{"name": "decision", "type": "string"}]}), ctx)
        word = reply.text.strip().lower()
        return not word.startswith("no")


def build_react(spec: dict[str, Any], kernel: "Kernel") -> ReActAgent:
    """The ``react`` agent-type factory used by ``kernel.agent(dict)``."""
    return ReActAgent.from_dict(spec, kernel)
