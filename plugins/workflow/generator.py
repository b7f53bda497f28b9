"""``WorkFlowGenerator``: a goal (10 characters or more, else ``ConfigError``) -> a validated ``WorkFlowGraph`` whose
nodes have agents: plan, build, validate, ``num_turns`` review rounds, agents. A step that fails to parse or validate
is retried ``max_retries`` times, ``backoff_base * 2**attempt`` s apart (at most ``backoff_max``), then
``WorkFlowError``. Generated agents may use only the tools given as ``tools=`` (none by default). Events:
``generation_step``, ``generation_retry``."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, TypeVar

import attrs
from zagent.errors import ConfigError, ParseError
from zagent import run_sync
from zagent.plugins.manager.inline import loose

from .agents import AgentGenerator
from .build import build_from_plan
from .errors import WorkFlowError, WorkFlowValidationError
from .graph import WorkFlowGraph
from .naming import free_name, taken_names
from .planner import Plan, TaskPlanner
from .reviewer import WorkFlowReviewer

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

T = TypeVar("T")
MIN_GOAL = 10
RETRYABLE = (ParseError, WorkFlowValidationError)


@attrs.define(repr=False, eq=False, kw_only=True)
class WorkFlowGenerator:
    """Generates workflows from goals (see the module docstring).

    :param llm: the LLM for planner, generator and reviewer (instance or ``"provider:model"``).
    :param manager: the ``AgentManager`` whose agents may be reused (a new one when ``None``).
    :param num_turns: review-and-refine rounds (0: no review).
    :param max_retries: extra tries of a failing step.
    :param backoff_base: seconds before the first retry; doubles each time.
    :param tools: the registered tools generated (and selected) agents may use; ``None`` (the default): none. A
        plan is model output: it gets only the tools the app names (``tools=k.names("tools")`` offers every one).
    """

    kernel: "Kernel"
    llm: Any = None
    manager: Any = None
    num_turns: int = 1
    max_retries: int = 3
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    tools: Optional[list[str]] = None
    planner: Any = None
    agent_generator: Any = None
    reviewer: Any = None

    def __attrs_post_init__(self) -> None:
        if isinstance(self.llm, str):
            self.llm = self.kernel.llm(self.llm)
        if self.manager is None:
            from zagent.plugins.manager import AgentManager

            self.manager = AgentManager(kernel=self.kernel)
        self.tools = list(self.tools) if self.tools is not None else []  # no tools unless the app names them
        self.planner = self.planner or TaskPlanner(kernel=self.kernel, llm=self.llm)
        self.agent_generator = self.agent_generator or AgentGenerator(
            kernel=self.kernel, llm=self.llm, manager=self.manager, tools=self.tools)
        self.reviewer = self.reviewer or WorkFlowReviewer(kernel=self.kernel, llm=self.llm)

    async def agenerate(self, goal: str, *, name: str = "workflow", generate_agents: bool = True) -> WorkFlowGraph:
        """Plan, build, validate, review/refine and generate agents for ``goal``."""
        goal = check_goal(goal)
        plan, graph = await self._plan(goal, name, None, None)
        for turn in range(1, self.num_turns + 1):
            suggestions = await self._retry("review", lambda _e: self.reviewer.areview(graph))
            await self.kernel.aemit("generation_step", step="review", turn=turn, suggestions=len(suggestions))
            if not suggestions:
                break
            plan, graph = await self._plan(goal, name, plan, "\n".join(f"- {s}" for s in suggestions))
        if generate_agents:
            used = taken_names(self.manager)  # a renamed agent never lands on a held or stored agent's name
            for node in graph.nodes:
                refs = await self._retry(
                    f"agents for {node.name}", lambda _e: self.agent_generator.agenerate(goal, node, graph))
                node.agents = _unique_names(refs, used)
            await self.kernel.aemit("generation_step", step="agents", nodes=len(graph.nodes))
        return graph

    def generate(self, goal: str, **kw: Any) -> WorkFlowGraph:
        """Sync twin of ``agenerate``."""
        return run_sync(self.agenerate(goal, **kw))

    async def _plan(self, goal: str, name: str, history: Optional[Plan],
                    suggestion: Optional[str]) -> tuple[Plan, WorkFlowGraph]:
        async def attempt(error: Optional[Exception]) -> tuple[Plan, WorkFlowGraph]:
            hint = suggestion
            if error is not None:
                hint = f"{suggestion or ''}\nYour previous answer was rejected: {error}".strip()
            plan = await self.planner.aplan(goal, history=history, suggestion=hint)
            return plan, build_from_plan(plan, name=name)

        result = await self._retry("plan", attempt)
        await self.kernel.aemit("generation_step", step="plan", nodes=len(result[0].sub_tasks))
        return result

    async def _retry(self, step: str, fn: Callable[[Optional[Exception]], Awaitable[T]]) -> T:
        error: Optional[Exception] = None
        for attempt in range(self.max_retries + 1):
            try:
                return await fn(error)
            except RETRYABLE as exc:
                error = exc
                if attempt == self.max_retries:
                    break
                delay = min(self.backoff_base * 2 ** attempt, self.backoff_max)
                await self.kernel.aemit("generation_retry", step=step, attempt=attempt + 1, delay=delay,
                                        error=str(exc)[:300])
                await asyncio.sleep(delay)
        raise WorkFlowError(f"workflow generation step {step!r} failed after {self.max_retries + 1} attempt(s): "
                            f"{error}") from error


def _unique_names(refs: list[Any], used: set[str]) -> list[Any]:
    """Rename generated specs whose name another node's generated agent (or an agent the manager holds or stores)
    already has, ignoring case and width (``Name2``...); ``used`` holds the ``loose`` keys taken."""
    for ref in refs:
        if isinstance(ref, dict):
            ref["name"] = free_name(ref["name"], used)
            used.add(loose(ref["name"]))
    return refs


def check_goal(goal: Any) -> str:
    """The goal stripped; ``ConfigError`` when it is not text of at least 10 characters."""
    if not isinstance(goal, str) or len(goal.strip()) < MIN_GOAL:
        raise ConfigError(f"the goal {goal!r} is too short to plan a workflow from: describe what the workflow must "
                          f"achieve in at least {MIN_GOAL} characters, e.g. 'Write a short report on solar power'")
    return goal.strip()
