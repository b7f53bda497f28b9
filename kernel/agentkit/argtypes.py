"""``coerce(args, schema)``: text tool-call arguments converted to the types of the tool's JSON schema, laxly, as
native calls are (``"42"`` to 42, a number to its text, JSON text to an array or object). A value that does not
convert is kept as it came; a new dict, nothing invented or dropped.
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
