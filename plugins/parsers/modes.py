"""The five built-in output modes: ``title``, ``json``, ``xml``, ``str`` and ``custom``.

Each finds the raw value of every declared field in the reply; conversion to
the declared types (``"42"`` -> 42, ``"yes"`` -> True, JSON text for arrays and
objects) is shared and lives in ``zagent.fields``. Regexes are compiled once
per field spec and option set and kept in ``FieldSpec.cache``.

Decisions (also in the README):
- text values are stripped of surrounding whitespace (``xml`` keeps CDATA verbatim);
- a field given twice: the first occurrence wins;
- ``xml``: an element whose closing tag is missing (a truncated reply) runs to
  the next field's opening tag or the end of the reply;
- keys/titles/tags match field names case-insensitively (``Final Answer`` matches
  ``final_answer``); extra keys and sections are ignored;
- optional fields that are absent get their declared default; nothing is guessed;
- ``title``: the last section runs to the end of the reply, so a string field
  there keeps any closing prose; a typed (non-string) section ends at its JSON
  value, code fence or first blank line, and text after it is not part of it.
- ``title``: a title is one line (``titles.TitleSyntax``, linear in the reply);
  CRLF line ends are fine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Optional

import msgspec
from zagent.errors import ConfigError, ParseError
from zagent.fields import FieldSpec, compile_fields, describe

from . import jsontext
from .base import Parser, missing_error
from .titles import TitleSyntax, loose_name

_encode = msgspec.json.encode


def value_text(value: Any) -> str:
    """A value as reply text: strings as they are, everything else as JSON."""
    if isinstance(value, str):
        return value
    return _encode(value).decode()


def _kind(field: Any) -> str:
    """The type as prompt text, nested members included: ``array of object {a: string, b: integer}``."""
    if field.type == "array" and field.items is not None:
        return f"array of {_kind(field.items)}"
    if field.type == "object" and field.fields:
        return "object {" + ", ".join(f"{_json_name(f.name)}: {_kind(f)}" for f in field.fields) + "}"
    return field.type


def _json_name(name: str) -> str:
    return name if name.isidentifier() else _encode(name).decode()


def _label(field: Any) -> str:
    req = "required" if field.required and field.default is None else (
        "optional" if field.default is None else f"optional, default {value_text(field.default)}")
    text = f"{_kind(field)}, {req}"
    return f"{text}: {field.description}" if field.description else text


def _present(values: dict[str, Any], spec: FieldSpec):
    for f in spec.fields:
        if values.get(f.name) is not None:
            yield f, values[f.name]


def _memo(spec: FieldSpec, key: Any, make: Callable[[], Any]) -> Any:
    """Per-spec memo (regexes, lookup tables): built on first use, then reused."""
    value = spec.cache.get(key)
    if value is None:
        value = spec.cache[key] = make()
    return value


# -- title ------------------------------------------------------------------------


class TitleParser(Parser):
    """Markdown sections: ``## field`` then its content; ``title_format`` changes the title line."""

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
        blocks = [f"{fmt.format(title=f.name)}\n<{_label(f)}>" for f in spec.fields]
        return ("Format your reply as sections, one per field below, in this order. Write each title on its "
                "own line exactly as shown, with the content on the lines below it:\n\n"
                + "\n\n".join(blocks)
                + "\n\nWrite arrays and objects as JSON. Do not add other sections.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        fmt = opts["title_format"]
        return "\n\n".join(f"{fmt.format(title=f.name)}\n{value_text(v)}" for f, v in _present(values, spec))


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

    def __init__(self, fence: bool = False):
        super().__init__(fence=fence)

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        obj = jsontext.first_object(text, set(spec.names))
        if obj is None:
            raise missing_error(spec, {}, text, "JSON object")
        found = {n: obj[n] for n in spec.names if n in obj}
        if len(found) < len(spec.names):
            for key, value in obj.items():
                name = spec.lookup(key) if isinstance(key, str) else None
                if name is not None and name not in found:
                    found[name] = value
        return found

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        lines = [f'  "{_json_key(f.name)}": <{_label(f)}>' for f in spec.fields]
        return ("Reply with a single JSON object and nothing else, with these keys:\n{\n"
                + ",\n".join(lines) + "\n}\nUse JSON types: strings in double quotes, numbers and "
                "true/false unquoted, arrays as [...], objects as {...}.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        body = _encode({f.name: v for f, v in _present(values, spec)}).decode()
        return f"```json\n{body}\n```" if opts.get("fence") else body


def _json_key(name: str) -> str:
    return _encode(name).decode()[1:-1]


# -- xml --------------------------------------------------------------------------

_ENTITIES = re.compile(r"&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);")
_ENTITY = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_ITEM_OPEN = re.compile(r"<(item)(?:\s[^>]*?)?(/?)>", re.IGNORECASE)
_CLOSERS: dict = {}
_TAG_SAFE = re.compile(r"[^\w.-]")


def tag_name(name: str) -> str:
    """The XML tag used for a field name (characters not allowed in tags become ``_``)."""
    tag = _TAG_SAFE.sub("_", name.strip())
    return tag if tag and (tag[0].isalpha() or tag[0] == "_") else "_" + tag


class XmlParser(Parser):
    """``<field>value</field>`` elements; nested markup is kept as text, CDATA verbatim."""

    name = "xml"
    option_names = frozenset()

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        by_tag = _memo(spec, "xml-tags", lambda: {tag_name(n).lower(): n for n in spec.names})
        opens = _memo(spec, "xml-open", lambda: re.compile(
            rf"<({'|'.join(sorted(map(re.escape, by_tag), key=len, reverse=True))})(?:\s[^>]*?)?(/?)>", re.IGNORECASE))
        found: dict[str, Any] = {}
        for tag, body in _elements(text, opens, spec.cache):
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
        if field.type == "array" and lead.lower().startswith("<item"):
            return [xml_text(b) for _t, b in _elements(body, _ITEM_OPEN, _CLOSERS)]
        return xml_text(body)

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        lines = [f"<{tag_name(f.name)}>{_label(f)}</{tag_name(f.name)}>" for f in spec.fields]
        return ("Reply with one XML element per field below, in this order:\n" + "\n".join(lines)
                + "\nWrite arrays and objects inside their element as JSON. Wrap text that contains < or & "
                "in <![CDATA[ ... ]]>.")

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        return "\n".join(f"<{tag_name(f.name)}>{xml_escape(value_text(v))}</{tag_name(f.name)}>"
                         for f, v in _present(values, spec))


def _elements(text: str, opens: re.Pattern[str], cache: dict) -> Iterator[tuple[str, str]]:
    """``(tag, body)`` of each top-level element whose tag ``opens`` matches, left to right.

    Linear in the text: CDATA sections are skipped while looking for the closing
    tag; an element without one (a truncated reply) runs to the next opening tag
    or the end; elements inside a consumed body are not reported.
    """
    pos = 0
    for m in opens.finditer(text):
        if m.start() < pos:
            continue
        tag = m.group(1)
        if m.group(2):  # <tag/>
            pos = m.end()
            yield tag, ""
            continue
        close = _find_close(text, m.end(), tag, cache)
        if close is None:
            nxt = opens.search(text, m.end())
            pos = nxt.start() if nxt else len(text)
            yield tag, text[m.end():pos]
        else:
            pos = close[1]
            yield tag, text[m.end():close[0]]


def _find_close(text: str, pos: int, tag: str, cache: dict) -> Optional[tuple[int, int]]:
    key = ("xml-close", tag.lower())
    closer = cache.get(key)
    if closer is None:
        closer = cache[key] = re.compile(rf"</{re.escape(tag)}\s*>|<!\[CDATA\[", re.IGNORECASE)
    cdata = True
    while (m := closer.search(text, pos)) is not None:
        if m.group(0)[1] != "!":
            return m.start(), m.end()
        pos = m.end()
        if cdata:
            end = text.find("]]>", pos)
            if end >= 0:
                pos = end + 3
            else:
                cdata = False  # no terminator anywhere after: the rest is plain text
    return None


def xml_text(body: str) -> str:
    """An element's text: CDATA kept verbatim, entities outside it decoded, surrounding space stripped."""
    if "<![CDATA[" not in body:
        return _unentity(body.strip())
    parts: list[str] = []
    pos = 0
    while (start := body.find("<![CDATA[", pos)) >= 0:
        end = body.find("]]>", start + 9)
        if end < 0:  # unterminated: the rest is plain text
            break
        parts.append(_unentity(body[pos:start]))
        parts.append(body[start + 9:end])
        pos = end + 3
    parts.append(_unentity(body[pos:]))
    parts[0] = parts[0].lstrip()
    parts[-1] = parts[-1].rstrip()
    return "".join(parts)


def _unentity(text: str) -> str:
    return _ENTITIES.sub(_entity, text) if "&" in text else text


def _entity(m: re.Match[str]) -> str:
    ref = m.group(1)
    if ref[0] == "#":
        try:
            return chr(int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:]))
        except (ValueError, OverflowError):
            return m.group(0)
    return _ENTITY[ref]


