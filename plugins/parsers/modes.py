"""The five output modes: ``TitleParser`` (``title``), ``JsonParser`` (``json``), ``XmlParser`` (``xml``),
``StrParser`` (``str``), ``CustomParser`` (``custom``). Keys, titles and tags match field names in any case; a
field's first occurrence wins and extra ones are ignored (a JSON object giving one key twice is a ``ParseError``:
a decoder keeps the last); text values are stripped; an absent optional field gets its default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import msgspec
from zagent.errors import ConfigError, ParseError
from zagent.types import Field
from zagent.agentkit.fieldconvert import huge_int
from zagent.agentkit.fields import FieldSpec, compile_fields, describe
from zagent.agentkit.placeholders import placeholders

from . import jsontext
from .base import Parser, missing_error
from .lenient import label as _label
from .lenient import value_text
from .titles import TitleSyntax, loose_name
from .xmltext import ElementScanner, tag_name, xml_escape, xml_text

_encode = msgspec.json.encode
T = TypeVar("T")


def _present(values: dict[str, Any], spec: FieldSpec) -> Iterator[tuple[Field, Any]]:
    for f in spec.fields:
        if values.get(f.name) is not None:
            yield f, values[f.name]


def _memo(spec: FieldSpec, key: Any, make: Callable[[], T]) -> T:
    """Per-spec memo (regexes, lookup tables): built on first use, then reused (``key`` names what ``make`` makes)."""
    value: T | None = spec.cache.get(key)
    if value is None:
        value = spec.cache[key] = make()
    return value


# -- title ------------------------------------------------------------------------


class TitleParser(Parser):
    """Markdown sections: ``## field`` then its content; ``title_format`` changes the title line (``titles``).

    A string field's section runs to the next title (the last one to the end of the reply); a typed one ends at
    its JSON value, code fence or first blank line.
    """

    name = "title"
    option_names = frozenset({"title_format"})

    def __init__(self, title_format: str = "## {title}"):
        super().__init__(title_format=title_format)

    def _syntax(self, spec: FieldSpec, fmt: str) -> TitleSyntax:
        return _memo(spec, ("title-syntax", fmt),
                     lambda: TitleSyntax(fmt, {loose_name(n): n for n in spec.names}))

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        heads = list(self._syntax(spec, opts["title_format"]).scan(text))
        found: dict[str, Any] = {}
        for i, (_start, end, name, inline) in enumerate(heads):
            if name in found:
                continue
            content = text[end:heads[i + 1][0] if i + 1 < len(heads) else len(text)]
            if inline is not None:
                content = inline + "\n" + content
            found[name] = _section_value(content.strip(), spec.by_name[name])
        if not found:
            raise missing_error(spec, found, text, f"sections titled like {opts['title_format']!r}")
        return found

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        fmt = opts["title_format"]
        blocks = [f"{_title(fmt, f.name)}\n<{_label(f)}>" for f in spec.fields]
        return ("Format your reply as sections, one per field below, in this order. Write each title on its "
                "own line exactly as shown, with the content on the lines below it:\n\n"
                + "\n\n".join(blocks)
                + "\n\nWrite arrays and objects as JSON. Do not add other sections.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        fmt = opts["title_format"]
        return "\n\n".join(f"{_title(fmt, f.name)}\n{value_text(v)}" for f, v in _present(values, spec))


def _title(fmt: str, name: str) -> str:
    """A title line: ``title_format`` through the safe renderer (``{title}`` only; parsed once, cached)."""
    return placeholders(fmt, _TITLE, "title_format").render({"title": name})


_TITLE = frozenset({"title"})
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def _section_value(content: str, field: Any) -> str:
    """A typed (non-string) section ends at its JSON value, fence or first paragraph; prose after is not a value."""
    if field.type == "string" or not content:
        return content
    if content[0] in "[{":
        try:
            msgspec.json.decode(content)
            return content
        except jsontext.DECODE_ERRORS:
            pass
        end = jsontext.balanced_end(content, 0)
        return content[:end] if end else content
    if content.startswith("```"):
        close = content.find("```", 3)
        return content[:close + 3] if close > 0 else content
    para = _PARAGRAPH.search(content)
    return content[:para.start()] if para else content


# -- json -------------------------------------------------------------------------


class JsonParser(Parser):
    """The first JSON object in the reply (bare, fenced or in prose), leniently decoded."""

    name = "json"
    option_names = frozenset({"fence"})
    json_fallback = False  # it reads JSON objects already

    def __init__(self, fence: bool = False):
        super().__init__(fence=fence)

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        names = set(spec.names)
        obj = jsontext.first_object(text, names)
        if obj is None:  # perhaps a number too large for a float (1e400): say so rather than "no JSON"
            obj = jsontext.first_object(text, names, decode=jsontext.decode_big)
            if obj is None:
                digits = _LONG_DIGITS.search(text)
                if digits is not None:  # a whole number longer than any decoder reads
                    raise ParseError(f"the reply holds a number of {len(digits.group()):,} digits, out of range "
                                     "(not a 64-bit integer); ask the model for numbers a 64-bit type holds",
                                     raw=text, missing=list(spec.required))
                raise missing_error(spec, {}, text, "JSON object")
        found = {n: obj[n] for n in spec.names if n in obj}
        if len(found) < len(spec.names):
            for key, value in obj.items():
                name = spec.lookup(key) if isinstance(key, str) else None
                if name is not None and name not in found:
                    found[name] = value
        jsontext.refuse_duplicate_keys(text, names)
        return _no_big_numbers(found, spec, text)

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        lines = [f'  "{_json_key(f.name)}": <{_label(f)}>' for f in spec.fields]
        return ("Reply with a single JSON object and nothing else, with these keys:\n{\n"
                + ",\n".join(lines) + "\n}\nUse JSON types: strings in double quotes, numbers and "
                "true/false unquoted, arrays as [...], objects as {...}.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        body = _encode({f.name: v for f, v in _present(values, spec)}).decode()
        return f"```json\n{body}\n```" if opts.get("fence") else body


_LONG_DIGITS = re.compile(r"\d{1000,}")


def _no_big_numbers(found: dict[str, Any], spec: FieldSpec, raw: str) -> dict[str, Any]:
    """A string field keeps a too-large number (a float, or an integer outside 64 bits) as its text; any other
    field holding one is a ParseError."""
    bad: dict[str, str] = {}
    for name, value in found.items():
        big: Any = jsontext.has_big(value)
        kind = "a finite 64-bit float"
        if big is None:
            if spec.by_name[name].type == "number":  # a long whole number is a finite float there
                continue
            big, kind = huge_int(value), "a 64-bit integer"
            if big is None:
                continue
        if value is big and spec.by_name[name].type == "string":
            found[name] = str(big)
            continue
        literal = str(big) if len(str(big)) <= 40 else str(big)[:37] + "..."
        bad[name] = f"the number {literal} is out of range (not {kind})"
    if bad:
        what = "; ".join(f"{n}: {r}" for n, r in bad.items())
        raise ParseError(f"output field(s) hold numbers out of range: {what}; ask the model for finite numbers "
                         f"(e.g. with the parser's repair prompt)", raw=raw, invalid=bad,
                         missing=[n for n in spec.required if n not in found])
    return found


def _json_key(name: str) -> str:
    return _encode(name).decode()[1:-1]


# -- xml --------------------------------------------------------------------------

_CHILD = re.compile(r"<([A-Za-z_][\w.-]{0,63})(?:\s[^<>]*)?>")
_ITEM_SCANNERS: dict[str, ElementScanner] = {}


def _child_items(body: str) -> Any:
    """A list body written as child elements of any one name (``<item>``, ``<string>``, ``<li>``...).

    The first child's tag names the items; ``None`` when the body does not start
    with an element (then it is read as text).
    """
    m = _CHILD.match(body)
    if m is None:
        return None
    tag = m.group(1).lower()
    scanner = _ITEM_SCANNERS.get(tag)
    if scanner is None:
        if len(_ITEM_SCANNERS) > 64:
            _ITEM_SCANNERS.clear()
        scanner = _ITEM_SCANNERS[tag] = ElementScanner([tag])
    items = []
    for _t, b in scanner.elements(body):
        items.append(xml_text(b))
    return items if items else None


class XmlParser(Parser):
    """``<field>value</field>`` elements; nested markup is kept as text, CDATA verbatim."""

    name = "xml"
    option_names = frozenset()

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        by_tag = _memo(spec, "xml-tags", lambda: {tag_name(n).lower(): n for n in spec.names})
        scanner = _memo(spec, "xml-scanner", lambda: ElementScanner(by_tag))
        found: dict[str, Any] = {}
        for tag, body in scanner.elements(text):
            name = by_tag[tag.lower()]
            if name not in found:
                found[name] = self._value(body, spec.by_name[name])
        if not found:
            raise missing_error(spec, found, text, "XML elements")
        return found

    def _value(self, body: str, field: Any) -> Any:
        lead = body.lstrip()
        if field.type == "object" and field.fields and lead.startswith("<") and not lead.startswith("<![CDATA["):
            inner = compile_fields(list(field.fields))
            try:
                return self._extract(body, inner, {})
            except ParseError:
                return xml_text(body)
        if field.type == "array" and lead.startswith("<") and not lead.startswith("<![CDATA["):
            items = _child_items(lead)
            if items is not None:
                return items
        return xml_text(body)

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        lines = [f"<{tag_name(f.name)}>{_label(f)}</{tag_name(f.name)}>" for f in spec.fields]
        return ("Reply with one XML element per field below, in this order:\n" + "\n".join(lines)
                + "\nWrite arrays and objects inside their element as JSON. Wrap text that contains < or & "
                "in <![CDATA[ ... ]]>.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        return "\n".join(f"<{tag_name(f.name)}>{xml_escape(value_text(v))}</{tag_name(f.name)}>"
                         for f, v in _present(values, spec))


# -- str --------------------------------------------------------------------------


class StrParser(Parser):
    """The whole reply (stripped) is the value of every declared field (EvoAgentX: "原文赋给每个字段")."""

    name = "str"
    option_names = frozenset({"strip"})
    structured = False  # any text is a value

    def __init__(self, strip: bool = True):
        super().__init__(strip=strip)

    def _fields(self, spec: FieldSpec) -> Any:
        if not spec.fields:
            raise ConfigError("mode 'str' needs at least one output field; declare one (e.g. 'answer')")
        return spec.fields

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        value = text.strip() if opts.get("strip", True) else text
        if value == "":
            return {}
        unfenced = jsontext.FENCE.sub(lambda m: m.group(2), value).strip() if "```" in value else value
        return {f.name: value if f.type == "string" else unfenced for f in self._fields(spec)}

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        fields = self._fields(spec)
        if len(fields) > 1:
            return "Reply with plain text only, with no sections or labels: the whole reply is the answer."
        return f"Reply with the {fields[0].name} only ({_label(fields[0])}), with no other text."

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        value = next((values[f.name] for f in self._fields(spec) if values.get(f.name) is not None), None)
        return "" if value is None else value_text(value)


# -- custom -----------------------------------------------------------------------


class CustomParser(Parser):
    """A user's function: ``parse_func(text, fields) -> dict`` (or ``parse_func(text)``).

    Options: ``parse_func`` (required), ``render_func(values, fields) -> str`` (default: JSON), ``instructions``
    (text, or a function of the fields; default: the field spec as JSON). Values it returns are converted like
    any other mode's; any exception it raises becomes a ``ParseError``.
    """

    name = "custom"
    option_names = frozenset({"parse_func", "render_func", "instructions"})
    lenient = False  # the user's function decides what it accepts
    structured = False  # unknown: the format stays in the first prompt

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        func = opts.get("parse_func")
        if func is None:
            raise ConfigError("mode 'custom' needs parse_func=...: a function (text, fields) -> dict")
        try:
            result = _call(func, text, spec)
        except ParseError as exc:
            exc.raw = exc.raw or text
            raise
        except Exception as exc:
            raise ParseError(f"custom parse_func {getattr(func, '__name__', func)!r} failed: "
                             f"{type(exc).__name__}: {exc}; fix the function or the reply", raw=text) from exc
        return _as_values(result, spec, text)

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        given = opts.get("instructions")
        if isinstance(given, str):
            return given
        if callable(given):
            made: str = given(spec.fields)  # the instructions function's contract: fields -> str
            return made
        return "Reply with these output fields:\n" + describe(spec)

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        func = opts.get("render_func")
        if func is not None:
            rendered: str = _call(func, values, spec)  # render_func's contract: values -> str
            return rendered
        return _encode({f.name: v for f, v in _present(values, spec)}).decode()


def _call(func: Callable[..., Any], first: Any, spec: FieldSpec) -> Any:
    """Call a user function with ``(first)`` or ``(first, fields)``, whichever it accepts."""
    return func(first) if _takes_one(func) else func(first, spec.fields)


_ARITY: dict[Any, bool] = {}


def _takes_one(func: Callable[..., Any]) -> bool:
    try:
        return _ARITY[func]
    except (KeyError, TypeError):
        pass
    import inspect

    try:
        params = [p for p in inspect.signature(func).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
        one = len(params) == 1 and params[0].kind is not params[0].VAR_POSITIONAL
    except (TypeError, ValueError):
        one = False
    try:
        if len(_ARITY) > 256:
            _ARITY.clear()
        _ARITY[func] = one
    except TypeError:  # unhashable callable
        pass
    return one


def _as_values(result: Any, spec: FieldSpec, raw: str) -> dict[str, Any]:
    if isinstance(result, msgspec.Struct):
        result = msgspec.to_builtins(result)
    if isinstance(result, dict):
        return result
    if len(spec.fields) == 1 and result is not None:
        return {spec.fields[0].name: result}
    raise ParseError(f"custom parse_func returned {type(result).__name__}, expected a dict of field values; "
                     "return {field_name: value, ...}", raw=raw)
