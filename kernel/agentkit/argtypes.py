"""Text tool-call arguments to the types of the tool's JSON schema, laxly (as native calls are converted).

A model writing calls as text gets the types wrong the same ways as in native calls: ``"42"`` for an
integer, ``"true"`` for a boolean, ``5`` for a string, a JSON array as text. ``coerce(args, schema)``
converts each top-level argument the schema types with msgspec's lax conversion (``strict=False``, what
``Tool.validate`` uses for native calls), plus a number given for a string becomes its text and
JSON text given for an array or object is decoded. A value that does not convert is kept as it came:
the tool runner's validation tells the model what was wrong. Nothing is invented or dropped.
"""

from __future__ import annotations

from typing import Any, Mapping

import msgspec

__all__ = ["coerce"]

_SCALARS: dict[str, type] = {"integer": int, "number": float, "boolean": bool}


def coerce(args: Any, schema: Any) -> Any:
    """``args`` with each argument converted to its schema type where that is lax-safe (a new dict)."""
    if not isinstance(args, dict) or not isinstance(schema, Mapping):
        return args
    props = schema.get("properties")
    if not isinstance(props, Mapping) or not props:
        return args
    out = dict(args)
    for name, value in args.items():
        prop = props.get(name)
        if isinstance(prop, Mapping):
            out[name] = _one(value, prop)
    return out


def _one(value: Any, prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    if not isinstance(kind, str):
        return value
    if kind == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value
    if kind in ("array", "object") and isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            decoded = msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return value
        if not isinstance(decoded, list if kind == "array" else dict):
            return value
        value = decoded
    if kind == "array" and isinstance(value, list) and isinstance(prop.get("items"), Mapping):
        return [_one(v, prop["items"]) for v in value]
    target = _SCALARS.get(kind)
    if target is None or isinstance(value, target) and not (target is not bool and isinstance(value, bool)):
        return value
    if target is float and isinstance(value, int) and not isinstance(value, bool):
        return value  # an integer is a valid JSON number
    try:
        return msgspec.convert(value.strip() if isinstance(value, str) else value, target, strict=False)
    except (msgspec.ValidationError, TypeError):
        return value
