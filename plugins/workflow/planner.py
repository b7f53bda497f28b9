"""``TaskPlanner``: a goal (with an earlier plan and a suggestion) -> a checked ``Plan`` of sub-tasks, from a JSON-mode
``CustomizeAgent``. A reply that breaks a planning rule (the first sub-task takes only ``goal``, later inputs are
``goal`` or earlier outputs, names and outputs unique) raises ``GenerationError`` naming each violation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import attrs
import msgspec
from zagent import run_sync
from zagent.types import Field

from . import prompts
from .errors import GenerationError
from .planshape import shape_problems

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


#: the most sub-tasks a plan may have (each is a node whose agents are generated and run: model calls)
MAX_SUB_TASKS = 100

SUB_TASKS = ('the sub-tasks in order, each an object {"name", "description", "reason", '
             '"inputs": [{"name", "type", "description"}], "outputs": [{"name", "type", "description"}]}')

# values stay an untyped array: a model may list plain names as well as {"name", "type", "description"} objects
_VALUES = 'values, each {"name": snake_case, "type": "string", "description": ...} (or just the name)'

#: an example plan that follows every planning rule; shown to the model as the schema's example
EXAMPLE_PLAN = [
    {"name": "collect_facts", "description": "List the key facts the goal needs.",
     "reason": "Everything later builds on the facts.",
     "inputs": [{"name": "goal", "type": "string", "description": "the goal"}],
     "outputs": [{"name": "facts", "type": "string", "description": "the key facts, one per line"}]},
    {"name": "write_draft", "description": "Write a first draft from the facts.",
     "reason": "Turn the facts into prose.",
     "inputs": [{"name": "goal", "type": "string", "description": "the goal"},
                {"name": "facts", "type": "string", "description": "the key facts"}],
     "outputs": [{"name": "draft", "type": "string", "description": "the draft"}]},
    {"name": "polish", "description": "Check the draft against the goal and give the final text.",
     "reason": "A last pass catches mistakes.",
     "inputs": [{"name": "draft", "type": "string", "description": "the draft"}],
     "outputs": [{"name": "final_text", "type": "string", "description": "the finished text"}]},
]

#: the planner's output field: an array of sub-task objects, so structured output is constrained item by item
SUB_TASKS_FIELD = {
    "name": "sub_tasks", "type": "array", "description": SUB_TASKS, "examples": [EXAMPLE_PLAN],
    "items": {"name": "sub_task", "type": "object", "fields": [
        {"name": "name", "description": "a unique snake_case name"},
        {"name": "description", "default": "", "description": "what the sub-task does"},
        {"name": "reason", "default": "", "description": "why it is needed"},
        {"name": "inputs", "type": "array", "default": [], "description": _VALUES},
        {"name": "outputs", "type": "array", "default": [], "description": _VALUES},
    ]},
}


class SubTask(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One planned step: becomes one workflow node."""

    name: str
    description: str = ""
    reason: str = ""
    inputs: list[Field] = []
    outputs: list[Field] = []


class Plan(msgspec.Struct, kw_only=True, omit_defaults=True):
    goal: str
    sub_tasks: list[SubTask] = []

    def to_json(self) -> str:
        return msgspec.json.format(msgspec.json.encode(self)).decode()


def agent_spec(name: str, system: str, instruction: str, constraints: list[str], inputs: list[dict[str, Any]],
               outputs: list[dict[str, Any]], llm: Any) -> dict[str, Any]:
    """A JSON-mode ``customize`` spec for the planner/generator/reviewer agents."""
    spec: dict[str, Any] = {
        "type": "customize", "name": name, "description": system, "parse_mode": "json",
        "prompt_template": {"system": system, "instruction": instruction, "constraints": constraints},
        "inputs": inputs, "outputs": outputs, "memory_size": 20,
    }
    if isinstance(llm, str):
        spec["llm"] = llm
    return spec


def build_agent(kernel: "Kernel", spec: dict[str, Any], llm: Any) -> Any:
    """The ``CustomizeAgent`` of ``spec``, using the ``llm`` instance when one is given."""
    if llm is not None and not isinstance(llm, str):
        from zagent.plugins.actions import CustomizeAgent

        return CustomizeAgent.from_dict(spec, kernel, llm=llm)
    return kernel.agent(spec)


