"""``ReActAgent`` (agent type ``react``; ``ReActSpec`` is its file form): a chat agent over tools.

``chat(user_input, history=None, use_react=None)`` returns an ``AgentResponse``; with ``use_react=None`` one
short model call decides between a direct answer (always, without tools) and a run of the agent's own
``ReActLoop``. Turns are kept in short-term memory, so later chats see earlier ones.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar, Iterator, Optional, Sequence, Union

import attrs
import msgspec
from zagent.providerkit.credentials import spec_options
from zagent.speckit.paths import check_spec_path, reserving
from zagent.errors import ConfigError
from zagent.agentkit.approvals import resolve_approver
from zagent.speckit.rails import check_rails, check_user_data_switches
from zagent.speckit.specs import convert_spec
from zagent.plugins.actions.agent import Agent
from zagent.plugins.actions.chat import ROUTER, AgentResponse, response_of  # noqa: F401 (re-exported)
from zagent.agentkit.toolloop import check_tool_format
from zagent.agentkit.toolrefs import resolve_tool_refs
from zagent.types import Message

from .loop import SYSTEM_PROMPT, ReActLoop, check_on_error

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext
    from zagent.agentkit.streaming import StreamEvent

class ReActSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The declarative form of a ``ReActAgent``."""

    name: str
    type: str = "react"
    description: str = ""
    system_prompt: str = SYSTEM_PROMPT
    tools: list[str] = []
    agents: list[Any] = []
    """Agents offered as tools: agent files (relative to the spec's folder) or inline specs."""
    handoffs: list[Any] = []
    """Agents this one may hand the conversation over to (``handoff.Handoffs``): files or inline specs."""
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
    memory_chars: Optional[int] = None
    trajectory_path: Optional[str] = None
    live_trajectory_path: Optional[str] = None
    """A JSONL file every step is appended to as it happens (a killed run keeps its steps)."""
    tool_format: str = "tool_call"
    """The text tool-call format (a registered parser) for models whose profile says native_tools=False."""
    checkpoints: Optional[str] = None
    """An SQLite file to checkpoint every run to (``*.db``/``*.sqlite`` unless the spec is trusted)."""

    def __repr__(self) -> str:  # an own api_key in llm_config (or an inline agent's) is never shown
        from zagent.speckit.specs import spec_repr

        return spec_repr(self)


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
    live_trajectory_path: Optional[str] = None
    checkpoints: Any = None
    tool_format: str = "tool_call"
    handoffs: Sequence[Any] = ()
    """Agents a chat may be handed over to (``zagent.plugins.react.handoff``): the answer may come from one."""

    def run_config(self) -> dict[str, Any]:
        """The ``agent_config`` each run's context gets: the agent's plugin settings
        (``Agent.agent_config``, e.g. ``{"skills": True}``) plus ``"rails"``: ``rails``, or, left empty, the rails
        given as ``agent_config["rails"]`` (where declared agents take them: never dropped unsaid)."""
        given = self.agent_config.get("rails")
        if given and self.rails and given != self.rails:
            raise ConfigError(f"react agent {self.name!r} has rails in both rails= (the spec's 'rails') and "
                              "agent_config['rails'], which differ; give them in one place (rails=)")
        return {**self.agent_config, "rails": dict(self.rails or given or {})}

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        check_on_error(self.on_error, f"react agent {self.name!r}")  # now, not at the first chat
        for name in self.tools:
            self.kernel.tool(name)  # unknown tools fail now, with the list of registered ones
        if self.system_prompt is None:
            self.system_prompt = SYSTEM_PROMPT

    @classmethod
    def from_dict(cls, data: dict[str, Any], kernel: "Kernel") -> "ReActAgent":
        spec = convert_spec(data, ReActSpec, "react agent spec")
        fields = msgspec.structs.asdict(spec)
        fields.pop("type")
        check_rails(fields["rails"])  # wrong types are a ConfigError now, not a rail failing at the first call
        check_user_data_switches(fields["agent_config"], kernel.config, spec.name)
        fields["rails"] = resolve_approver(fields["rails"], kernel)
        fields["tools"] = resolve_tool_refs(kernel, fields["tools"], key="tool")  # names, toolset:, import paths
        fields["pinned_tools"] = resolve_tool_refs(kernel, fields["pinned_tools"], key="pinned tool")
        checkpoints = check_spec_path(spec.checkpoints, "checkpoints", (".db", ".sqlite", ".sqlite3"), kernel=kernel)
        agents = fields.pop("agents")
        # its agents run under its run id: one checkpointing into its store would break its run (never resumes)
        with reserving({checkpoints: f"the checkpoint file of agent {spec.name!r}"}):
            if agents:  # each an agent file or inline spec, offered as a tool (actions plugin's astool)
                from zagent.plugins.actions.astool import resolve_agent_refs

                fields["tools"] += [n for n in resolve_agent_refs(kernel, agents) if n not in fields["tools"]]
            if fields["handoffs"]:
                from zagent.plugins.actions.astool import load_agent_refs

                fields["handoffs"] = load_agent_refs(kernel, fields["handoffs"], key="handoffs")
        # relative paths lie next to the spec file (not the cwd); the checked path is the one used
        fields["trajectory_path"] = check_spec_path(spec.trajectory_path, "trajectory_path", (".jsonl",), kernel=kernel)
        fields["live_trajectory_path"] = check_spec_path(spec.live_trajectory_path, "live_trajectory_path",
                                                         (".jsonl",), kernel=kernel)
        from .trajectory import check_trajectory_file

        for key in ("trajectory_path", "live_trajectory_path"):  # never the user's cases, inputs or notes file
            check_trajectory_file(fields[key], key)
        check_tool_format(kernel, spec.tool_format, f"agent {spec.name!r}")
        made = [] if checkpoints is None else [n for n in (checkpoints, *(checkpoints + side for side in (
            "-wal", "-shm", "-journal"))) if not os.path.lexists(n)]  # files the store may make (removed if refused)
        if checkpoints is not None:
            fields["checkpoints"] = kernel.memory("checkpoints", path=checkpoints)
        try:
            with spec_options(f"agent {spec.name!r}", kernel):  # the user's key goes only to the user's base URL
                return cls(kernel=kernel, **fields)
        except BaseException:  # a refused spec leaves no open store, nor a store file it just made
            if checkpoints is not None:
                fields["checkpoints"].close()
                for name in made if checkpoints in made else ():  # only when the store file itself was new
                    if os.path.isfile(name) and not os.path.islink(name):
                        os.unlink(name)
            raise

    def loop(self) -> ReActLoop:
        """A new ``ReActLoop`` configured like this agent."""
        return ReActLoop(
            kernel=self.kernel, llm=self.llm, tools=list(self.tools), system_prompt=self.system_prompt or SYSTEM_PROMPT,
            max_iterations=self.max_iterations, max_tool_call_concurrency=self.max_tool_call_concurrency,
            tool_limit=self.tool_limit, pinned_tools=list(self.pinned_tools),
            max_context_messages=self.max_context_messages, max_context_tokens=self.max_context_tokens,
            on_error=self.on_error, checkpoints=self.checkpoints, trajectory_path=self.trajectory_path,
            live_trajectory_path=self.live_trajectory_path,
            tool_format=self.tool_format, agent=self.name, agent_config=self.run_config(), deps=self.deps,
            guardrails=dict(self.guardrails))

    #: group chats speak to a ReAct agent through ``achat`` (with the history as messages)
    speaks_by_chat: ClassVar[bool] = True

    def chat_tools(self) -> list[str]:
        if self.handoffs:  # a chat that may hand over needs the loop (its transfer tools), not a direct answer
            from .handoff import transfer_tool_name

            return [*self.tools, *(transfer_tool_name(h.name) for h in self.handoffs)]
        return list(self.tools)

    def chat_system_prompt(self) -> str:
        return self.system_prompt or SYSTEM_PROMPT

    def astream(self, task: Optional[Union[str, Message]] = None, **inputs: Any) -> AsyncIterator["StreamEvent"]:
        """A ReAct run on ``task`` (or ``inputs["task"]``; text or a user ``Message`` with images) as
        ``StreamEvent``s: text deltas, step and tool events, the ``AgentResponse`` last
        (``zagent.agentkit.streaming``)."""
        from zagent.agentkit.streaming import astream_run

        text = task if task is not None else inputs.get("task")
        if not isinstance(text, (str, Message)):
            raise ConfigError(f"react agent {self.name!r}: astream needs the task, e.g. astream('...')")
        return astream_run(self.kernel, lambda: self.achat(text, use_react=True))

    def stream(self, task: Optional[Union[str, Message]] = None, **inputs: Any) -> Iterator["StreamEvent"]:
        """Sync twin of ``astream``."""
        from zagent.agentkit.streaming import sync_stream

        return sync_stream(self.astream(task, **inputs))

    async def _react(self, user_input: Union[str, Message], past: list[Message], ctx: "RunContext[Any]"
                     ) -> AgentResponse:
        if self.handoffs:
            from .handoff import chat_with_handoffs

            return await chat_with_handoffs(self, user_input, past, ctx)
        from zagent.plugins.actions.asked import arun_asking  # in a node or group-chat turn: approvals pause the run

        return response_of(await arun_asking(self.loop(), user_input, past, ctx, owned=True))


def build_react(spec: dict[str, Any], kernel: "Kernel") -> ReActAgent:
    """The ``react`` agent-type factory used by ``kernel.agent(dict)``."""
    return ReActAgent.from_dict(spec, kernel)
