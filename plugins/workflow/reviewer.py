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
from .errors import GenerationError
from .graph import WorkFlowGraph
from .planner import agent_spec, build_agent
from .planshape import MAX_TEXT
from .render import to_text

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


#: the most suggestions one review may give (each becomes a line of the planner's next prompt)
MAX_SUGGESTIONS = 20


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
        """The review's suggestions: at most ``MAX_SUGGESTIONS`` of at most ``MAX_TEXT`` characters each (they go
        into the planner's next prompt), else a ``GenerationError`` the generator retries."""
        result = await self.agent.aexecute(inputs={"goal": graph.goal, "workflow": to_text(graph)})
        suggestions = [str(s).strip() for s in (result.output.suggestions or []) if str(s).strip()]
        longest = max(map(len, suggestions), default=0)
        if len(suggestions) > MAX_SUGGESTIONS or longest > MAX_TEXT:
            raise GenerationError(f"the review gave {len(suggestions):,} suggestions, the longest of {longest:,} "
                                  f"characters (at most {MAX_SUGGESTIONS} of {MAX_TEXT:,} characters each: they are "
                                  "sent in the planner's next prompt); give a few short, concrete suggestions",
                                  raw=result.content)
        return [] if result.output.approved and not suggestions else suggestions

    def review(self, graph: WorkFlowGraph) -> list[str]:
        """Sync twin of ``areview``."""
        return run_sync(self.areview(graph))