@attrs.define(repr=False, eq=False, kw_only=True)
class TaskPlanner:
    """Turns a goal into a checked ``Plan`` (see the module docstring).

    :param llm: an LLM or ``"provider:model"`` (default: the kernel's default model).
    """

    kernel: "Kernel"
    llm: Any = None
    agent: Any = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        if self.agent is None:
            spec = agent_spec(
                "TaskPlanner", prompts.PLANNER_SYSTEM, prompts.PLANNER_INSTRUCTION, prompts.PLANNER_CONSTRAINTS,
                inputs=[{"name": "goal"}, {"name": "history", "default": ""}, {"name": "suggestion", "default": ""}],
                outputs=[SUB_TASKS_FIELD],
                llm=self.llm)
            self.agent = build_agent(self.kernel, spec, self.llm)

    async def aplan(self, goal: str, *, history: Optional[Any] = None, suggestion: Optional[str] = None) -> Plan:
        """Ask for a plan; ``history`` is an earlier ``Plan`` (or text), ``suggestion`` what to change."""
        inputs = {"goal": goal, "history": _history_text(history), "suggestion": _suggestion_text(suggestion)}
        result = await self.agent.aexecute(inputs=inputs)
        return parse_plan(goal, result.output.sub_tasks, result.content)

    def plan(self, goal: str, **kw: Any) -> Plan:
        """Sync twin of ``aplan``."""
        return run_sync(self.aplan(goal, **kw))


def _history_text(history: Any) -> str:
    if not history:
        return ""
    text = history.to_json() if isinstance(history, Plan) else str(history)
    return f"{prompts.HISTORY_TITLE}\n{text}"


def _suggestion_text(suggestion: Optional[str]) -> str:
    return f"{prompts.SUGGESTION_TITLE}\n{suggestion}" if suggestion else ""


def parse_plan(goal: str, sub_tasks: Any, raw: str = "") -> Plan:
    """Convert the reply's ``sub_tasks`` into a ``Plan`` and check the planning rules."""
    items = [_normalise(msgspec.to_builtins(t)) for t in (sub_tasks or [])]
    try:
        plan = msgspec.convert({"goal": goal, "sub_tasks": items}, Plan, strict=False)
    except msgspec.ValidationError as exc:
        raise GenerationError(f"the plan's sub_tasks do not have the expected shape: {exc}", raw=raw) from None
    problems = check_plan(plan)
    if problems:
        raise GenerationError("the plan breaks the planning rules: " + "; ".join(problems), raw=raw)
    return plan


def _normalise(task: Any) -> Any:
    """Accept inputs/outputs given as plain names as well as field objects."""
    if not isinstance(task, dict):
        return task
    out = dict(task)
    for key in ("inputs", "outputs"):
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [{"name": v} if isinstance(v, str) else v for v in value]
        elif isinstance(value, str):
            out[key] = [{"name": v.strip()} for v in value.split(",") if v.strip()]
    return out


def check_plan(plan: Plan) -> list[str]:
    """Every broken planning rule, as a sentence (empty when the plan is fine)."""
    tasks = plan.sub_tasks
    if not tasks:
        return ["the plan has no sub-tasks"]
    if len(tasks) > MAX_SUB_TASKS:  # each would be a node of generated agents: its own model calls
        return [f"the plan has {len(tasks):,} sub-tasks, more than {MAX_SUB_TASKS}; plan fewer, larger sub-tasks"]
    problems: list[str] = []
    seen_names: set[str] = set()
    available = {"goal"}
    producer: dict[str, str] = {}
    for i, task in enumerate(tasks):
        problems += shape_problems(task)
        if task.name in seen_names:
            problems.append(f"sub-task name {task.name!r} is used twice")
        seen_names.add(task.name)
        names = [f.name for f in task.inputs]
        if i == 0 and names != ["goal"]:
            problems.append(f"the first sub-task {task.name!r} must take only 'goal' as input, not {names}")
        elif i > 0:
            unknown = [n for n in names if n not in available]
            if unknown:
                problems.append(f"sub-task {task.name!r} takes {', '.join(unknown)}, which neither the goal nor an "
                                f"earlier sub-task provides (available: {', '.join(sorted(available))})")
        if not task.outputs:
            problems.append(f"sub-task {task.name!r} has no outputs")
        for f in task.outputs:
            if f.name == "goal" or f.name in producer:
                problems.append(f"output {f.name!r} of {task.name!r} is already " +
                                ("the goal" if f.name == "goal" else f"produced by {producer[f.name]!r}"))
            producer.setdefault(f.name, task.name)
            available.add(f.name)
    return problems
