"""``coerce(args, schema)``: text tool-call arguments converted to the types of the tool's JSON schema, laxly, as
native calls are (``"42"`` to 42, a number to its text, JSON text to an array or object). A value that does not
convert is kept as it came. A string naming one string-enum member (another case, its part before a comma, its
plural) becomes that member, a boolean its ``"True"``/``"False"`` member. A new dict, nothing invented or dropped.
"""

from __future__ import annotations

import re
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
        enum = prop.get("enum")
        if isinstance(value, bool) and isinstance(enum, list):  # a flag for a string enum ["True", "False", ...]
            spelled = _enum_spelling(str(value), enum, exact=True)
            return spelled if spelled in enum else value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return _enum_spelling(value, enum) if isinstance(value, str) and isinstance(enum, list) else value
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


def _enum_spelling(value: str, enum: list[Any], exact: bool = False) -> str:
    """``value`` as the one member of a string ``enum`` it spells: the same text in another case (``"Celsius"``
    for ``"celsius"``), unless ``exact`` also the member's leading part before a comma or a bracket (``"Seoul"``
    for ``"Seoul, South Korea"``) or its plural (``"pieces"`` for ``"piece"``); ``value`` itself when it is a
    member, or when no member or more than one fits (the first rule that fits any member decides)."""
    if value in enum:
        return value
    folded = value.strip().casefold()
    if not folded:
        return value
    members = [m for m in enum if isinstance(m, str)]
    for rule in ("case",) if exact else ("case", "lead", "plural"):
        found = [m for m in members if _spells(folded, m, rule)]
        if len(found) == 1:
            return found[0]
        if found:
            return value
    return value


def _spells(folded: str, member: str, rule: str) -> bool:
    """Whether the folded value spells ``member`` by ``rule``: ``case``, ``lead`` (its part before a comma or a
    bracket) or ``plural`` (the member plus "s" or "es")."""
    text = member.casefold()
    if rule == "case":
        return text == folded
    if rule == "lead":
        return _LEAD.split(text, 1)[0].strip() == folded
    return folded in (text + "s", text + "es")


#: where an enum member's leading part ends: a comma or an opening bracket ("Seoul, South Korea", "UNS (Solo)")
_LEAD = re.compile(r"\s*[,(\[]")
