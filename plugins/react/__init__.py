"""The ReAct plugin: ``ReActLoop``, ``ReActAgent`` with ``chat``, trajectories, ``zagent chat``.

Registers the agent type ``react`` and the CLI command ``zagent chat``.
Cheap to import: classes load on first use (``from zagent.plugins.react import ReActLoop``
resolves lazily). Built on the actions plugin (ReActAgent extends its Agent).
"""

from __future__ import annotations

from typing import Any, Callable

from zagent.agentkit.lazy import lazy_exports

_EXPORTS = {
    "ReActLoop": "loop", "ReActResult": "ends", "ReActAgent": "agent", "AgentResponse": "agent",
    "ReActState": "state", "StepResult": "state", "Decision": "state",
    "read_trajectories": "trajectory", "append_trajectory": "trajectory",
    "TrajectoryRecorder": "recorder", "read_live": "recorder",
    "Handoffs": "handoff", "HandoffResult": "handoff",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


def _react(spec: dict, kernel: Any) -> Any:
    from .agent import build_react

    return build_react(spec, kernel)


def zagent_register_agent_types(register: Callable[..., None]) -> None:
    register("react", _react)


def zagent_register_commands(cli: Any, kernel: Any) -> None:
    from .cli import add_commands

    add_commands(cli)
