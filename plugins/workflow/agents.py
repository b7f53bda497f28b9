"""``AgentGenerator``: the agents of each node: names of ``AgentManager`` agents that fit it (their outputs cover
the node's, their required inputs are among its inputs), or generated ``customize`` specs repaired to fit
(``repair_spec``). A reply it cannot use raises ``GenerationError``, so ``WorkFlowGenerator`` asks again."""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any, Optional, Union

import attrs
import msgspec
from zagent.errors import ConfigError
from zagent import run_sync
from zagent.agentkit.toolrefs import provider_tools, reachable_tools

from . import prompts
from .errors import GenerationError
from .graph import WorkFlowGraph, WorkFlowNode
from .naming import agent_name, free_name, taken_names
from .planner import agent_spec, build_agent
from .planshape import MAX_PROMPT, MAX_TEXT, MAX_VALUES
from .promptfix import (_HEADING, _NOT_ID, _PLACEHOLDER, MAX_HEADINGS, closest_names,  # noqa: F401
                        match_output_sections, wrap_inputs)

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

_NAMED = {"name": "value", "type": "object", "fields": [{"name": "name"}, {"name": "description", "default": ""}]}

#: one generated agent, item schema of ``generated_agents`` (structured output is constrained by it)
GENERATED_AGENT = {"name": "agent", "type": "object", "fields": [
    {"name": "name", "default": "", "description": "CamelCase, ending in Agent"},
    {"name": "description", "default": ""},
    {"name": "inputs", "type": "array", "items": _NAMED, "default": []},
    {"name": "outputs", "type": "array", "items": _NAMED, "default": []},
    {"name": "prompt", "description": "how to do the sub-task, using every input as a {placeholder}"},
    {"name": "tool_names", "type": "array", "items": {"name": "item", "type": "string"}, "default": []},
]}

#: an example generated agent, shown to the model in the schema (inputs/outputs are replaced by the node's)
EXAMPLE_AGENT = {
    "name": "SummaryAgent", "description": "Summarises a text for the goal.",
    "inputs": [{"name": "text", "description": "the text to summarise"}],
    "outputs": [{"name": "summary", "description": "the summary"}],
    "prompt": "Summarise the following text in three sentences, keeping what matters for the goal.\n\n{text}",
    "tool_names": [],
}

#: the most agents the generator may give one node (a node calls each of them in turn)
MAX_NODE_AGENTS = 10

#: one agent of a node: the name of an existing agent, or the spec of a generated one
AgentRef = Union[str, dict[str, Any]]


