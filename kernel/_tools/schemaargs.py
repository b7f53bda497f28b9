"""A tool's arguments checked against an explicit JSON schema (``Tool(parameters=...)`` without a
signature): compiled once (``schema_type``), converted laxly like a decorated tool's; keywords it cannot
express accept anything.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec

MAX_NESTING = 24  # deeper parts of a (hostile) schema are not checked
_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": Union[int, float], "boolean": bool,
                            "null": type(None)}


def schema_type(schema: Any, name: str = "Arguments") -> Any:
    """A msgspec type that accepts what ``schema`` accepts (``Any`` where it cannot tell)."""
    try:
        found = _type_of(schema, name)
        msgspec.convert(None, found)  # msgspec checks the whole type here: a union it cannot express raises
    except msgspec.ValidationError:
        return found
    except (TypeError, ValueError):  # e.g. a union of two object types: not checked
        return Any
    return found


def _type_of(schema: Any, name: str, depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > MAX_NESTING:
        return Any
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in enum):
        return Literal[tuple(enum)]
    kind = schema.get("type")
    # each type once: ``["object", "object"]`` at every level made the work 2**depth (a 900-byte schema, 16 s)
    kinds = list(dict.fromkeys(k if isinstance(k, str) else None for k in (kind if isinstance(kind, list) else [kind])))
    types = [_one(k, schema, name, depth + 1) for k in kinds]
    if any(t is Any for t in types):
        return Any
    return types[0] if len(types) == 1 else Union[tuple(types)]


def _one(kind: Any, schema: dict[str, Any], name: str, depth: int) -> Any:
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        return list[_type_of(schema.get("items"), name + "Item", depth)]  # type: ignore[misc]
    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return dict[str, Any]
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        fields = [(key, _type_of(sub, f"{name}_{key}", depth)) if key in required else
                  (key, Union[_type_of(sub, f"{name}_{key}", depth), msgspec.UnsetType], msgspec.UNSET)
                  for key, sub in props.items() if isinstance(key, str) and key.isidentifier()]
        if len(fields) != len(props):
            return Any  # keys that cannot be struct fields: not checked
        return msgspec.defstruct(name, fields, forbid_unknown_fields=schema.get("additionalProperties") is False)
    return Any


def check_arguments(arguments: dict[str, Any], checker: Any) -> dict[str, Any]:
    """``arguments`` converted by ``checker`` (raises ``msgspec.ValidationError``); keys it does not know
    are kept as sent."""
    if checker is Any:
        return dict(arguments)
    converted = msgspec.to_builtins(msgspec.convert(arguments, checker, strict=False))
    return {**arguments, **converted}
