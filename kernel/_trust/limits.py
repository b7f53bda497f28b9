"""Bounds on nested data from users and models: depth, size and valid text (``data_problem``, an iterative
walk), JSON nesting undecoded (``json_depth``), tool-call arguments and token counts.
"""

from __future__ import annotations

import re
from typing import Any, Optional


MAX_DEPTH = 100
MAX_ITEMS = 1_000_000

_surrogate: Optional["re.Pattern[str]"] = None  # compiled on first use (about 1 ms: keep import light)
_CONTAINERS = (dict, list, tuple, set, frozenset)


def data_problem(value: Any, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS) -> Optional[str]:
    """The first problem of ``value`` as ``"at <where>: <what>"`` (``where`` like ``a.b[3]``), or ``None``:
    nested deeper than ``max_depth``, more than ``max_items`` values, a lone surrogate in a text or key."""
    if isinstance(value, str):
        return text_problem(value, None)
    if not isinstance(value, _CONTAINERS):
        return None
    if type(value) is dict and len(value) <= max_items and _flat_and_plain(value):
        return None  # the common tool-call arguments: a few ASCII keys with ASCII or non-text values
    # Only containers go on the stack; a path is a linked (parent, key) pair, built in O(1) per container.
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    seen = 0
    while stack:
        item, depth, path = stack.pop()
        if depth > max_depth:
            return f"{_where(path)}nested deeper than {max_depth} levels"
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in pairs:
            seen += 1
            if seen > max_items:
                return f"{_where(path)}more than {max_items:,} values in one piece of data"
            if isinstance(key, str) and not key.isascii():
                problem = text_problem(key, (path, key), "key")
                if problem:
                    return problem
            if isinstance(child, str):
                if not child.isascii():
                    problem = text_problem(child, (path, key))
                    if problem:
                        return problem
            elif isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1, (path, key)))
    return None


def _flat_and_plain(value: dict[Any, Any]) -> bool:
    """Whether ``value`` holds only ASCII-text keys and values that are ASCII text, numbers, booleans or None."""
    for key, child in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(child)
        if kind is str:
            if not child.isascii():
                return False
        elif kind is not int and kind is not float and kind is not bool and child is not None:
            return False
    return True


# a structural character, or a whole string (group 1: its closing quote; missing when the text stops inside)
TOKEN = re.compile(r'[\[\]{},]|"[^"\\]*(?:\\.[^"\\]*)*(")?', re.S)


def json_depth(text: str, stop: int = MAX_DEPTH + 1) -> int:
    """The deepest nesting of ``[``/``{`` in JSON ``text`` (outside strings), counted up to ``stop``."""
    depth = deepest = 0
    for found in TOKEN.finditer(text):
        ch = text[found.start()]
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest >= stop:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def text_problem(text: str, path: Any, what: str = "text") -> Optional[str]:
    """Why ``text`` (at ``path``, called ``what``) is not valid Unicode (a lone surrogate), or ``None``."""
    global _surrogate
    if text.isascii():
        return None
    if _surrogate is None:
        _surrogate = re.compile("[\ud800-\udfff]")
    found = _surrogate.search(text)
    if found is None:
        return None
    return (f"{_where(path)}{what} holds a lone surrogate {found.group()!r} at index {found.start()}, which is "
            "not valid Unicode; fix the text where it came from (e.g. decode bytes with errors='replace')")


def _where(path: Any, limit: int = 6) -> str:
    """``at a.b[3]: `` for a linked path ``(parent, key)`` (long ones shortened to their first steps)."""
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    if not keys:
        return ""
    keys.reverse()
    shown = "".join(_step(k) for k in keys[:limit]).lstrip(".")
    if len(keys) > limit:
        shown += f"... ({len(keys)} levels)"
    return f"at {shown}: "


def _step(key: Any) -> str:
    if isinstance(key, str) and key.isascii() and key.isidentifier():
        return f".{key}"
    return f"[{key!r}]" if isinstance(key, str) else f"[{key}]"


def non_finite(value: Any) -> Optional[str]:
    """Where ``value`` (converted tool arguments: dicts, lists, structs) holds a NaN or an infinity, as ``a.b[3]``
    (``None``: nowhere). A lax conversion makes them from the strings ``"NaN"`` and ``"inf"``; every comparison
    with NaN is false, so a tool's own range check would let it through."""
    stack: list[tuple[Any, Any]] = [(value, None)]
    while stack:
        item, path = stack.pop()
        kind = type(item)
        if kind is float:
            if item != item or item in (float("inf"), float("-inf")):
                return _where(path)[3:-2] or "the value"
        elif kind is dict:
            stack.extend((v, (path, k)) for k, v in item.items())
        elif kind is list or kind is tuple:
            stack.extend((v, (path, i)) for i, v in enumerate(item))
        elif hasattr(item, "__struct_fields__"):
            stack.extend((getattr(item, f), (path, f)) for f in item.__struct_fields__)
        elif kind.__name__ == "Decimal" and not item.is_finite():
            return _where(path)[3:-2] or "the value"
    return None


def bounded_arguments(arguments: Any) -> Any:
    """Tool-call ``arguments``, a dict nested past ``MAX_DEPTH`` (or otherwise a ``data_problem``) as its JSON text."""
    if not isinstance(arguments, dict) or data_problem(arguments, max_items=MAX_ITEMS) is None:
        return arguments
    import json

    import msgspec

    try:
        return msgspec.json.encode(arguments).decode()
    except (RecursionError, msgspec.EncodeError, UnicodeEncodeError):
        pass
    try:  # lone surrogates: the standard library writes them as \uXXXX escapes
        return json.dumps(arguments, ensure_ascii=True, default=repr)
    except (RecursionError, ValueError):
        return "[" * (MAX_DEPTH + 1)  # too deep even to re-encode: still reported as too deep


def bound_calls(calls: Any) -> None:
    """``bounded_arguments`` for each ``ToolCall`` of ``calls``, in place."""
    for call in calls:
        if isinstance(call.arguments, dict) and call.arguments:
            bounded = bounded_arguments(call.arguments)
            if bounded is not call.arguments:
                call.arguments = bounded


#: the largest token or call count a reply may report
MAX_USAGE = 10**12


def usage_problem(usage: Any) -> Optional[str]:
    """What is wrong with a reply's ``Usage`` (``None``: every count is a whole number in 0..``MAX_USAGE``)."""
    for name in ("input_tokens", "output_tokens", "calls"):
        value = getattr(usage, name)
        if type(value) is not int or not 0 <= value <= MAX_USAGE:
            shown = f"a {len(str(abs(value)))}-digit number" if type(value) is int and abs(value) > MAX_USAGE \
                else repr(value)[:40]
            return f"{name} is {shown}, not a count between 0 and {MAX_USAGE:,}"
    return None
