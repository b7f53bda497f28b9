"""Reply values to a field spec's result Struct, laxly (``"42"`` to 42, ``"yes"`` to True, a number to its text for
a string field, JSON text to an array or object): ``convert`` raises one ``ParseError`` naming every missing or
invalid field and keeping the raw text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import ParseError
from ..types import Field
from .fieldspec import FieldsIn, FieldSpec, _py_type, _type_label, compile_fields

__all__ = ["INT_MAX", "INT_MIN", "coerce_text", "convert", "huge_int", "to_dict"]

_TRUE = frozenset(("true", "yes", "y", "on", "1"))
_FALSE = frozenset(("false", "no", "n", "off", "0"))


def convert(data: Mapping[str, Any], fields: FieldsIn, *, raw: str = "") -> Any:
    """Convert ``data`` (parsed reply values) to the spec's Struct, laxly; ``ParseError`` names every problem.

    :param data: values by field name (extra keys are ignored).
    :param fields: the declaration or a ``FieldSpec``.
    :param raw: the model's raw reply, kept on the ``ParseError``.
    """
    spec = compile_fields(fields)
    missing = [n for n in spec.required if data.get(n) is None]
    values, invalid = _coerce_all(data, spec)
    fallback = ""
    if not missing and not invalid:
        try:
            return msgspec.convert(values, spec.struct, strict=False)
        except msgspec.ValidationError as exc:
            fallback = str(exc)
    for name, reason in _diagnose(values, spec).items():
        invalid.setdefault(name, reason)
    if not missing and not invalid:
        invalid["?"] = fallback
    raise _parse_error(missing, invalid, raw, spec)


def to_dict(value: Any) -> dict[str, Any]:
    """A converted Struct as a plain dict (nested Structs too), keyed by declared field names."""
    plain: dict[str, Any] = msgspec.to_builtins(value)
    return plain


def _coerce_all(data: Mapping[str, Any], spec: FieldSpec) -> tuple[dict[str, Any], dict[str, str]]:
    values: dict[str, Any] = {}
    invalid: dict[str, str] = {}
    for f in spec.fields:
        if f.name not in data or data[f.name] is None:
            continue
        try:
            values[f.name] = _coerce(data[f.name], f)
        except ValueError as exc:
            invalid[f.name] = str(exc)
    return values, invalid


def _coerce(value: Any, field: Field) -> Any:
    """Lax pre-conversion of one value; msgspec does the final check."""
    t = field.type
    if t in ("integer", "number") and _not_finite(value):
        raise ValueError(f"{value!r} is not a finite number; give a plain number")
    if t == "integer" and (problem := _int_problem(value)) is not None:
        raise ValueError(problem)
    if t == "string":
        if isinstance(value, (bool, int, float)):
            return msgspec.json.encode(value).decode()
        return value
    if isinstance(value, str):
        if t == "boolean":
            return _bool(value)
        if t in ("integer", "number"):
            return _strip_markup(value)
        if t in ("array", "object"):
            value = coerce_text(value, field)
    if t == "array" and field.items is not None and isinstance(value, list):
        return [_coerce(v, field.items) for v in value]
    if t == "object" and field.fields and isinstance(value, Mapping):
        inner = compile_fields(list(field.fields))
        out, invalid = _coerce_all(value, inner)
        if invalid:
            raise ValueError("; ".join(f"{k}: {v}" for k, v in invalid.items()))
        return {**value, **out}
    if t in ("array", "object") and (problem := _int_problem(huge_int(value))) is not None:
        raise ValueError(problem)  # untyped items: as json mode, no whole number a 64-bit type cannot hold
    return value


def huge_int(value: Any) -> Any:
    """The first whole number (not a bool; depth first, in order) in decoded data ``value`` outside
    ``INT_MIN``..``INT_MAX``, the range a 64-bit integer type holds, or ``None``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if not INT_MIN <= item <= INT_MAX:
                return item
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return None


#: the whole numbers an integer field takes: what a 64-bit integer type holds (signed if negative, else unsigned)
INT_MIN, INT_MAX = -2**63, 2**64 - 1


def _int_problem(value: Any) -> "str | None":
    """Why ``value`` (an int, or its text) is out of an integer field's range (``INT_MIN``..``INT_MAX``), or None."""
    if isinstance(value, str):
        text = _strip_markup(value)
        digits = text.lstrip("+-").lstrip("0")
        if not (digits.isascii() and digits.isdigit()) or len(digits) < 19:
            return None
        if len(digits) > 20:  # no 64-bit value has more digits (nor does int() take thousands)
            return (f"the number of {len(digits):,} digits ({text[:20]}...) is out of range (not a 64-bit "
                    "integer); give a smaller whole number")
        value = int(text)
    if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        literal = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
        return f"the number {literal} is out of range (not a 64-bit integer); give a smaller whole number"
    return None


def _not_finite(value: Any) -> bool:
    """inf, -inf and nan, as floats or as text: valid Python floats, but no JSON number means them."""
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    return isinstance(value, str) and value.strip().lower().lstrip("+-") in ("inf", "infinity", "nan")


def _bool(text: str) -> Any:
    low = _strip_markup(text).lower().rstrip(".")
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    return text


def _strip_markup(text: str) -> str:
    return text.strip().strip("*`_").strip()


_FENCE = re.compile(r"^\s*```[\w-]*[ \t]*\n?(.*?)\n?```\s*$", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")


def coerce_text(text: str, field: Field) -> Any:
    """Decode an array/object field given as text: JSON (maybe fenced), or a bullet list for arrays."""
    m = _FENCE.match(text)
    body = (m.group(1) if m else text).strip()
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        pass
    if field.type == "array":
        lines = [ln for ln in body.splitlines() if ln.strip()]
        items = [_BULLET.match(ln) for ln in lines]
        if lines and all(items):
            return [i.group(1).strip() for i in items if i is not None]
        raise ValueError("expected a JSON array or a bullet list")
    raise ValueError("expected a JSON object")


def _diagnose(values: dict[str, Any], spec: FieldSpec) -> dict[str, str]:
    """Per-field reasons why values do not convert (slow path only, after a failure)."""
    invalid: dict[str, str] = {}
    for f in spec.fields:
        if f.name not in values:
            continue
        try:
            msgspec.convert(values[f.name], _py_type(f, "Check"), strict=False)
        except msgspec.ValidationError as e:
            msg = str(e)
            got = _short(values[f.name])
            invalid[f.name] = f"{msg} (got {got})" if not msg.startswith("Expected") or " - at " in msg else f"expected {_type_label(f)}, got {got}"
    return invalid


def _parse_error(missing: list[str], invalid: dict[str, str], raw: str, spec: FieldSpec) -> ParseError:
    parts = []
    if missing:
        parts.append(f"missing required field(s): {', '.join(missing)}")
    if invalid:
        parts.append("invalid field(s): " + "; ".join(f"{k}: {v}" for k, v in invalid.items()))
    return ParseError(
        f"reply does not match the output fields ({'; '.join(parts)}); ask the model again with the "
        f"field spec ({', '.join(spec.names)}), e.g. through the parser's repair prompt",
        raw=raw, missing=missing, invalid=invalid,
    )


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
