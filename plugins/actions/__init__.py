"""The actions plugin: Action, CustomizeAction, Agent, CustomizeAgent, HumanAgent, ContextExtraction.

Registers the agent types ``customize`` and ``human``, ``Kernel.agent``'s builder, the ``output_validators`` kind
and the commands ``zagent run`` and ``zagent agent show``. Cheap to import: public names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

    from .action import Action as Action, CustomizeAction as CustomizeAction
    from .actionrun import ActionOutput as ActionOutput
    from .agent import Agent as Agent
    from .agentresult import AgentResult as AgentResult
    from .customize import AgentSpec as AgentSpec, CustomizeAgent as CustomizeAgent
    from .extraction import ContextExtraction as ContextExtraction
    from .human import HumanAction as HumanAction, HumanAgent as HumanAgent, HumanRequest as HumanRequest
    from .validators import ModelRetry as ModelRetry, OutputRejected as OutputRejected

_EXPORTS = {
    "Action": "action", "CustomizeAction": "action", "ActionOutput": "actionrun",
    "Agent": "agent", "AgentResult": "agentresult",
    "CustomizeAgent": "customize", "AgentSpec": "customize",
    "ContextExtraction": "extraction",
    "HumanAgent": "human", "HumanAction": "human", "HumanRequest": "human",
    "ModelRetry": "validators", "OutputRejected": "validators",
}

#: this plugin's registry kind: ``zagent_register_output_validators`` -> ``kernel.entries("output_validators")``
zagent_hookspecs = "zagent.plugins.actions.hookspecs"


__getattr__ = lazy_exports(__name__, _EXPORTS)


def _customize(spec: dict[str, Any], kernel: "Kernel") -> "CustomizeAgent":
    from .customize import build_customize

    return build_customize(spec, kernel)


def _terminal_responder(request: Any) -> Any:
    from .human import terminal_responder

    return terminal_responder(request)


def _human(spec: dict[str, Any], kernel: "Kernel") -> "HumanAgent":
    from .human import build_human

    return build_human(spec, kernel)


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``human_responder`` (the human agent's), ``max_agent_calls`` (agents
    called as tools in one run, ``astool.MAX_AGENT_CALLS``)."""
    return ("human_responder", "max_agent_calls")


def zagent_register_agent_types(register: Callable[..., None]) -> None:
    register("customize", _customize)
    register("human", _human)


def _build_agent(kernel: "Kernel", spec: Any, trust: Any) -> Any:
    from zagent.speckit.files import build_agent

    return build_agent(kernel, spec, trust)


def zagent_register_agent_builders(register: Callable[..., None]) -> None:
    register("default", _build_agent)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    # only the command line registers commands: there a person at the terminal answers human agents
    kernel.config.setdefault("human_responder", _terminal_responder)

    add_commands(cli)
