"""Find JSON in model replies (``first_object``, ``iter_objects``, ``fences``) and decode it leniently.

``loads`` decodes strictly, then after one repair pass (trailing commas, quotes, bare keys, Python literals, raw
control characters in strings); it guesses no values and raises ``ValueError`` otherwise. ``decode_big`` keeps
numbers too large for a float as ``BigNumber``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any, Optional

import msgspec

from .quoted import QuotedScan

_decode = msgspec.json.decode
Decode = Callable[[str], Any]
#: what a failed decode raises: bad JSON, or nesting deeper than msgspec's recursion limit
DECODE_ERRORS = (msgspec.DecodeError, RecursionError)
_MAX_REPAIRS = 8
#: the longest candidate the lenient repair pass is tried on (a model's object needing repair is small)
MAX_REPAIR_CHARS = 256 * 1024
#: the search decodes at most this many times the text's length over all its candidates, then gives up
#: (a reply of 1.4 M nested objects otherwise re-decodes nearly all of itself at every start)
SEARCH_BUDGET = 4

FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
# Tokens that matter for bracket matching: strings (either quote) and brackets (linear: ``quoted``).
_BRACKETS = QuotedScan(r"[{}\[\]]")
# One pass of repairs, outside strings only (strings, groups dq and sq, are matched first and handled by _fix).
_REPAIR = QuotedScan(
    r"(?P<comma>,)(?=\s*[}\]])"
    r"|(?P<py>\b(?:True|False|None)\b)"
    r"|(?<=[{,])(?P<ws>\s*)(?P<key>[A-Za-z_$][\w$-]*)(?=\s*:)")
_CLOSER = {"{": "}", "[": "]"}
_PY = {"True": "true", "False": "false", "None": "null"}
_CONTROL = re.compile(r"[\x00-\x1f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def loads(text: str) -> Any:
    """Decode JSON text strictly, then leniently; raise ``ValueError`` if neither works."""
    try:
        return _decode(text)
    except DECODE_ERRORS:
        pass
    return loads_repaired(text)


def loads_repaired(text: str, decode: Decode = _decode) -> Any:
    """Decode after the lenient repair pass; raise ``ValueError`` if it still is not JSON."""
    try:
        return decode(repair(text))
    except DECODE_ERRORS as exc:
        raise ValueError(str(exc) if isinstance(exc, msgspec.DecodeError) else "nested too deeply") from None


def repair(text: str) -> str:
    """Fix trailing commas, quotes, bare keys, Python literals and raw control characters in strings."""
    out: list[str] = []
    pos = 0
    for m in _REPAIR.finditer(text):
        out += (text[pos:m.start()], _fix(m))
        pos = m.end()
    return "".join(out) + text[pos:] if out else text


def _fix(m: re.Match[str]) -> str:
    kind = m.lastgroup
    if kind == "dq":
        s = m.group("dq")
        return _CONTROL.sub(_escape_control, s) if _CONTROL.search(s) else s
    if kind == "sq":
        body = m.group("sq")[1:-1].replace("\\'", "'")
        return msgspec.json.encode(_unescape(body)).decode()
    if kind == "comma":
        return ""
    if kind == "py":
        return _PY[m.group("py")]
    return m.group("ws") + '"' + m.group("key") + '"'


def _escape_control(m: re.Match[str]) -> str:
    c = m.group(0)
    return _ESCAPES.get(c, "\\u%04x" % ord(c))


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    try:
        text: str = _decode('"' + body.replace('"', '\\"') + '"')  # a JSON string literal decodes to a str
        return text
    except DECODE_ERRORS:
        return body


def balanced_end(text: str, start: int) -> Optional[int]:
    """Index just past the bracket closing the one at ``start`` (strings skipped), or ``None``."""
    depth = 0
    for m in _BRACKETS.finditer(text, start):
        tok = m.group(0)
        if tok in "{[":
            depth += 1
        elif tok in "}]":
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def bracket_pairs(text: str, start: int = 0) -> dict[int, int]:
    """For every bracket opened at or after ``start``: its index -> the index just past its closer.

    One pass with a stack (strings skipped), so many candidate starts cost O(n) in all.
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACKETS.finditer(text, start):
        tok = m.group(0)
        if tok in "{[":
            stack.append(m.start())
        elif tok in "}]":
            if stack:
                pairs[stack.pop()] = m.end()
    return pairs


