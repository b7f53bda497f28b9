"""How a workflow node calls its agents in order (``call_step``), reads their declared outputs (``node_outputs``)
and packs what a remote worker needs to run it (``node_payload``); docs/workflows.md."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

import msgspec
from zagent.agentkit.interrupts import bind, run_in_context
from zagent.errors import ConfigError, ParseError
from zagent.agentkit.units import shipped_trust
from zagent.speckit import spec_file, trusting
from zagent.types import Usage

from .errors import WorkFlowError

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

    from .graph import WorkFlowNode

CHAT_OUTPUT = "answer"  # the output a chat agent's reply goes to when the node declares none
_encode = msgspec.json.Encoder(enc_hook=repr).encode


async def call_step(agent: Any, agent_name: str, node: "WorkFlowNode", values: dict[str, Any], produced: dict[str, Any],
                    kernel: "Kernel", run_id: str, share: Any = None, deps: Any = None) -> Usage:
    """Run one of a node's agents on the values it reads (earlier agents' outputs first); add what it gives
    to ``produced``; return the tokens it spent."""
    wanted = node.input_names + agent_inputs(agent)
    if chats(agent):
        wanted += [k for k in produced if k not in wanted]  # a chat agent reads what the agents before it said
    inputs = {k: produced[k] if k in produced else values[k] for k in wanted
              if k in produced or values.get(k) is not None}
    outputs, usage = await call_agent(agent, inputs, kernel, run_id, agent_name, node, share, deps)
    produced.update(outputs)
    return usage


def node_outputs(node: "WorkFlowNode", produced: dict[str, Any]) -> dict[str, Any]:
    """The node's declared outputs from what its agents produced (all of it when it declares none)."""
    declared = node.output_names
    if not declared:
        return produced
    missing = [o for o in declared if produced.get(o) is None and _is_required(node, o)]
    if missing:
        raise WorkFlowError(f"node {node.name!r}: its agents gave no value for output(s) {', '.join(missing)} "
                            f"(they gave: {', '.join(produced) or 'nothing'})")
    return {o: produced[o] for o in declared if o in produced}


def node_payload(node: "WorkFlowNode", order: list[str], agents: dict[str, Any], values: dict[str, Any],
                 run_id: str, answers: Any = (), vouched: Any = None, passes: int = 0,
                 questions: Any = None, store: str = "", origins: Any = None) -> dict[str, Any]:
    """What a remote worker needs to run ``node``: the node, its agents' specs (in call order) and the values
    they read (``store``: the identity of the run's checkpoint store, which a yes is bound to); an agent without a
    spec cannot travel (``ConfigError`` naming it). ``origins``: the trust and file each stored agent was built
    with (``AgentManager.origin_of``), shipped as its own (``agent_trust``), never the workflow file's."""
    specs = []
    own: dict[str, Any] = {}
    wanted = set(node.input_names)
    for agent_name in order:
        agent = agents[agent_name]
        if getattr(agent, "spec", None) is None or not callable(getattr(agent, "to_dict", None)):
            raise ConfigError(f"agent {agent_name!r} of node {node.name!r} is a Python object without a spec, so it "
                              "cannot run on a remote executor; declare it as a spec or use executor 'local'")
        specs.append([agent_name, agent.to_dict(), getattr(agent, "memory_key", None)])  # the driver's namespace
        wanted.update(agent_inputs(agent))
        origin = (origins or {}).get(agent_name)
        if origin is not None:  # a stored agent's modules and files are its store's, never the downloaded file's
            with trusting(origin[0]), spec_file(origin[1]):  # a .db record: None, no file of its own
                own[agent_name] = shipped_trust()
    return {"node": msgspec.to_builtins(msgspec.structs.replace(node, agents=[])), "agents": specs, "run_id": run_id,
            "trust": shipped_trust(), **({"agent_trust": own} if own else {}), "answers": list(answers),
            "vouched": None if vouched is None else [[i, q] for i, q in sorted(dict(vouched).items())],
            "passes": passes, "questions": questions, "store": store,  # questions: asked at each position
            "values": {k: values[k] for k in wanted if values.get(k) is not None}}


def chats(agent: Any) -> bool:
    """A chat agent: it takes a task through ``achat`` (``ReActAgent``), not named inputs through an action."""
    return callable(getattr(agent, "achat", None)) and bool(getattr(agent, "speaks_by_chat", False))


