"""The groupchat plugin: several agents working one task by conversation (docs/groupchat.md).

Exports ``GroupChat`` and its parts (loaded on first use); registers the ``groupchat`` agent type, the
``zagent groupchat run`` command, and the built-in speaker-selection policies in its own registry kind
``kernel.entries("speaker_selectors")`` (hook ``zagent_register_speaker_selectors``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent.agentkit.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover  (the lazy names' types, for type checkers)
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

    from .chat import GroupChat as GroupChat
    from .history import SharedHistory as SharedHistory, ChatMessage as ChatMessage
    from .selection import (
        Selection as Selection, Choice as Choice, RoundRobin as RoundRobin, RoleRules as RoleRules,
        LLMSelector as LLMSelector, selector_factories as selector_factories, build_selector as build_selector)
    from .speakers import Turn as Turn, Reply as Reply, speak as speak
    from .spec import GroupChatSpec as GroupChatSpec
    from .state import GroupChatResult as GroupChatResult, ChatState as ChatState
    from .termination import (
        MaxRounds as MaxRounds, Keyword as Keyword, Judge as Judge, TokenBudget as TokenBudget,
        TimeBudget as TimeBudget, ChatView as ChatView)

_EXPORTS = {
    "GroupChat": "chat", "GroupChatResult": "state", "ChatState": "state",
    "SharedHistory": "history", "ChatMessage": "history",
    "Turn": "speakers", "Reply": "speakers", "speak": "speakers",
    "Selection": "selection", "Choice": "selection", "RoundRobin": "selection", "RoleRules": "selection",
    "LLMSelector": "selection", "selector_factories": "selection", "build_selector": "selection",
    "MaxRounds": "termination", "Keyword": "termination", "Judge": "termination",
    "TokenBudget": "termination", "TimeBudget": "termination", "ChatView": "termination",
    "GroupChatSpec": "spec",
}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)


#: the hook specs (and registry kind) this plugin owns; the kernel adds them before registering any plugin's hooks
zagent_hookspecs = "zagent.plugins.groupchat.hookspecs"

_BUILTIN_POLICIES = ("round_robin", "rules", "llm")


def _groupchat(spec: dict[str, Any], kernel: "Kernel") -> Any:
    from .spec import from_dict

    return from_dict(spec, kernel)


def zagent_config_keys() -> tuple[str, ...]:
    """The setting this plugin reads: ``max_chat_turns`` (group chat turns in one run, nested chats included)."""
    return ("max_chat_turns",)


def zagent_register_agent_types(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register the ``groupchat`` agent type."""
    register("groupchat", _groupchat)


def zagent_register_speaker_selectors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register the built-in speaker-selection policies (each imports ``selection`` on first use)."""
    for name in _BUILTIN_POLICIES:
        register(name, _builtin_policy(name))


def _builtin_policy(name: str) -> Callable[[dict[str, Any], Any], Any]:
    def factory(options: dict[str, Any], kernel: "Kernel") -> Any:
        from .selection import BUILTIN

        return BUILTIN[name](options, kernel)

    factory.__qualname__ = factory.__name__ = f"builtin_{name}"
    return factory


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import add_commands

    add_commands(cli)
