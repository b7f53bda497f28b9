"""Example values valid for a JSON schema or a ``zagent.Field``, for the offline test model: ``from_schema``,
``from_field``.

Deterministic and minimal: required properties only; ``const``, defaults, ``enum``, ``examples``, ``$ref``,
``anyOf``/``oneOf``/``allOf`` and bounds honoured. A ``pattern`` it cannot satisfy raises ``ConfigError`` naming
the parameter and the pattern.
"""

from __future__ import annotations

from typing import Any, Optional

from zagent.errors import ConfigError
from zagent.types import Field

_FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
    "duration": "P1D",
}

_MAX_DEPTH = 8
#: the most items the offline model puts in one array (a schema's ``minItems``)
MAX_ITEMS = 10_000


def from_schema(schema: Any, root: Optional[dict[str, Any]] = None, depth: int = 0, path: str = "") -> Any:
    """A value valid for JSON schema ``schema`` (``root`` holds the ``$defs`` refs point into;
    ``path`` names the value in errors: ``query``, ``filter.code``, ``codes[]``)."""
    if not isinstance(schema, dict):
        return "a"
    root = schema if root is None else root
    if depth > _MAX_DEPTH:
        return None
    if "$ref" in schema:
        return from_schema(_resolve(schema["$ref"], root), root, depth + 1, path)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branch = next((b for b in schema[key] if b.get("type") != "null"), schema[key][0])
            return from_schema(branch, root, depth + 1, path)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            part = _resolve(part["$ref"], root) if "$ref" in part else part
            merged = _merge(merged, part)
        return from_schema(merged, root, depth + 1, path)
    return _by_type(schema, _type_of(schema), root, depth, path)


def _by_type(schema: dict[str, Any], kind: str, root: dict[str, Any], depth: int, path: str) -> Any:
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: from_schema(props.get(name, {}), root, depth + 1, f"{path}.{name}" if path else name)
                for name in schema.get("required") or []}
    if kind == "array":
        count = int(schema.get("minItems") or 1)
        if count > MAX_ITEMS:  # a tool's schema (an MCP server's) asking for a billion items: an error, not a list
            raise ConfigError(f"the offline test model cannot fill {path or 'the value'!r}: its schema asks for at "
                              f"least {count:,} items (minItems), more than the {MAX_ITEMS:,} it makes; lower "
                              "minItems or test this tool with another model")
        item = from_schema(schema.get("items") or {}, root, depth + 1, f"{path or 'value'}[]")
        if schema.get("uniqueItems") and count > 1 and isinstance(item, (int, float)):
            return [item + i for i in range(count)]
        return [item] * count
    if kind == "integer":
        return _number(schema, 1, int)
    if kind == "number":
        return _number(schema, 1.0, float)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, path)


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind:
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _number(schema: dict[str, Any], value: Any, cast: type) -> Any:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and value < low or "exclusiveMinimum" in schema and value <= low:
        value = cast(low) + (1 if "exclusiveMinimum" in schema else 0)
    if high is not None and value > high or "exclusiveMaximum" in schema and value >= high:
        value = cast(high) - (1 if "exclusiveMaximum" in schema else 0)
    multiple = schema.get("multipleOf")
    if multiple:
        value = cast(multiple * max(1, round(value / multiple)))
    return cast(value)


def _string(schema: dict[str, Any], path: str = "") -> str:
    low = int(schema.get("minLength") or 0)
    high = schema.get("maxLength")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        from .patterns import PatternError, matching

        try:
            return matching(pattern, low, None if high is None else int(high))
        except PatternError as exc:
            raise ConfigError(
                f"parameter {path or 'value'!r} has pattern {pattern!r}: {exc}; give it a default or "
                "examples in its schema, or script this call with a scripted: model") from None
    text = _FORMATS.get(schema.get("format", ""), "a")
    if len(text) < low:
        text = text + "a" * (low - len(text))
    if high is not None and len(text) > high:
        text = text[: int(high)]
    return text


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        if not part:
            continue
        node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {**a, **b}
    if "properties" in a or "properties" in b:
        out["properties"] = {**a.get("properties", {}), **b.get("properties", {})}
        out["required"] = list(dict.fromkeys([*a.get("required", []), *b.get("required", [])]))
    return out


# -- zagent.Field ----------------------------------------------------------------


def from_field(field: Field, depth: int = 0) -> Any:
    """A value of ``field``'s type: its first example, else its default, else a short made-up value."""
    if field.examples:  # an example says more than a default (often empty) would
        return field.examples[0]
    if field.default is not None:
        return field.default
    kind = field.type
    if field.fields and kind in ("object", "string"):
        kind = "object"
    if kind == "object":
        if depth > _MAX_DEPTH:
            return {}
        return {f.name: from_field(f, depth + 1) for f in field.fields}
    if kind == "array":
        return [from_field(field.items, depth + 1)] if field.items is not None and depth <= _MAX_DEPTH else ["a"]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return f"example {field.name}"
