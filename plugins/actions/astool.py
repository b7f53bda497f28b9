"""Agents as tools: ``Agent.as_tool()`` (``agent_tool``) and the ``"agents": [...]`` key of agent files.

The called agent runs inside the caller's run (its run id, stash and usage) under the caller's rails as well as its
own, at most ``MAX_AGENT_DEPTH`` deep; agent files named must lie in the spec's folder unless trusted. docs/agents.md.
"""

from __future__ import annotations

import contextvars
import os
import re
import time
from typing import TYPE_CHECKING, Any, Iterable, Optional

import msgspec
from zagent.errors import ConfigError, ToolError
from zagent.agentkit.runkeys import PENDING_APPROVAL
from zagent.agentkit.toolrefs import agent_tool_names, remember_origins, spec_origins
from zagent.speckit import current_trust
from zagent.speckit.trust import for_named_file
from zagent.speckit.paths import check_path_way, check_spec_path, check_users_data
from zagent import StashKey, Tool
from zagent.agentkit.counters import RunCounter

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

__all__ = ["MAX_AGENT_DEPTH", "agent_tool", "load_agent_refs", "resolve_agent_refs", "outer_config"]

#: how deep agents may call agents (an agent file naming itself stops here, not at Python's recursion limit)
MAX_AGENT_DEPTH = 5
#: how deep agent files may name agent files (a long chain stops here, not at Python's recursion limit)
MAX_AGENT_FILE_DEPTH = 16
#: agents called as tools in one run, at any depth (config ``max_agent_calls``): 64 calls a reply, 20 steps and 5
#: levels multiply into ~10**15 runs of a model that always calls its helpers
MAX_AGENT_CALLS = 256
#: agents one kernel holds as tools (agent files a spec names register theirs: specs loaded for ever add them)
MAX_AGENT_TOOLS = 1024
_CTX = "_zagent_caller_ctx"
AGENT_CALLS: "StashKey[RunCounter]" = StashKey("zagent.actions.agent_calls")  # per run (``ctx.shared``)
_depth: "contextvars.ContextVar[int]" = contextvars.ContextVar("zagent_agent_depth", default=0)
_loading: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_agent_files", default=())
_BAD = re.compile(r"[^A-Za-z0-9_.\-]")
_encode = msgspec.json.Encoder(enc_hook=repr).encode
_CANNOT_WAIT = ("agent {name!r} stopped: one of its tool calls needs a human approval, which an agent called as a "
                "tool cannot wait for; configure an approver that answers at once (rails 'approver'), or approve "
                "the tool for this agent")


def outer_config(agent_config: dict[str, Any], caller: "RunContext[Any]") -> dict[str, Any]:
    """``agent_config`` for an agent called inside ``caller``'s run: the caller's rails (and its own callers')
    added as ``outer_rails``, outermost first."""
    config = dict(agent_config)
    theirs = caller.agent_config or {}
    outer = list(theirs.get("outer_rails") or ())
    names = list(theirs.get("outer_agents") or ())[:len(outer)]
    names += ["?"] * (len(outer) - len(names))
    if theirs.get("rails"):
        outer.append(theirs["rails"])
        names.append(caller.agent or "?")  # whose rules they are: a caller's tool_rpm window is the caller's
    config.pop("outer_rails", None)  # only callers set them: an agent's own file cannot
    config.pop("outer_agents", None)
    if outer:
        config["outer_rails"], config["outer_agents"] = outer, names
    return config


def agent_tool(agent: Any, *, name: Optional[str] = None, description: Optional[str] = None,
               timeout: Optional[float] = None, register: bool = True) -> Tool:
    """``agent`` as a ``Tool``, registered on its kernel unless ``register=False``: a declared agent's takes its
    inputs and answers its outputs (one as text, several as a JSON object), a chat agent's takes ``task``."""
    tool_name = name or _BAD.sub("_", agent.name)
    chat = bool(getattr(agent, "speaks_by_chat", False))
    if chat:
        parameters: dict[str, Any] = {"type": "object", "required": ["task"], "additionalProperties": False,
                                      "properties": {"task": {"type": "string",
                                                              "description": f"what to ask {agent.name}"}}}
    else:
        from zagent.agentkit import fields as zfields

        parameters = zfields.json_schema(agent.action().input_spec)

    async def handler(**kwargs: Any) -> str:
        caller: "RunContext[Any]" = kwargs.pop(_CTX)
        depth = _depth.get()
        if depth >= MAX_AGENT_DEPTH:
            raise ToolError(f"agent {agent.name!r} was not called: agents may call agents at most "
                            f"{MAX_AGENT_DEPTH} deep (an agent file that names itself?)")
        most = caller.kernel.config.get("max_agent_calls") or MAX_AGENT_CALLS
        if not caller.shared.get_or_create(AGENT_CALLS, RunCounter).take("agents", most):
            raise ToolError(f"agent {agent.name!r} was not called: this run already called agents as tools {most} "
                            f"times (at most {most} in one run, at any depth: Kernel config 'max_agent_calls'); "
                            "answer with what you have")
        token = _depth.set(depth + 1)
        try:
            return await (_chat(agent, caller, kwargs) if chat else _declared(agent, caller, kwargs))
        finally:
            _depth.reset(token)

    tool = Tool(name=tool_name, description=description or agent.description or f"Ask the agent {agent.name}.",
                handler=handler, parameters=parameters, ctx_param=_CTX, is_async=True, timeout=timeout,
                toolset="agents", metadata={"agent": agent.name, "definition": _definition(agent)})
    if not register:
        return tool
    kernel: "Kernel" = agent.kernel
    existing = kernel.find("tools", tool_name)
    if existing is not None:
        if isinstance(existing, Tool) and existing.metadata.get("agent_object") is agent:  # (tools are Tools)
            return existing
        raise ConfigError(f"agent {agent.name!r} cannot be offered as tool {tool_name!r}: a tool of that name is "
                          "registered already; pass as_tool(name=...)")
    held = len([n for n in kernel.names("tools") if getattr(kernel.find("tools", n), "toolset", None) == "agents"])
    if held >= MAX_AGENT_TOOLS:  # each holds its agent (memory, stores) for the kernel's life, as models do
        raise ConfigError(f"agent {agent.name!r} cannot be offered as a tool: this kernel already holds {held} "
                          f"(at most {MAX_AGENT_TOOLS} agents offered as tools); drop the ones no longer used "
                          "(k.remove_tool(name)), reuse agent names, or use a new kernel")
    tool.metadata["agent_object"] = agent
    registered = kernel.add_tool(tool)
    # another spec naming this agent's tool reaches the code its tools import: it must be trusted for it too
    remember_origins(kernel, registered, spec_origins(kernel, agent_tool_names(agent)))
    return registered