@attrs.define(repr=False, eq=False, kw_only=True)
class AgentGenerator:
    """Selects or generates the agents of each node (see the module docstring).

    :param manager: the ``AgentManager`` whose agents may be selected (a new one when ``None``).
    :param tools: tool names generated agents may use (default: none, as for ``WorkFlowGenerator``;
        ``kernel.names("tools")`` offers every registered one).
    """

    kernel: "Kernel"
    llm: Any = None
    manager: Any = None
    tools: Optional[list[str]] = None
    agent: Any = None

    def __attrs_post_init__(self) -> None:
        if self.manager is None:
            from zagent.plugins.manager import AgentManager

            self.manager = AgentManager(kernel=self.kernel)
        if self.agent is None:
            spec = agent_spec(
                "AgentGenerator", prompts.GENERATOR_SYSTEM, prompts.GENERATOR_INSTRUCTION,
                prompts.GENERATOR_CONSTRAINTS,
                inputs=[{"name": "goal"}, {"name": "workflow", "default": ""}, {"name": "sub_task"},
                        {"name": "existing_agents"}, {"name": "tools"}],
                outputs=[{"name": "selected_agents", "type": "array", "default": [], "items": {"name": "item", "type": "string"},
                          "description": "names of existing agents to use"},
                         {"name": "generated_agents", "type": "array", "default": [], "examples": [[EXAMPLE_AGENT]],
                          "items": GENERATED_AGENT, "description": (
                             'new agents, each an object {"name", "description", "inputs": [{"name"}], '
                             '"outputs": [{"name"}], "prompt", "tool_names": []}')}],
                llm=self.llm)
            self.agent = build_agent(self.kernel, spec, self.llm)

    def tool_names(self) -> list[str]:
        return list(self.tools or ())  # none unless the app names them: a model may not pick the app's tools

    async def agenerate(self, goal: str, node: WorkFlowNode, graph: Optional[WorkFlowGraph] = None) -> list[AgentRef]:
        """The agents for ``node``: names of selected agents and repaired specs of generated ones.

        ``graph`` is the whole workflow; the generator is shown every sub-task (with
        what flows between them) so an agent fits its place, not only its own step.
        """
        result = await self.agent.aexecute(inputs={
            "goal": goal, "workflow": _workflow_text(graph, node) if graph is not None else "(not given)",
            "sub_task": _node_text(node), "existing_agents": self._existing_text(), "tools": self._tools_text()})
        out = result.output
        count = len(out.selected_agents or []) + len(out.generated_agents or [])
        if count > MAX_NODE_AGENTS:  # the node would call each of them in turn
            raise GenerationError(f"{count:,} agents were selected or generated for sub-task {node.name!r}, more than "
                                  f"{MAX_NODE_AGENTS}; give each sub-task one agent, or a few", raw=result.content)
        refs: list[AgentRef] = [self._selected(node, s, result.content) for s in (out.selected_agents or [])]
        for raw in out.generated_agents or []:
            refs.append(self._generated(node, msgspec.to_builtins(raw), result.content))
        if not refs:
            raise GenerationError(f"no agent was selected or generated for sub-task {node.name!r}", raw=result.content)
        return refs

    def generate(self, goal: str, node: WorkFlowNode, graph: Optional[WorkFlowGraph] = None) -> list[AgentRef]:
        """Sync twin of ``agenerate``."""
        return run_sync(self.agenerate(goal, node, graph))

    def _selected(self, node: WorkFlowNode, ref: Any, raw: str) -> str:
        name = ref.get("name") if isinstance(ref, dict) else ref
        if not isinstance(name, str) or name not in self.manager:  # the model's text: quoted, cut
            raise GenerationError(f"selected agent {str(name)[:64]!r} for {node.name!r} does not exist; existing "
                                  "agents: "
                                  f"{', '.join(self.manager.names) or 'none'}", raw=raw)
        info = next(d for d in self.manager.describe() if d["name"] == name)
        lacking = [o for o in node.output_names if "outputs" in info and o not in info["outputs"]]
        if lacking:
            raise GenerationError(f"selected agent {name!r} does not produce {', '.join(lacking)} needed by "
                                  f"{node.name!r}; select another agent or generate one", raw=raw)
        agent = self.manager.get_agent(name)
        given = self.tool_names()  # none when the app named none (``tools=None``), as for generated agents
        beyond = [t for t in reachable_tools(agent) if t not in given]
        if beyond:  # the user gave the generator these tools only: selecting an agent is no way around that
            raise GenerationError(f"selected agent {name!r} uses tool(s) {', '.join(beyond)}, which this workflow "
                                  f"may not use (tools given: {', '.join(given) or 'none'}); select "
                                  "another agent or generate one with those tools", raw=raw)
        hosted = provider_tools(agent)
        if hosted:  # tools its provider runs (an MCP connector, hosted search): never among the tools given
            raise GenerationError(f"selected agent {name!r} gives its model tools its provider runs "
                                  f"({'; '.join(hosted)}), which this workflow may not use; select another agent or "
                                  "generate one", raw=raw)
        needs = _required_inputs(agent)
        extra = [i for i in needs if i not in node.input_names]
        if extra:
            raise GenerationError(f"selected agent {name!r} needs {', '.join(extra)}, which {node.name!r} does not "
                                  "receive; select another agent or generate one", raw=raw)
        return name

    def _generated(self, node: WorkFlowNode, raw_spec: Any, raw: str) -> dict[str, Any]:
        spec = repair_spec(raw_spec, node, set(self.tool_names()), raw=raw)
        spec["name"] = free_name(spec["name"], taken_names(self.manager))  # never passes for a known agent
        try:
            build_agent(self.kernel, spec, self.llm)  # the same checks the run will make
        except ConfigError as exc:
            raise GenerationError(f"generated agent for {node.name!r} is not valid: {exc}", raw=raw) from None
        return spec

    def _existing_text(self) -> str:
        lines = [f"- {d['name']}: {d['description'] or '(no description)'} (inputs: {', '.join(d.get('inputs', [])) or '-'}; "
                 f"outputs: {', '.join(d.get('outputs', [])) or '-'})" for d in self.manager.describe()]
        return "\n".join(lines) or "(none)"

    def _tools_text(self) -> str:
        lines = []
        for name in self.tool_names():
            tool = self.kernel.find("tools", name)
            desc = (getattr(tool, "description", "") or "").strip().splitlines()
            lines.append(f"- {name}: {desc[0] if desc else ''}".rstrip(": "))
        return "\n".join(lines) or "(none)"

    async def agenerate_all(self, graph: WorkFlowGraph) -> WorkFlowGraph:
        """Fill ``agents`` of every node that has none (no retries here; ``WorkFlowGenerator`` retries)."""
        for node in graph.nodes:
            if not node.agents:
                node.agents = await self.agenerate(graph.goal, node, graph)
        return graph

    def generate_all(self, graph: WorkFlowGraph) -> WorkFlowGraph:
        """Sync twin of ``agenerate_all``."""
        return run_sync(self.agenerate_all(graph))


