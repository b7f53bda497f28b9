"""``WorkFlowReviewer``: reviews a graph against its goal and returns concrete suggestions.

A JSON-mode ``CustomizeAgent`` (prompts in ``prompts``) reads the goal and the
graph's text diagram and answers ``approved`` and ``suggestions``. An
approved workflow yields no suggestions, which ends the generator's
refinement rounds early.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from zagent import run_sync

from . import prompts
from .graph import WorkFlowGraph
from .planner import agent_spec, build_agent
from .render import to_text

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


@attrs.define(repr=False, eq=False, kw_only=True)
class WorkFlowReviewer:
    """Suggestions for a graph (empty when it is approved)."""

    kernel: "Kernel"
    llm: Any = None
    agent: Any = None

    def __attrs_post_init__(self) -> None:
        if self.agent is None:
            spec = agent_spec(
                "WorkFlowReviewer", prompts.REVIEWER_SYSTEM, prompts.REVIEWER_INSTRUCTION,
                prompts.REVIEWER_CONSTRAINTS, inputs=[{"name": "goal"}, {"name": "workflow"}],
                outputs=[{"name": "approved", "type": "boolean", "default": False},
                         {"name": "suggestions", "type": "array", "items": {"name": "suggestion"}, "default": []}],
                llm=self.llm)
            self.agent = build_agent(self.kernel, spec, self.llm)

    async def areview(self, graph: WorkFlowGraph) -> list[str]:
        result = await self.agent.aexecute(inputs={"goal": graph.goal, "workflow": to_text(graph)})
        suggestions = [str(s).strip() for s in (result.output.suggestions or []) if str(s).strip()]
        return [] if result.output.approved and not suggestions else suggestions

    def review(self, graph: WorkFlowGraph) -> list[str]:
        """Sync twin of ``areview``."""
        return run_sync(self.areview(graph))
