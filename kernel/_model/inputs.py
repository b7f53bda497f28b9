"""What callers hand a model, normalised: messages (``to_messages``) and offered tools (``to_tool_specs``); bad
input is a ``ConfigError`` naming what was wrong.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence, Union

import msgspec

from ..errors import ConfigError
from ..types import Message, ToolSpec

__all__ = ["MessagesIn", "to_messages", "to_tool_specs"]

MessagesIn = Union[str, Message, Sequence[Union[Message, dict[str, Any]]]]


def to_messages(messages: MessagesIn) -> list[Message]:
    """Accept a string (one user turn), a ``Message``, or a list of Messages/dicts."""
    if isinstance(messages, str):
        return [Message(role="user", content=messages)]
    if isinstance(messages, Message):
        return [messages]
    out: list[Message] = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, dict):
            try:
                out.append(msgspec.convert(m, Message))
            except msgspec.ValidationError as exc:
                raise ConfigError(f"bad message {m!r}: {exc}") from None
        else:
            raise ConfigError(f"a message must be a zagent.Message or a dict, got {type(m).__name__}")
    return out


def to_tool_specs(tools: Iterable[Any]) -> list[ToolSpec]:
    """Accept ``Tool`` objects, ``ToolSpec``s or ``{"name", "description", "parameters"}`` dicts."""
    specs: list[ToolSpec] = []
    for t in tools:
        if isinstance(t, ToolSpec):
            specs.append(t)
        elif hasattr(t, "spec") and isinstance(t.spec, ToolSpec):
            specs.append(t.spec)
        elif isinstance(t, dict):
            specs.append(msgspec.convert(t, ToolSpec))
        else:
            raise ConfigError(f"cannot offer {t!r} as a tool; pass zagent.Tool, ToolSpec or a dict")
    return specs