def _definition(agent: Any) -> str:
    """A digest of what ``agent`` does when called (its declaration, tools, prompt and settings), part of its tool's
    identity (``approvals.tool_identity``): a person's yes to calling it covers this agent, not another definition
    loaded under its name by the process that resumes the run (an agent file edited after the question)."""
    import hashlib

    def named(value: Any) -> str:  # code by where it lives (an approver function), never by its address
        return f"{getattr(value, '__module__', '')}:{getattr(value, '__qualname__', type(value).__qualname__)}"

    config = getattr(agent, "run_config", None)
    parts = {"spec": getattr(agent, "spec", None), "tools": list(getattr(agent, "tools", None) or ()),
             "prompt": getattr(agent, "system_prompt", None), "description": getattr(agent, "description", None),
             "config": config() if callable(config) else None,
             "handoffs": [getattr(h, "name", str(h)) for h in getattr(agent, "handoffs", None) or ()]}
    try:
        return hashlib.sha256(msgspec.json.encode(parts, enc_hook=named, order="sorted")).hexdigest()[:32]
    except (TypeError, ValueError, msgspec.EncodeError):  # settings JSON cannot sort (mixed keys): its name only
        return ""


async def _declared(agent: Any, caller: "RunContext[Any]", inputs: dict[str, Any]) -> str:
    from zagent.agentkit.inputs import check_inputs

    check_inputs(inputs)
    action = agent.action()
    unknown = sorted(set(inputs) - set(action.input_spec.names))
    missing = action.missing_inputs(inputs)
    if unknown or missing:  # never guessed from memory: the caller sends what the schema asks
        raise ToolError(f"agent {agent.name!r} takes {', '.join(action.input_spec.names) or 'no inputs'}"
                        + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                        + (f"; missing: {', '.join(missing)}" if missing else ""))
    ctx = caller.for_agent(agent.name, outer_config(agent.agent_config, caller))
    from .asked import called_by

    called_by(ctx, caller)  # its approval questions name its callers (and bind to them)
    if getattr(agent, "deps", None) is not None:  # its own deps, else the caller's (for_agent carries them)
        ctx.deps = agent.deps
    events = agent.kernel.has_impls("zagent_event")
    result = await agent._framed(action, None, dict(inputs), ctx, time.perf_counter(), events, caller)
    if ctx.frame.get(PENDING_APPROVAL):  # held for a "later" no one can give here: said, not dropped with its answer
        raise ToolError(_CANNOT_WAIT.format(name=agent.name))
    values = result.to_dict()
    if len(values) == 1:
        (value,) = values.values()
        return value if isinstance(value, str) else _encode(value).decode()
    return _encode(values).decode()


async def _chat(agent: Any, caller: "RunContext[Any]", arguments: dict[str, Any]) -> str:
    task = arguments.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ToolError(f"agent {agent.name!r} needs a non-empty 'task' string")
    import asyncio

    ctx = caller.for_agent(agent.name, outer_config(agent.run_config(), caller))
    if getattr(agent, "deps", None) is not None:
        ctx.deps = agent.deps
    loop = agent.loop()
    from zagent.agentkit.runs import asking_scope

    from .asked import arun_asking, called_by

    called_by(ctx, caller)  # its approval questions name its callers (and bind to them)

    if asking_scope(ctx) is not None:  # in a workflow node or group-chat turn: an approval pauses the whole run
        try:
            asked = await arun_asking(loop, task, None, ctx)
        finally:
            caller.add_usage(ctx.usage)
        return str(asked.content)
    run = asyncio.ensure_future(loop.arun(task, ctx=ctx))
    try:
        while not run.done():  # a loop paused for a human would wait for ever inside this tool call
            await asyncio.wait({run}, timeout=0.05)
            if not run.done() and loop.status == "paused":
                loop.abort()
                await asyncio.gather(run, return_exceptions=True)
                raise ToolError(_CANNOT_WAIT.format(name=agent.name))
        result = run.result()
    finally:
        if not run.done():
            run.cancel()
        caller.add_usage(ctx.usage)
    return str(result.content)


