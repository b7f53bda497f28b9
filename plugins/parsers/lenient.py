"""Lenient, honest reading shared by every output mode, applied after the mode's own reading (``Parser._read``):
a JSON object holding every required field stands in for a failed or incomplete reading, self-wrapped values
are unwrapped, and a value echoing the format's placeholder is a ``ParseError``. Nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

import msgspec
from zagent.errors import ParseError
from zagent.types import Field
from zagent.agentkit.fields import FieldSpec

from . import jsontext

_encode = msgspec.json.encode
_TYPES = r"(?:string|integer|number|boolean|object|array|str|int|float|bool|dict|list)"
# "<string, required: ...>", "array of string, optional", "object {a: string}, required", with or without <>;
# matched on stripped text: no ``\s*`` before the end, which made each ", required" cost 400**2 steps
_PLACEHOLDER = re.compile(
    rf"^[<(]?\s*(?:array of\s+)*{_TYPES}\b[^\n<>]{{0,200}}?,\s*(?:required|optional)\b[^\n]{{0,400}}?[>)]?$",
    re.IGNORECASE)
# the label with the type filled in by the model: "<France, required: Paris>", "Paris, optional"
_FILLED = re.compile(r"^\s*[<(]?\s*[^,\n<>()]{1,60},\s*(?:required|optional)\s*(?::|,\s*default\b|[>)]|$)",
                     re.IGNORECASE)
_MAX_CHECK = 800  # placeholders are short: longer values are not checked


def value_text(value: Any) -> str:
    """A value as reply text: strings as they are, everything else as JSON."""
    if isinstance(value, str):
        return value
    return _encode(value).decode()


def kind(field: Field) -> str:
    """The type as prompt text, nested members included: ``array of object {a: string, b: integer}``."""
    if field.type == "array" and field.items is not None:
        return f"array of {kind(field.items)}"
    if field.type == "object" and field.fields:
        return "object {" + ", ".join(f"{_json_name(f.name)}: {kind(f)}" for f in field.fields) + "}"
    return field.type


def _json_name(name: str) -> str:
    return name if name.isidentifier() else _encode(name).decode()


def label(field: Field) -> str:
    """The placeholder text of a field in the instructions: ``string, required: the answer``."""
    req = "required" if field.required and field.default is None else (
        "optional" if field.default is None else f"optional, default {value_text(field.default)}")
    text = f"{kind(field)}, {req}"
    return f"{text}: {field.description}" if field.description else text


# -- the JSON object fallback ------------------------------------------------------


def json_values(text: str, spec: FieldSpec) -> Optional[dict[str, Any]]:
    """The declared fields of a JSON object in ``text`` if it holds every required one, else ``None``."""
    if "{" not in text:
        return None
    try:
        obj = jsontext.first_object(text, set(spec.names) | {n.lower() for n in spec.names})
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    found: dict[str, Any] = {}
    for key, value in obj.items():
        name = spec.lookup(key) if isinstance(key, str) else None
        if name is not None and name not in found and value is not None:
            found[name] = value
    if not found or any(n not in found for n in spec.required):
        return None
    jsontext.refuse_duplicate_keys(text, set(spec.names) | {n.lower() for n in spec.names})
    return found


def lacks_required(values: Mapping[str, Any], spec: FieldSpec) -> bool:
    return any(values.get(n) is None for n in spec.required)


# -- self-wrapped values --------------------------------------------------------------


def _without_echoed_tags(value: str) -> str:
    r"""``value`` without a leading ``<example>`` and a trailing ``</example>`` (any case) and the space around them;
    string operations: the regex ``\s*</example>\s*$`` searched from every space of a long run, quadratic."""
    head = value.lstrip()
    if head[:9].lower() == "<example>":
        value = head[9:].lstrip()
    tail = value.rstrip()
    if tail[-10:].lower() == "</example>":
        value = tail[:-10].rstrip()
    return value


def unwrap(values: dict[str, Any], spec: FieldSpec) -> dict[str, Any]:
    """Replace each text value that is a JSON object keyed by its own field name with that key's value, and
    drop the repair prompt's ``<example>``/``</example>`` markers a model copied around a value."""
    out = values
    for name, value in values.items():
        field = spec.by_name.get(name)
        if isinstance(value, (list, dict)) and field is not None and field.type == "string":
            if out is values:  # a text field answered with JSON structure: its JSON text, as written
                out = dict(values)
            out[name] = value = _encode(value).decode()
            continue
        if isinstance(value, str) and "example>" in value:
            bare = _without_echoed_tags(value)
            if bare != value:
                if out is values:
                    out = dict(values)
                out[name] = value = bare
        if not isinstance(value, str) or "{" not in value:
            continue
        field = spec.by_name.get(name)
        if field is None or (field.type == "object" and any(f.name == name for f in field.fields or ())):
            continue
        inner = _self_keyed(value, name)
        if inner is not _NONE:
            if out is values:
                out = dict(values)
            out[name] = inner
    return out


_NONE = object()


