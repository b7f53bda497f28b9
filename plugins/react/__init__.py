"""The ReAct plugin: ``ReActLoop``, ``ReActAgent`` with ``chat``, trajectories, ``zagent chat``.

Registers the agent type ``react`` and the CLI command ``zagent chat``.
Cheap to import: classes load on first use (``from zagent.plugins.react import ReActLoop``
resolves lazily). Built on the actions plugin (ReActAgent extends its Agent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import Kernel
    from zagent.plugins.actions.chat import AgentResponse as AgentResponse
    from zagent.plugins.cli import CommandGroup

    from .agent import ReActAgent as ReActAgent
    from .ends import ReActResult as ReActResult
    from .handoff import HandoffResult as HandoffResult, Handoffs as Handoffs
    from .loop import ReActLoop as ReActLoop
    from .recorder import TrajectoryRecorder as TrajectoryRecorder, read_live as read_live
    from .state import Decision as Decision, ReActState as ReActState, StepResult as StepResult
    from .trajectory import append_trajectory as append_trajectory, read_trajectories as read_trajectories

_EXPORTS = {
    "ReActLoop": "loop", "ReActResult": "ends", "ReActAgent": "agent", "AgentResponse": "agent",
    "ReActState": "state", "StepResult": "state", "Decision": "state",
    "read_trajectories": "trajectory", "append_trajectory": "trajectory",
    "TrajectoryRecorder": "recorder", "read_live": "recorder",
    "Handoffs": "handoff", "HandoffResult": "handoff",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


def _react(spec: dict[str, Any], kernel: "Kernel") -> "ReActAgent":
    from .agent import build_react

    return build_react(spec, kernel)


def zagent_register_agent_types(register: Callable[..., None]) -> None:
    register("react", _react)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)
