"""The *size* class of spec values: counts a spec sets are whole numbers in bounds, checked when it loads.

A spec file is data, and a number in it is a resource the user pays for: ``max_rounds: 1000000000`` is a
billion model calls on the user's key, ``max_tool_call_concurrency: 0`` a run that never starts its calls
(``ValueError`` deep in the tool runner), ``memory_size: -5`` a slice from the wrong end. ``check_sizes``
walks a converted spec (a ``msgspec.Struct``: its fields, nested Structs and lists of them, and the
``termination`` / ``selection`` mappings of a group chat) and refuses, with a ``ConfigError`` naming the key,
its value and the range, any count of ``SPEC_SIZES`` that is not a whole number in its range. ``None``
(the key's "no limit" where it has one) stays allowed. Once per spec load; never per call.

The ranges are far beyond any real agent (a run of 1,000 ReAct iterations, a chat of 1,000 rounds); an app
that wants more sets the value in Python (``ReActLoop(max_iterations=...)``), which is not checked here.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import ConfigError

__all__ = ["SPEC_SIZES", "check_sizes", "size_problem", "whole_number"]

#: spec key -> (lowest, highest) whole number it may be
SPEC_SIZES: dict[str, tuple[int, int]] = {
    "max_iterations": (1, 1000),
    "max_steps": (1, 1000),
    "max_tool_call_concurrency": (1, 64),
    "tool_limit": (1, 1000),
    "max_context_messages": (1, 1_000_000),
    "max_context_tokens": (1, 10_000_000),
    "memory_size": (0, 100_000),
    "memory_chars": (0, 100_000_000),
    "max_rounds": (1, 1000),
    "max_consecutive": (1, 1000),
    "retries": (0, 100),
    "history_limit": (0, 10_000),
    "judge_every": (1, 1000),
}

_NESTED = ("termination", "selection")  # a group chat's mappings whose counts are checked too


def whole_number(value: Any, low: int = 0, high: Optional[int] = None) -> bool:
    """``value`` is an ``int`` (not a ``bool``) from ``low`` to ``high`` (no upper bound when ``None``)."""
    return (isinstance(value, int) and not isinstance(value, bool) and value >= low
            and (high is None or value <= high))


def size_problem(key: str, value: Any) -> Optional[str]:
    """Why ``value`` is not a valid ``key`` (one of ``SPEC_SIZES``), or ``None``."""
    low, high = SPEC_SIZES[key]
    if value is None or whole_number(value, low, high):
        return None
    return f"{key} must be a whole number from {low} to {high}, got {value!r}"


def check_sizes(spec: Any, what: str) -> None:
    """Refuse a converted spec whose counts are out of range (see the module docstring)."""
    import msgspec

    stack: list[tuple[Any, str]] = [(spec, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, msgspec.Struct):
            pairs = [(f, getattr(item, f, None)) for f in item.__struct_fields__]
        elif isinstance(item, dict):
            pairs = [(k, v) for k, v in item.items() if isinstance(k, str)]
        else:
            continue
        for key, value in pairs:
            if key in SPEC_SIZES:
                problem = size_problem(key, value)
                if problem is not None:
                    name = spec.get("name") if isinstance(spec, dict) else getattr(spec, "name", None)
                    raise ConfigError(f"{what} {name!r}: {where}{problem}; a spec's counts are bounded (they are "
                                      "resources you pay for); set a larger value in Python code if you need it")
            if isinstance(value, msgspec.Struct) or (key in _NESTED and isinstance(value, dict)):
                stack.append((value, f"{where}{key}."))
            elif isinstance(value, list):
                stack.extend((v, f"{where}{key}[{i}].") for i, v in enumerate(value) if isinstance(v, msgspec.Struct))