def _workflow_text(graph: WorkFlowGraph, current: WorkFlowNode) -> str:
    """One line per sub-task, ``name: description (inputs -> outputs)``, the current one marked ``>>``."""
    lines = []
    for node in graph.nodes:
        mark = ">> " if node.name == current.name else "   "
        lines.append(f"{mark}{node.name}: {node.description or '(no description)'} "
                     f"({', '.join(node.input_names) or '-'} -> {', '.join(node.output_names) or '-'})")
    return "\n".join(lines)


def _node_text(node: WorkFlowNode) -> str:
    data = {"name": node.name, "description": node.description,
            "inputs": [msgspec.to_builtins(f) for f in node.inputs],
            "outputs": [msgspec.to_builtins(f) for f in node.outputs]}
    return msgspec.json.format(msgspec.json.encode(data)).decode()


def _required_inputs(agent: Any) -> list[str]:
    action = getattr(agent, "action", None)
    if not callable(action):
        return []
    try:
        return list(action().required_inputs)
    except Exception:
        return []


# -- repairing generated specs -----------------------------------------------------


def repair_spec(raw_spec: Any, node: WorkFlowNode, tools: set[str], *, raw: str = "") -> dict[str, Any]:
    """A valid ``customize`` spec for ``node`` from a generated one: the node's inputs and outputs, every input
    used in the prompt, output headings renamed (``promptfix``); ``GenerationError`` when it has no prompt or names
    an unknown tool."""
    if not isinstance(raw_spec, dict):
        raise GenerationError(f"a generated agent must be an object, got {raw_spec!r}", raw=raw)
    prompt = raw_spec.get("prompt") or raw_spec.get("instruction")
    if not isinstance(prompt, str) or not prompt.strip():
        raise GenerationError(f"the generated agent for {node.name!r} has no prompt", raw=raw)
    too_long = [f"its {key} has {len(text):,} characters, more than {limit:,}" for key, text, limit in (
        ("prompt", prompt, MAX_PROMPT), ("description", raw_spec.get("description"), MAX_TEXT))
        if isinstance(text, str) and len(text) > limit]
    too_long += [f"it lists {len(values):,} {key}, more than {MAX_VALUES}" for key in ("inputs", "outputs")
                 if isinstance(values := raw_spec.get(key), list) and len(values) > MAX_VALUES]  # each is compared
    too_long += [f"the description of its {key[:-1]} {str(f.get('name'))[:64]!r} has {len(f['description']):,} "
                 f"characters, more than {MAX_TEXT:,}" for key in ("inputs", "outputs")
                 for f in _list_of(raw_spec.get(key))[:MAX_VALUES + 1]
                 if isinstance(f, dict) and isinstance(f.get("description"), str)
                 and len(f["description"]) > MAX_TEXT][:3]  # it becomes the field's description (``_fields``)
    heads = len(_HEADING.findall(prompt))  # each compared with every output (``promptfix``)
    too_long += [f"its prompt has {heads:,} headings, more than {MAX_HEADINGS}"] if heads > MAX_HEADINGS else []
    if too_long:  # sent on every call of the agent; a description is listed to the generator for later nodes
        raise GenerationError(f"the generated agent for {node.name!r} is too long: {'; '.join(too_long)}; keep "
                              "the prompt to the instructions the sub-task needs and list only the sub-task's "
                              "inputs and outputs", raw=raw)
    names = raw_spec.get("tool_names", raw_spec.get("tools", [])) or []
    unknown = [t for t in names if t not in tools]
    if unknown:  # the model's names, quoted and cut: a reply of 30 MB of names is no error message
        shown = ", ".join(str(t)[:64].encode("unicode_escape").decode("ascii") for t in unknown[:5]) + (
            f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else "")
        raise GenerationError(f"the generated agent for {node.name!r} uses unknown tool(s) {shown}; "
                              f"available tools: {', '.join(sorted(tools)) or 'none'}", raw=raw)
    prompt = use_every_input(prompt, node.input_names)
    prompt = match_output_sections(prompt, node.output_names, _names_of(raw_spec.get("outputs")))
    prompt = wrap_inputs(prompt, node.input_names)
    return {
        "type": "customize", "name": agent_name(raw_spec.get("name"), node.name),
        "description": str(raw_spec.get("description") or node.description),
        "prompt": prompt, "inputs": _fields(node.inputs, raw_spec.get("inputs")),
        "outputs": _fields(node.outputs, raw_spec.get("outputs")), "tools": list(names), "parse_mode": "title",
    }


