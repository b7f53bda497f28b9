"""Field declarations compiled once: ``compile_fields(decl)`` (cached) gives the normalised ``Field`` tuple, the
``msgspec`` result Struct (nested objects as nested Structs) and the JSON schema; ``json_schema`` and ``describe``
render it for prompts. A bad declaration is a ``ConfigError``.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable, Iterator, Optional, Union

import msgspec

from ..errors import ConfigError
from ..types import Field

__all__ = ["MAX_FIELDS", "MAX_FIELD_DEPTH", "FieldSpec", "FieldsIn", "TYPES", "compile_fields", "describe", "json_schema",
           "normalize"]

TYPES = ("string", "integer", "number", "boolean", "object", "array")
_ALIASES = {
    "string": "string", "str": "string", "text": "string",
    "integer": "integer", "int": "integer",
    "number": "number", "float": "number",
    "boolean": "boolean", "bool": "boolean",
    "object": "object", "dict": "object", "json": "object",
    "array": "array", "list": "array",
}
_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool}
_CACHE_MAX = 1024
_CACHE_KEY_MAX = 65_536  # bytes of a declaration's encoding cached (process-wide, whoever wrote the spec)

FieldsIn = Union["FieldSpec", Field, Mapping[str, Any], Sequence[Union[Field, Mapping[str, Any]]]]


class FieldSpec:
    """A compiled field declaration: normalised fields, result Struct type, schema. Build with ``compile_fields``."""

    __slots__ = ("fields", "names", "by_name", "required", "struct", "key", "_schema", "_lower", "cache")

    def __init__(self, fields: tuple[Field, ...], key: bytes):
        self.fields = fields
        self.names = tuple(f.name for f in fields)
        self.by_name = {f.name: f for f in fields}
        self.required = tuple(f.name for f in fields if _is_required(f))
        self.struct = _struct_for(fields, "Output")
        self.key = key
        self._schema: Optional[dict[str, Any]] = None
        self._lower = {f.name.lower(): f.name for f in fields}
        self.cache: dict[Any, Any] = {}  # per-spec memo for parsers (rendered instructions, regexes)

    def lookup(self, name: str) -> Optional[str]:
        """The declared name matching ``name`` exactly or case-insensitively (``None`` if unknown)."""
        if name in self.by_name:
            return name
        return self._lower.get(name.strip().lower())

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        return f"<FieldSpec {', '.join(f'{f.name}:{f.type}' for f in self.fields)}>"


_specs: dict[bytes, FieldSpec] = {}


#: what a field name may not hold: C0/C1 controls, bidi controls, quotes and backslashes (msgspec refuses
#: some of these deep inside with a ValueError; refused here as a ConfigError naming the field)
_BAD_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\"\\\\]")


def compile_fields(decl: FieldsIn) -> FieldSpec:
    """Normalise and compile a declaration once; the same declaration returns the cached ``FieldSpec``."""
    if isinstance(decl, FieldSpec):
        return decl
    key = _key(decl)
    spec = _specs.get(key)
    if spec is None:
        spec = FieldSpec(normalize(decl), key)
        if len(key) <= _CACHE_KEY_MAX:  # a spec's 1 MB description: compiled for its agent, never kept here
            if len(_specs) >= _CACHE_MAX:
                _specs.clear()
            _specs[key] = spec
    return spec


def _key(decl: Any) -> bytes:
    try:
        return msgspec.json.encode(decl)
    except (TypeError, msgspec.EncodeError):
        return msgspec.json.encode(decl, enc_hook=repr)


# -- normalising -------------------------------------------------------------


def normalize(decl: FieldsIn) -> tuple[Field, ...]:
    """Turn a declaration (Field, dict, or a list of them) into a tuple of checked ``Field``s.

    Raises ``ConfigError`` for unknown types, bad names and duplicate names.
    """
    if isinstance(decl, FieldSpec):
        return decl.fields
    if isinstance(decl, (Field, Mapping)):
        decl = [decl]
    elif isinstance(decl, (str, bytes)) or not isinstance(decl, Iterable):
        raise ConfigError(f"fields must be a list of zagent.Field or dicts, got {type(decl).__name__}")
    decl = list(decl)
    _check_count(decl)
    return _normalize_list(decl, "")


#: the most fields a declaration holds in all (members and items at every level), and how deep they nest: a YAML
#: file's aliases (``items: *level``) declare 2**16 fields in 2 KB, and each is compiled and shown to the model
MAX_FIELDS = 5_000
MAX_FIELD_DEPTH = 32


def _check_count(decl: list[Any]) -> None:
    """``ConfigError`` when ``decl`` holds more than ``MAX_FIELDS`` fields or nests deeper than ``MAX_FIELD_DEPTH``;
    counted without converting anything, and stopped at the limit (a shared part is counted each time it is used)."""
    stack: list[tuple[Any, int]] = [(item, 1) for item in decl]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_FIELDS or depth > MAX_FIELD_DEPTH:
            what = f"more than {MAX_FIELDS:,} fields" if count > MAX_FIELDS else f"fields nested more than " \
                f"{MAX_FIELD_DEPTH} levels deep"
            raise ConfigError(f"the field declaration holds {what} (members and array items at every level, each "
                              "time it is used); declare fewer, or ask for the nested part as a JSON string")
        get = item.get if isinstance(item, Mapping) else (lambda k, i=item: getattr(i, k, None))
        members, items = get("fields"), get("items")
        if isinstance(members, (list, tuple)):
            stack.extend((m, depth + 1) for m in members)
        if isinstance(items, (Mapping, Field)):
            stack.append((items, depth + 1))


def _normalize_list(items: list[Any], where: str) -> tuple[Field, ...]:
    out: list[Field] = []
    seen: set[str] = set()
    for item in items:
        field = _normalize_one(item, where)
        if field.name in seen:
            raise ConfigError(f"duplicate field name {where + field.name!r}; each field needs a unique name")
        seen.add(field.name)
        out.append(field)
    return tuple(out)


def _normalize_one(item: Any, where: str) -> Field:
    if isinstance(item, str):
        item = {"name": item}
    if isinstance(item, Mapping):
        try:
            item = msgspec.convert(_shorthand(item), Field)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"bad field declaration {dict(item)!r}: {exc}; expected keys "
                              f"name, type, description, required, default, items, fields, examples") from None
    elif not isinstance(item, Field):
        raise ConfigError(f"a field must be a zagent.Field, a dict or a name, got {type(item).__name__}")
    if not isinstance(item.name, str) or not item.name.strip():
        raise ConfigError(f"field {where}? has an empty name; give every field a non-empty name")
    if _BAD_NAME.search(item.name):  # a name is shown in help, errors and prompts: no terminal controls in it
        raise ConfigError(f"field {where + item.name!r} has a name with a control character, a quote or a "
                          "backslash; name fields with letters, digits, '_' and '-'")
    ftype = _ALIASES.get(str(item.type).strip().lower())
    if ftype is None:
        raise ConfigError(f"field {where + item.name!r} has unknown type {item.type!r}; "
                          f"use one of {', '.join(TYPES)}")
    if item.fields and ftype == "string":  # members given, type left at its default: a nested object
        ftype = "object"
    if item.items is not None and ftype == "string":
        ftype = "array"
    if item.fields and ftype != "object":
        raise ConfigError(f"field {where + item.name!r} lists member fields but has type {ftype!r}; "
                          "use type 'object' for nested fields")
    items = _normalize_one(item.items, f"{where}{item.name}[].") if item.items is not None else None
    members = list(_normalize_list(list(item.fields), f"{where}{item.name}.")) if item.fields else []
    if items is not None and ftype != "array":
        raise ConfigError(f"field {where + item.name!r} has 'items' but type {ftype!r}; use type 'array'")
    # always a copy: a caller mutating its Field later must not change a cached spec
    copy: Field = msgspec.structs.replace(item, type=ftype, items=items, fields=members)
    return copy


def _shorthand(decl: Any) -> Any:
    """Dict shorthands, at any depth: ``"items": "string"``, a bare name for a member, nameless items."""
    if isinstance(decl, str):
        return {"name": decl}
    if not isinstance(decl, Mapping):
        return decl
    d = dict(decl)
    items = d.get("items")
    if isinstance(items, str):
        d["items"] = {"name": "item", "type": items}
    elif isinstance(items, Mapping):
        d["items"] = _shorthand({"name": "item", **items})
    if isinstance(d.get("fields"), (list, tuple)):
        d["fields"] = [_shorthand(f) for f in d["fields"]]
    return d


def _is_required(field: Field) -> bool:
    return field.required and field.default is None


# -- struct types --------------------------------------------------------------


def _py_type(field: Field, owner: str) -> Any:
    if field.type in _PY_TYPES:
        return _PY_TYPES[field.type]
    if field.type == "array":
        return list[_py_type(field.items, owner + "Item")] if field.items is not None else list  # type: ignore[misc]
    if field.fields:
        return _struct_for(tuple(field.fields), owner + _camel(field.name))
    return dict[str, Any]


def _struct_for(fields: tuple[Field, ...], name: str) -> type:
    spec: list[tuple[Any, ...]] = []
    rename: dict[str, str] = {}
    for f in fields:
        attr = _attr_name(f.name, rename)
        if attr != f.name:
            rename[attr] = f.name
        t = _py_type(f, name)
        if _is_required(f):
            spec.append((attr, t))
        elif f.default is None:
            spec.append((attr, Optional[t], None))
        elif isinstance(f.default, (list, dict)):
            spec.append((attr, t, msgspec.field(default_factory=_copier(f.default))))
        else:
            spec.append((attr, t, f.default))
    return msgspec.defstruct(name, spec, kw_only=True, rename=rename or None)


def _copier(value: Any) -> Callable[[], Any]:
    return lambda: msgspec.convert(value, type(value))


_NON_ID = re.compile(r"\W")


def _attr_name(name: str, taken: dict[str, str]) -> str:
    attr = _NON_ID.sub("_", name)
    if not attr or attr[0].isdigit() or keyword.iskeyword(attr) or attr.startswith("__"):
        attr = "f_" + attr
    while attr in taken:
        attr += "_"
    return attr


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in _NON_ID.split(name) if p) or "Field"



# -- describing ----------------------------------------------------------------


def _type_label(field: Field) -> str:
    if field.type == "array" and field.items is not None:
        return f"array of {_type_label(field.items)}"
    return field.type


def _field_schema(field: Field) -> dict[str, Any]:
    s: dict[str, Any] = {"type": field.type}
    if field.description:
        s["description"] = field.description
    if field.default is not None:
        s["default"] = field.default
    if field.examples:
        s["examples"] = list(field.examples)
    if field.type == "array" and field.items is not None:
        s["items"] = _field_schema(field.items)
    if field.type == "object" and field.fields:
        s.update(_object_schema(field.fields))
    return s


def _object_schema(fields: Iterable[Field]) -> dict[str, Any]:
    fields = list(fields)
    out: dict[str, Any] = {"type": "object", "properties": {f.name: _field_schema(f) for f in fields}}
    required = [f.name for f in fields if _is_required(f)]
    if required:
        out["required"] = required
    return out


def json_schema(fields: FieldsIn) -> dict[str, Any]:
    """The JSON schema of the fields as one object (cached per spec; do not mutate the result)."""
    spec = compile_fields(fields)
    if spec._schema is None:
        spec._schema = _object_schema(spec.fields)
    return spec._schema


def _describe_field(field: Field) -> dict[str, Any]:
    d: dict[str, Any] = {"name": field.name, "type": _type_label(field)}
    if field.description:
        d["description"] = field.description
    d["required"] = _is_required(field)
    if field.default is not None:
        d["default"] = field.default
    if field.examples:
        d["example"] = field.examples[0]
    if field.type == "object" and field.fields:
        d["fields"] = [_describe_field(f) for f in field.fields]
    elif field.type == "array" and field.items is not None and field.items.fields:
        d["items"] = [_describe_field(f) for f in field.items.fields]
    return d


def describe(fields: FieldsIn) -> str:
    """The spec as indented JSON for prompts (a list of name/type/description/required; cached)."""
    spec = compile_fields(fields)
    text = spec.cache.get("describe")
    if text is None:
        encoded = msgspec.json.encode([_describe_field(f) for f in spec.fields], enc_hook=repr)
        text = spec.cache["describe"] = msgspec.json.format(encoded, indent=2).decode()
    return text