def xml_escape(text: str) -> str:
    """Text safe inside an element: wrapped in CDATA when it holds markup, ``&`` or edge whitespace."""
    if ("<" not in text and "&" not in text and text == text.strip()) or not text:
        return text
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


# -- str --------------------------------------------------------------------------


class StrParser(Parser):
    """The whole reply (stripped) is the value of the single declared field."""

    name = "str"
    option_names = frozenset({"strip"})

    def __init__(self, strip: bool = True):
        super().__init__(strip=strip)

    def _single(self, spec: FieldSpec) -> Any:
        if len(spec.fields) != 1:
            raise ConfigError(f"mode 'str' needs exactly one output field, got {len(spec.fields)} "
                              f"({', '.join(spec.names)}); use mode 'json', 'xml' or 'title' for several")
        return spec.fields[0]

    def _extract(self, text: str, spec: FieldSpec, opts: dict[str, Any]) -> dict[str, Any]:
        field = self._single(spec)
        value = text.strip() if opts.get("strip", True) else text
        if field.type != "string":
            value = jsontext.FENCE.sub(lambda m: m.group(2), value).strip() if "```" in value else value
        return {field.name: value} if value != "" else {}

    def _instructions(self, spec: FieldSpec, opts: dict[str, Any]) -> str:
        field = self._single(spec)
        return f"Reply with the {field.name} only ({_label(field)}), with no other text."

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        field = self._single(spec)
        value = values.get(field.name)
        return "" if value is None else value_text(value)


# -- custom -----------------------------------------------------------------------


class CustomParser(Parser):
    """A user's function: ``parse_func(text, fields) -> dict`` (or ``parse_func(text)``).

    Options: ``parse_func`` (required), ``render_func(values, fields) -> str``
    (default: JSON), ``instructions`` (text, or a function of the fields;
    default: the field spec as JSON). Values it returns are converted like any
    other mode's; any exception it raises becomes a ``ParseError``.
    """

    name = "custom"
    option_names = frozenset({"parse_func", "render_func", "instructions"})

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
            return given(spec.fields)
        return "Reply with these output fields:\n" + describe(spec)

    def _render(self, values: dict[str, Any], spec: FieldSpec, opts: dict[str, Any]) -> str:
        func = opts.get("render_func")
        if func is not None:
            return _call(func, values, spec)
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
