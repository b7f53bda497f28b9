"""Checking a call's arguments against an MCP tool's ``inputSchema`` (``check_arguments``): a subset of JSON Schema.

Checked: ``required``, ``additionalProperties: false`` and the ``type`` of each top-level property declaring one;
nothing nested. A string spelling a declared ``integer``/``number``/``boolean`` is converted. The server still
validates fully.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import msgspec

_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and math.isfinite(v) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
_LAX = (("integer", int), ("number", float), ("boolean", bool))


def check_arguments(schema: Any, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return the (possibly converted) arguments and the problems found; no problems means valid."""
    if not isinstance(schema, dict):
        return arguments, []
    declared = schema.get("properties")
    props: dict[str, Any] = declared if isinstance(declared, dict) else {}
    problems: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        missing = [r for r in required if isinstance(r, str) and r not in arguments]
        if missing:
            problems.append("missing required argument(s) " + ", ".join(repr(m) for m in missing))
    if schema.get("additionalProperties") is False and "patternProperties" not in schema:
        unknown = [k for k in arguments if k not in props]
        if unknown:
            allowed = ", ".join(repr(p) for p in props) or "none"
            problems.append(f"unknown argument(s) {', '.join(repr(u) for u in unknown)} (allowed: {allowed})")
    out = dict(arguments)
    for key, value in arguments.items():
        types = declared_types(props.get(key))
        if types is None or any(_CHECKS[t](value) for t in types):
            continue
        converted = _lax(value, types)
        if converted is _NO:
            problems.append(f"argument {key!r} must be {' or '.join(types)}, got {json_type(value)}")
        else:
            out[key] = converted
    return out, problems


def declared_types(prop: Any) -> Optional[list[str]]:
    """The JSON type names a property allows, or ``None`` when it is not checked."""
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if kind is None and isinstance(prop.get("anyOf"), list) and prop["anyOf"]:
        names: list[str] = []
        for branch in prop["anyOf"]:
            sub = declared_types(branch) if isinstance(branch, dict) and "type" in branch else None
            if sub is None:
                return None
            names.extend(n for n in sub if n not in names)
        return names
    listed = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if not listed or not all(isinstance(n, str) and n in _CHECKS for n in listed):
        return None
    return list(listed)


def json_type(value: Any) -> str:
    """The JSON type name of a Python value as decoded from JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    for name in ("number", "string", "array", "object"):
        if _CHECKS[name](value):
            return name
    return type(value).__name__


_NO = object()


def _lax(value: Any, types: list[str]) -> Any:
    """A string converted to the first declared integer/number/boolean type it spells, else ``_NO``."""
    if not isinstance(value, str):
        return _NO
    for name, target in _LAX:
        if name in types:
            try:
                converted = msgspec.convert(value, target, strict=False)
            except msgspec.ValidationError:
                continue
            if not (isinstance(converted, float) and not math.isfinite(converted)):
                return converted
    return _NO