def iter_objects(text: str, opener: str = "{", limit: int = 64,
                 decode: Decode = _decode) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(start, end, value)`` for each decodable JSON value starting with ``opener``, left to right.

    Gives up after ``limit`` candidate starts that do not decode (and tries the
    lenient repair on the first few only), so garbage input stays cheap.
    """
    start = text.find(opener)
    if start < 0:
        return
    last = text.rfind(_CLOSER[opener])
    if last > start:  # fast path: prose, one JSON value, prose without brackets
        try:
            value = decode(text[start:last + 1])
        except DECODE_ERRORS:
            pass
        else:
            yield start, last + 1, value
            return
    pairs = bracket_pairs(text, start)
    tries = 0
    budget = SEARCH_BUDGET * len(text)
    while tries < limit and start >= 0:
        tries += 1
        end = pairs.get(start)
        if end is not None:
            budget -= end - start
            if budget < 0:
                return
            value = _try_decode(text[start:end], tries <= _MAX_REPAIRS and end - start <= MAX_REPAIR_CHARS, decode)
            if value is not _NOTHING:
                yield start, end, value
                start, tries = text.find(opener, end), tries - 1  # only failed candidates count
                continue
        start = text.find(opener, start + 1)


_NOTHING = object()


def _try_decode(text: str, lenient: bool, decode: Decode) -> Any:
    try:
        return decode(text)
    except DECODE_ERRORS:
        pass
    if not lenient:
        return _NOTHING
    try:
        return loads_repaired(text, decode)
    except ValueError:
        return _NOTHING


def fences(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Yield ``(start, end, language, body)`` for each Markdown code fence (an unclosed last one too)."""
    for m in FENCE.finditer(text):
        yield m.start(), m.end(), m.group(1).lower(), m.group(2)


def first_object(text: str, names: Optional[set[str]] = None, decode: Decode = _decode) -> Optional[dict[str, Any]]:
    """The first JSON object in ``text`` (whole text, then fences, then prose).

    With ``names``, an object holding at least one of those keys is preferred
    over an earlier one holding none (e.g. an example ``{}`` in the prose).
    ``decode=decode_big`` also accepts numbers too large for a float.
    """
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = decode(stripped)
            if isinstance(value, dict):
                return value
        except DECODE_ERRORS:
            pass
    fallback: Optional[dict[str, Any]] = None
    for source in _sources(text):
        for _s, _e, value in iter_objects(source, decode=decode):
            if not isinstance(value, dict):
                continue
            if not names or names.intersection(value):
                return value
            if fallback is None:
                fallback = value
    return fallback


class BigNumber(str):
    """A number literal too large for a 64-bit float (``1e400``), kept as its text by ``decode_big``."""

    __slots__ = ()


def _float_or_big(literal: str) -> Any:
    value = float(literal)
    return value if math.isfinite(value) else BigNumber(literal)


#: ``msgspec.json.decode`` that turns out-of-range numbers into ``BigNumber`` instead of failing
decode_big: Decode = msgspec.json.Decoder(float_hook=_float_or_big).decode


def has_big(value: Any) -> Optional[BigNumber]:
    """The first ``BigNumber`` in a decoded value (at any depth), or ``None``."""
    found: Optional[BigNumber] = _first(value, lambda item: isinstance(item, BigNumber))
    return found


def _first(value: Any, wanted: Callable[[Any], bool]) -> Any:
    """The first item of a decoded value (depth first, in order; without recursion) that is ``wanted``, or ``None``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if wanted(item):
            return item
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return None


def _sources(text: str) -> Iterator[str]:
    if "```" in text:
        for _s, _e, _lang, body in fences(text):
            yield body
    yield text


_KEY = re.compile(r'"((?:[^"\\]|\\.){0,256})"\s*:')


def duplicate_key(text: str, names: Optional[set[str]] = None) -> Optional[str]:
    """A key written twice in one object (at any depth) of the object ``first_object(text, names)`` reads, or
    ``None``. A decoder keeps the last value, a person or a regex reading the reply the first: the two disagree.
    Cheap unless some key string occurs twice in ``text``."""
    keys = _KEY.findall(text)
    if len(keys) == len(set(keys)):
        return None
    twice: dict[int, str] = {}

    def decode(candidate: str) -> Any:
        found: list[str] = []

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            seen: set[str] = set()
            for key, _ in items:
                if key in seen and not found:
                    found.append(key)
                seen.add(key)
            return dict(items)

        try:
            value = json.loads(candidate, object_pairs_hook=pairs, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise msgspec.DecodeError(str(exc)[:200]) from None
        if found:
            twice[id(value)] = found[0]
        return value

    obj = first_object(text, names, decode=decode)
    return twice.get(id(obj)) if obj is not None else None


def refuse_duplicate_keys(text: str, names: Optional[set[str]] = None) -> None:
    """``ParseError`` naming a key written twice in the object ``first_object(text, names)`` reads (any depth)."""
    twice = duplicate_key(text, names)
    if twice is not None:
        from zagent.errors import ParseError

        raise ParseError(f"the reply's JSON object gives the key {twice!r} more than once (a reader sees the first "
                         "value, the parser would keep the last); ask the model for each key once (e.g. with the "
                         "parser's repair prompt)", raw=text, invalid={twice: "given more than once"})


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