def load_agent_refs(kernel: "Kernel", refs: Iterable[Any], *, base_dir: Optional[str] = None,
                    key: str = "agents") -> list[Any]:
    """The agents a spec's list of agent files (inside the spec's folder) or inline specs names."""
    agents = []
    for i, ref in enumerate(refs):
        where = f"{key}[{i}]"
        if isinstance(ref, dict):
            agents.append(kernel.agent(ref))
        elif isinstance(ref, str):
            agents.append(_load_file(kernel, ref, where, base_dir))
        else:
            raise ConfigError(f"{where} must be an agent file path or an inline agent spec, got {type(ref).__name__}")
    return agents


def resolve_agent_refs(kernel: "Kernel", refs: Iterable[Any], *, base_dir: Optional[str] = None) -> list[str]:
    """The tool names of the agents an agent file's ``"agents"`` list names (files or inline specs)."""
    names: list[str] = []
    for agent in load_agent_refs(kernel, refs, base_dir=base_dir):
        tool = agent_tool(agent)
        if tool.name not in names:
            names.append(tool.name)
    return names


def _load_file(kernel: "Kernel", ref: str, key: str, base_dir: Optional[str]) -> Any:
    """The agent of file ``ref``: a .json/.yaml/.yml file inside the naming spec's folder (any path when the
    spec is trusted), never one already being loaded (a file naming itself)."""
    from zagent.speckit import current_spec_file

    if "\x00" in ref:  # os.path would raise a bare ValueError
        raise ConfigError(f"{key} {ref!r} is not a usable file name (it holds a NUL character); name an agent file")
    trust = current_trust()
    spec_path = current_spec_file()  # a spec read from a file names files next to itself, never the cwd's
    folder = base_dir or (trust.folders[0] if trust.folders else None) or (
        os.path.dirname(spec_path) if spec_path else os.getcwd())
    path = os.path.realpath(os.path.join(folder, ref))
    if not base_dir:  # a file's own folder is checked below; else the one check for spec paths (zagent.speckit.paths)
        check_spec_path(path, key, (".json", ".yaml", ".yml"), kernel=kernel, reads=True)
    elif not ref.lower().endswith((".json", ".yaml", ".yml")):
        raise ConfigError(f"{key} {ref!r} in the spec is refused: it must name an agent file (.json, .yaml or .yml)")
    if not trust.everything:
        root = os.path.realpath(folder)
        if os.path.commonpath([root, path]) != root:
            raise ConfigError(f"{key} {ref!r} is outside the spec's folder {root}: a spec file may only name agent "
                              "files in its own folder; move the file, or trust the spec (trust=True, --trust)")
        if base_dir:  # as check_spec_path does: no folder others can write on the way, no hard link, no file
            check_path_way(path, root, key, ref)  # of zagent's own data (a spec in the home folder)
            check_users_data(path, key, ref, kernel)
    if path in _loading.get():
        raise ConfigError(f"{key} {ref!r}: agent files name each other in a loop ({' -> '.join(_loading.get())})")
    if len(_loading.get()) >= MAX_AGENT_FILE_DEPTH:
        raise ConfigError(f"{key} {ref!r}: agent files name agent files more than {MAX_AGENT_FILE_DEPTH} deep "
                          f"({' -> '.join(os.path.basename(p) for p in _loading.get()[:4])} -> ...); an agent calls "
                          f"agents at most {MAX_AGENT_DEPTH} deep, so flatten the chain")
    if not os.path.isfile(path):
        raise ConfigError(f"{key} {ref!r}: no such agent file ({path})")
    from zagent.speckit import load_spec_file, spec_file, Trust, trusting

    token = _loading.set((*_loading.get(), path))
    try:
        spec = load_spec_file(path)
        here = os.path.dirname(path)  # import trust for the file's folder only if that folder was trusted already:
        trusted_here = any(here == f or here.startswith(f.rstrip(os.sep) + os.sep)  # a data folder is no code folder
                           for f in map(os.path.realpath, trust.folders))
        inner = Trust(everything=trust.everything, folders=(here,) if trusted_here else (), dry=trust.dry) \
            if trust.folders or trust.everything else trust
        with trusting(for_named_file(path, inner)), spec_file(path):  # its own identity: its relative paths lie next to it
            if spec.get("type", "customize") == "customize":
                from .customize import CustomizeAgent

                return CustomizeAgent.from_dict(spec, kernel, base_dir=os.path.dirname(path))
            return kernel.agent(spec)
    finally:
        _loading.reset(token)