def _self_keyed(text: str, name: str) -> Any:
    body = text.strip()
    if body.startswith("```"):
        m = jsontext.FENCE.match(body)
        body = m.group(2).strip() if m else body
    if not (body.startswith("{") and body.endswith("}")):
        return _NONE
    try:
        obj = jsontext.loads(body)
    except (ValueError, RecursionError):
        return _NONE
    if not isinstance(obj, dict):
        return _NONE
    low = name.lower()
    keys = [k for k in obj if isinstance(k, str) and k.strip().lower() == low]
    if not keys or obj[keys[0]] is None:
        return _NONE
    jsontext.refuse_duplicate_keys(body)  # {"n": 5, "n": 9999}: not the value a reader sees
    return obj[keys[0]]


# -- placeholder echoes ------------------------------------------------------------------


def check_placeholders(values: Mapping[str, Any], spec: FieldSpec, raw: str, hints: tuple[str, ...] = ()) -> None:
    """Raise ``ParseError`` if a string value (or a string item of a list) echoes a format placeholder.

    :param hints: extra texts that count as placeholders (the mode's own title
        or tag lines, e.g. ``## answer``).
    """
    bad: dict[str, str] = {}
    examples = _memo_examples(spec)
    labels = _memo_labels(spec)
    for name, value in values.items():
        field = spec.by_name.get(name)
        if field is None:
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str) and _is_placeholder(item, field, examples.get(name), hints, labels.get(name)):
                shown = item.strip()
                shown = shown if len(shown) <= 80 else shown[:77] + "..."
                bad[name] = f"it repeats the format's placeholder {shown!r} instead of giving a value"
                break
    if bad:
        what = "; ".join(f"{n}: {r}" for n, r in bad.items())
        raise ParseError(
            f"the reply copied the output format's placeholder text instead of answering ({what}); "
            "ask again, or use a model that follows the format", raw=raw, invalid=bad,
            missing=[n for n in spec.required if values.get(n) is None])


def _is_placeholder(text: str, field: Any, example: Any, hints: tuple[str, ...], own: Optional[str] = None) -> bool:
    if len(text) > _MAX_CHECK:
        return False
    s = text.strip()
    if not s:
        return False
    low = s.lower()
    if own is None:
        own = label(field).lower()
    if low in (own, f"<{own}>", f"({own})") or low in (h.lower() for h in hints):
        return True
    if isinstance(example, str) and low == example.lower():
        return True
    if isinstance(example, list) and any(isinstance(e, str) and low == e.lower() for e in example):
        return True
    return "," in s and bool(_PLACEHOLDER.match(s) or _FILLED.match(s))  # both need ", required|optional"


# -- the repair prompt's example ---------------------------------------------------------


def reply_as_example(raw: str, spec: FieldSpec, limit: int = 4000) -> Optional[dict[str, Any]]:
    """For a single string field, the previous reply itself as its value (the repair prompt then shows the
    model its own words in the required layout), else ``None``. Not when the reply is empty, too long, or
    itself a placeholder echo."""
    if len(spec.fields) != 1 or spec.fields[0].type != "string":
        return None
    text = raw.strip()
    if not text or len(text) > limit or _is_placeholder(text, spec.fields[0], None, ()):
        return None
    return {spec.fields[0].name: text}


def example_values(spec: FieldSpec) -> dict[str, Any]:
    """Concrete example values for every field (strings say they are examples; the parser refuses them)."""
    return dict(_memo_examples(spec))


def _memo_labels(spec: FieldSpec) -> dict[str, str]:
    """Each field's ``label``, lower-cased (what a placeholder echo is compared with), made once per spec."""
    found = spec.cache.get("lenient-labels")
    if found is None:
        found = spec.cache["lenient-labels"] = {f.name: label(f).lower() for f in spec.fields}
    return found


def _memo_examples(spec: FieldSpec) -> dict[str, Any]:
    found = spec.cache.get("lenient-examples")
    if found is None:
        found = spec.cache["lenient-examples"] = {f.name: _example(f, f.name) for f in spec.fields}
    return found


def _example(field: Any, name: str, nested: bool = False) -> Any:
    """An example value of ``field``; an array holds two items at the top, one inside another array's item (two
    at every level made 2**depth values: an array of arrays 40 deep never finished)."""
    words = re.sub(r"[\s_-]+", " ", name).strip() or "value"
    t = field.type
    if t == "integer":
        return 3
    if t == "number":
        return 2.5
    if t == "boolean":
        return True
    if t == "array":
        item = field.items
        if item is None or item.type == "string":
            return [f"first example {words} item"] + ([] if nested else [f"second example {words} item"])
        if item.type not in ("array", "object"):
            return [_example(item, words, True)] * (1 if nested else 2)
        return [_example(item, words, True) for _ in range(1 if nested else 2)]
    if t == "object":
        if field.fields:
            return {f.name: _example(f, f.name, nested) for f in field.fields}
        return {"key": "example value"}
    return f"An example {words}, written in full."