def use_every_input(prompt: str, inputs: list[str]) -> str:
    """Rename near-miss placeholders to input names; append ``name: {name}`` for inputs still unused."""
    def fix(m: "re.Match[str]") -> str:
        name = m.group(1)
        if name in inputs:
            return m.group(0)
        close = difflib.get_close_matches(name, inputs, n=1, cutoff=0.6)
        return "{" + close[0] + "}" if close else "{{" + name + "}}"

    prompt = _PLACEHOLDER.sub(fix, prompt)
    used = {m.group(1) for m in _PLACEHOLDER.finditer(prompt)}
    missing = [i for i in inputs if i not in used]
    if missing:
        prompt = prompt.rstrip() + "\n\n" + "\n".join(f"{i}: {{{i}}}" for i in missing)
    return prompt


def _list_of(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names_of(fields: Any) -> list[str]:
    out = []
    for f in fields or []:
        name = f.get("name") if isinstance(f, dict) else f
        if isinstance(name, str):
            out.append(name)
    return out


def _fields(declared: list[Any], generated: Any) -> list[dict[str, Any]]:
    """The node's fields, with descriptions from the generated ones where the node has none."""
    by_name = {}
    for f in generated or []:
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            by_name[f["name"]] = f
    mapping = closest_names(list(by_name), [f.name for f in declared])
    described = {mapping[n]: by_name[n].get("description", "") for n in by_name if n in mapping}
    out = []
    for f in declared:
        d = msgspec.to_builtins(f)
        if not d.get("description") and described.get(f.name):
            d["description"] = str(described[f.name])
        out.append(d)
    return out
