"""Typed outputs (pydantic-ai's ``output_type``): ``fields_for(cls)`` turns a pydantic model, msgspec ``Struct``,
dataclass or attrs class into output field declarations, from its JSON schema; ``as_output(cls, output)`` makes
the parsed answer an instance of it, or raises ``ValueError`` saying what does not fit (a re-ask's reason)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import attrs
import msgspec

from ..errors import ConfigError

__all__ = ["as_output", "fields_for", "is_output_type", "type_path"]

_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "array": "array",
          "object": "object"}
_MAX_DEPTH = 8  # nested (or self-referring) models below this are plain objects


def is_output_type(obj: Any) -> bool:
    """A class ``output_type`` takes: a pydantic model, a msgspec ``Struct``, a dataclass or an attrs class."""
    return inspect.isclass(obj) and (_pydantic(obj) or issubclass(obj, msgspec.Struct)
                                     or dataclasses.is_dataclass(obj) or attrs.has(obj))


def type_path(cls: type) -> str:
    """``"module:QualName"``: what a saved agent file names the class by."""
    return f"{cls.__module__}:{cls.__qualname__}"


def fields_for(cls: Any, where: str = "output_type") -> list[dict[str, Any]]:
    """Output field declarations (``name``, ``type``, ``description``, ``required``, ``default``, ``items``,
    ``fields``) of ``cls``'s properties; ``ConfigError`` naming ``where`` for anything but an output type."""
    if not is_output_type(cls):
        raise ConfigError(f"{where}: {cls!r} is not a pydantic model, msgspec Struct, dataclass or attrs class; "
                          "name one of those, or declare 'outputs' as a list of fields")
    try:
        schema = cls.model_json_schema() if _pydantic(cls) else msgspec.json.schema(cls)
    except Exception as exc:  # a field type the schema generator cannot describe
        raise ConfigError(f"{where}: no JSON schema for {cls.__qualname__}: {type(exc).__name__}: {exc}") from None
    defs = schema.get("$defs", {})
    root = _deref(schema, defs)
    if root.get("type") != "object" or not root.get("properties"):
        raise ConfigError(f"{where}: {cls.__qualname__} has no fields to ask the model for")
    return _fields(root, defs, 0)


def as_output(cls: Any, output: Any) -> Any:
    """``output`` (the parsed answer: a Struct or a dict) as an instance of ``cls``; ``ValueError`` with the
    validation error when it does not fit."""
    data = msgspec.to_builtins(output)
    if _pydantic(cls):
        try:
            return cls.model_validate(data)
        except ValueError as exc:  # pydantic's ValidationError: one short line per error, no links
            listed = getattr(exc, "errors", None)
            errors = listed() if callable(listed) else None
            if not errors:
                raise
            raise ValueError("; ".join(f"{'.'.join(map(str, e.get('loc', ()))) or 'answer'}: {e.get('msg')}"
                                       for e in errors[:10])) from None
    try:
        return msgspec.convert(data, cls, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None


def _pydantic(cls: Any) -> bool:
    return callable(getattr(cls, "model_json_schema", None)) and callable(getattr(cls, "model_validate", None))


def _deref(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    for _ in range(_MAX_DEPTH):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            break
        schema = {**defs.get(ref.rsplit("/", 1)[-1], {}), **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _fields(obj: dict[str, Any], defs: dict[str, Any], depth: int) -> list[dict[str, Any]]:
    required = set(obj.get("required", ()))
    return [_field(name, prop, defs, name in required, depth) for name, prop in obj["properties"].items()]


def _field(name: str, prop: dict[str, Any], defs: dict[str, Any], required: bool, depth: int) -> dict[str, Any]:
    prop = _deref(prop, defs)
    options = [_deref(o, defs) for o in prop.get("anyOf", prop.get("oneOf", []))]
    real = [o for o in options if o.get("type") != "null"]
    if options:  # Optional[X] (X or null): X, not required; a union of several: described, typed by the model
        required = required and len(real) == len(options)
        prop = {**(real[0] if len(real) == 1 else {}), **{k: prop[k] for k in ("description", "default") if k in prop}}
    kind = prop.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    field: dict[str, Any] = {"name": name, "type": _TYPES.get(str(kind), "string" if "enum" in prop else "object")}
    description = str(prop.get("description") or "")
    if "enum" in prop:
        shown = ", ".join(msgspec.json.encode(v).decode() for v in prop["enum"][:50])
        description = f"{description} (one of: {shown})".strip()
    if description:
        field["description"] = description
    examples = prop.get("examples") if isinstance(prop.get("examples"), list) else prop.get("enum", [])[:1]
    if examples:  # shown to models; the offline test model answers the first
        field["examples"] = list(examples[:5])
    if "default" in prop:
        field["default"], required = prop["default"], False
    field["required"] = required
    if field["type"] == "array" and isinstance(prop.get("items"), dict) and depth < _MAX_DEPTH:
        field["items"] = _field("item", prop["items"], defs, True, depth + 1)
    if field["type"] == "object" and prop.get("properties") and depth < _MAX_DEPTH:
        field["fields"] = _fields(prop, defs, depth + 1)
    return field
