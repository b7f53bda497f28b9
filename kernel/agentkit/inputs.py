"""Inputs a run takes from its caller, checked before it starts: ``check_inputs``, ``check_data`` and ``check_text``
raise a ``ConfigError`` naming the input and the spot for data too deep, too large or not valid Unicode
(``zagent._trust.limits``); ``to_messages`` normalises a conversation.
"""

from __future__ import annotations

from typing import Any

from .._model.inputs import to_messages
from .._trust.limits import MAX_DEPTH, MAX_ITEMS, data_problem, text_problem
from ..errors import ConfigError

__all__ = ["check_data", "check_inputs", "check_text", "to_messages"]


def check_data(value: Any, where: str, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS) -> None:
    """``ConfigError`` naming ``where`` (e.g. ``"input 'question'"``) and the spot, if ``value`` has a
    problem (see ``data_problem``)."""
    problem = data_problem(value, max_depth=max_depth, max_items=max_items)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")


def check_inputs(inputs: dict[str, Any], what: str = "input") -> None:
    """``check_data`` for each named input (``ConfigError`` naming the input and the spot)."""
    if not isinstance(inputs, dict):
        raise ConfigError(f"{what}s must be a mapping of names to values, got {type(inputs).__name__}")
    for name, value in inputs.items():
        if isinstance(name, str) and not name.isascii():
            problem = text_problem(name, None, "the name")
            if problem:
                raise ConfigError(f"{what} {name!r}: {problem}")
        if isinstance(value, str) and value.isascii():
            continue  # the common case: nothing to check
        check_data(value, f"{what} {name!r}")


def check_text(value: Any, what: str) -> None:
    """``ConfigError`` unless ``value`` is a ``str`` of valid Unicode (a chat message, a task)."""
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be text (str), got {type(value).__name__}")
    problem = text_problem(value, None)
    if problem:
        raise ConfigError(f"{what}: {problem}")
