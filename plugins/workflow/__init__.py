"""The workflow plugin: graphs of agents (``WorkFlowGraph``), their parallel, resumable executor
(``WorkFlowExecutor``) and generating them from a one-line goal (``WorkFlowGenerator``); CLI ``zagent workflow
generate|show|run|resume``. Registers only CLI commands; built on the actions and manager plugins; everything loads on
first use. See docs/workflows.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

    from .agents import AgentGenerator as AgentGenerator
    from .build import build_from_plan as build_from_plan
    from .errors import (
        WorkFlowValidationError as WorkFlowValidationError, WorkFlowError as WorkFlowError,
        WorkFlowFailed as WorkFlowFailed, GenerationError as GenerationError, Problem as Problem)
    from .executor import WorkFlowExecutor as WorkFlowExecutor
    from .generator import WorkFlowGenerator as WorkFlowGenerator
    from .graph import (
        WorkFlowGraph as WorkFlowGraph, WorkFlowNode as WorkFlowNode, WorkFlowEdge as WorkFlowEdge,
        ConditionalEdge as ConditionalEdge, StateField as StateField)
    from .planner import TaskPlanner as TaskPlanner, Plan as Plan, SubTask as SubTask
    from .render import to_mermaid as to_mermaid, to_text as to_text
    from .result import WorkFlowResult as WorkFlowResult, TraceEntry as TraceEntry, RunState as RunState
    from .reviewer import WorkFlowReviewer as WorkFlowReviewer

_EXPORTS = {
    "WorkFlowGraph": "graph", "WorkFlowNode": "graph", "WorkFlowEdge": "graph", "ConditionalEdge": "graph",
    "StateField": "graph",
    "WorkFlowExecutor": "executor", "WorkFlowResult": "result", "TraceEntry": "result", "RunState": "result",
    "WorkFlowValidationError": "errors", "WorkFlowError": "errors", "WorkFlowFailed": "errors",
    "GenerationError": "errors", "Problem": "errors",
    "TaskPlanner": "planner", "Plan": "planner", "SubTask": "planner",
    "build_from_plan": "build",
    "AgentGenerator": "agents", "WorkFlowReviewer": "reviewer", "WorkFlowGenerator": "generator",
    "to_mermaid": "render", "to_text": "render",
}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)