async def call_agent(agent: Any, inputs: dict[str, Any], kernel: "Kernel", run_id: str, agent_name: str,
                     node: "WorkFlowNode", share: Any = None, deps: Any = None) -> tuple[dict[str, Any], Usage]:
    """Run one agent by its kind: ``aexecute`` under the run's ``RunContext``, a chat agent's ``achat`` on
    ``chat_task``, or a callable's ``fn(**inputs)`` (a sync one in the kernel's tool threads) returning a dict, a
    ``to_dict()`` object or a msgspec Struct; its outputs and the tokens it spent."""
    if chats(agent):
        return await _chat(agent, inputs, kernel, run_id, agent_name, node, share, deps)
    execute = getattr(agent, "aexecute", None)
    ctx = None
    if execute is not None:
        ctx = bind(kernel.context(run_id=run_id, agent=agent_name, metadata={"node": node.name}, share=share,
                                  deps=deps))
        result = await execute(inputs=inputs, ctx=ctx)
    elif callable(agent):
        if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(getattr(agent, "__call__", None)):
            result = await agent(**inputs)
        else:  # a plain function may block: it runs in the kernel's tool threads, so independent nodes overlap
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(kernel.tool_executor(), run_in_context(agent, **inputs))
        if hasattr(result, "__await__"):
            result = await result
    else:
        raise WorkFlowError(f"agent {agent_name!r} of node {node.name!r} is neither an Agent nor callable")
    return _as_dict(result, agent_name), (ctx.usage if ctx is not None else Usage())


async def _chat(agent: Any, inputs: dict[str, Any], kernel: "Kernel", run_id: str, agent_name: str, node: "WorkFlowNode",
                share: Any, deps: Any) -> tuple[dict[str, Any], Usage]:
    ctx = bind(kernel.context(run_id=run_id, agent=agent_name, metadata={"node": node.name}, share=share, deps=deps))
    tools = agent.chat_tools() if callable(getattr(agent, "chat_tools", None)) else getattr(agent, "tools", ())
    response = await agent.achat(chat_task(node, inputs, kernel), history=[], use_react=bool(tools), ctx=ctx)
    raw = (getattr(response, "metadata", None) or {}).get("usage") or {}
    usage = msgspec.convert(raw, Usage) if isinstance(raw, dict) else Usage()
    return chat_outputs(node, str(response.content), kernel, agent_name), usage


def chat_task(node: "WorkFlowNode", inputs: dict[str, Any], kernel: "Kernel") -> str:
    """The task a chat agent gets for ``node``: ``inputs["task"]`` when that is the one value, else the node's
    description and the values as ``name: value`` lines (and the json parser's format instructions when the node
    declares several outputs)."""
    if set(inputs) == {"task"} and isinstance(inputs["task"], str) and len(node.outputs) <= 1:
        return inputs["task"]
    lines = [node.description.strip() or f"Do the workflow step {node.name!r}."]
    if inputs:
        lines += ["", "Inputs:"]
        lines += [f"{k}: {v if isinstance(v, str) else _encode(v).decode()}" for k, v in inputs.items()]
    if len(node.outputs) > 1:
        lines += ["", kernel.parser("json").instructions(node.outputs)]
    return "\n".join(lines)


def chat_outputs(node: "WorkFlowNode", content: str, kernel: "Kernel", agent_name: str) -> dict[str, Any]:
    """A chat agent's reply as the node's outputs: its one output, ``answer``, or several read as JSON."""
    if not node.outputs:
        return {CHAT_OUTPUT: content}
    if len(node.outputs) == 1:
        return {node.outputs[0].name: content}
    try:
        outputs: dict[str, Any] = kernel.parser("json").parse(content, node.outputs)  # a parser's parse: a dict
    except ParseError as exc:
        raise WorkFlowError(f"node {node.name!r}: chat agent {agent_name!r} replied without the JSON object of "
                            f"outputs {', '.join(node.output_names)} ({exc})") from exc
    return outputs


def agent_inputs(agent: Any) -> list[str]:
    """The input fields of a declared agent's default action (none for other kinds)."""
    action = getattr(agent, "action", None)
    if action is None or not callable(action) or chats(agent):
        return []
    try:
        return list(action().input_spec.names)
    except Exception:
        return []


def _as_dict(result: Any, agent_name: str) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    to_dict = getattr(result, "to_dict", None)
    if to_dict is not None:
        outputs: dict[str, Any] = to_dict()  # the agent's own to_dict(), a dict by its contract
        return outputs
    if isinstance(result, msgspec.Struct):
        fields: dict[str, Any] = msgspec.to_builtins(result)  # a Struct's builtins: a dict by field name
        return fields
    raise WorkFlowError(f"agent {agent_name!r} returned {type(result).__name__}; return a dict of outputs by name")


def _is_required(node: "WorkFlowNode", name: str) -> bool:
    for f in node.outputs:
        if f.name == name:
            return f.required and f.default is None
    return True
