"""``coerce(args, schema)``: text tool-call arguments converted to the types of the tool's JSON schema, laxly, as
native calls are (``"42"`` to 42, a number to its text, JSON text to an array or object). A value that does not
convert is kept as it came. A string naming one string-enum member (another case, its part before a comma, its
plural) becomes that member, a boolean its ``"True"``/``"False"`` member. A new dict, nothing invented or dropped.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

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
    memo: dict[int, Any] = {}  # each enum's index, built once per call: an array of 2,000 values against an
    for name, value in args.items():  # (MCP server's) 20,000-member enum took a minute scanning it per value
        prop = props.get(name)
        if isinstance(prop, Mapping):
            out[name] = _one(value, prop, memo)
    return out


def _one(value: Any, prop: Mapping[str, Any], memo: dict[int, Any]) -> Any:
    kind = prop.get("type")
    if not isinstance(kind, str):
        return value
    if kind == "string":
        enum = prop.get("enum")
        if isinstance(value, bool) and isinstance(enum, list):  # a flag for a string enum ["True", "False", ...]
            index = _index(enum, memo)
            spelled = _enum_spelling(str(value), index, exact=True)
            return spelled if ("is", spelled) in index else value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, str) and isinstance(enum, list):
            return _enum_spelling(value, _index(enum, memo))
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
        return [_one(v, prop["items"], memo) for v in value]
    target = _SCALARS.get(kind)
    if target is None or isinstance(value, target) and not (target is not bool and isinstance(value, bool)):
        return value
    if target is float and isinstance(value, int) and not isinstance(value, bool):
        return value  # an integer is a valid JSON number
    try:
        return msgspec.convert(value.strip() if isinstance(value, str) else value, target, strict=False)
    except (msgspec.ValidationError, TypeError):
        return value


def _index(enum: list[Any], memo: dict[int, Any]) -> dict[tuple[str, str], list[str]]:
    """``(rule, folded spelling)`` -> the string members of ``enum`` it spells: ``case`` (the member casefolded),
    ``lead`` (its part before a comma or bracket), ``plural`` (plus "s" or "es"); ``("is", m)`` for each member
    itself. Built once per enum per ``coerce``."""
    index: Optional[dict[tuple[str, str], list[str]]] = memo.get(id(enum))
    if index is None:
        index = {}
        for m in enum:
            if isinstance(m, str):
                text = m.casefold()
                lead = _LEAD.split(text, 1)[0].strip()
                for key in {("is", m), ("case", text), ("lead", lead), ("plural", text + "s"), ("plural", text + "es")}:
                    index.setdefault(key, []).append(m)
        memo[id(enum)] = index
    return index


def _enum_spelling(value: str, index: dict[tuple[str, str], list[str]], exact: bool = False) -> str:
    """``value`` as the one member of a string ``enum`` it spells: the same text in another case (``"Celsius"``
    for ``"celsius"``), unless ``exact`` also the member's leading part before a comma or a bracket (``"Seoul"``
    for ``"Seoul, South Korea"``) or its plural (``"pieces"`` for ``"piece"``); ``value`` itself when it is a
    member, or when no member or more than one fits (the first rule that fits any member decides)."""
    if ("is", value) in index:
        return value
    folded = value.strip().casefold()
    if not folded:
        return value
    for rule in ("case",) if exact else ("case", "lead", "plural"):
        found = index.get((rule, folded), [])
        if len(found) == 1:
            return found[0]
        if found:
            return value
    return value


#: where an enum member's leading part ends: a comma or an opening bracket ("Seoul, South Korea", "UNS (Solo)")
_LEAD = re.compile(r"\s*[,(\[]")
