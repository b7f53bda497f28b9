"""XML-ish text for the ``xml`` mode: finding field elements, element text, escaping.

``ElementScanner(tags).elements(text)`` yields ``(tag, body)`` for each
top-level element of those tags, left to right, in O(len(text)):

- one pass finds every opening tag, closing tag and CDATA section (CDATA is
  skipped: markup inside it is text; an unterminated one is plain text);
- an element ends at its matching closing tag, nesting counted, so
  ``<a>outer <a>inner</a> tail</a>`` has the body ``outer <a>inner</a> tail``;
- without a matching one (an unbalanced ``<a>`` mentioned in the text), at the
  first closing tag of its name after it;
- without any (a truncated reply), at the next field's opening tag or the end;
- elements inside a reported body are not reported again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_ENTITIES = re.compile(r"&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);")
_ENTITY = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_TAG_SAFE = re.compile(r"[^\w.-]")


def tag_name(name: str) -> str:
    """The XML tag used for a field name (characters not allowed in tags become ``_``)."""
    tag = _TAG_SAFE.sub("_", name.strip())
    return tag if tag and (tag[0].isalpha() or tag[0] == "_") else "_" + tag


class ElementScanner:
    """Finds the elements of a fixed set of tags (any case) in a text; see the module docstring."""

    __slots__ = ("regex",)

    def __init__(self, tags: Iterable[str]):
        alts = "|".join(sorted(map(re.escape, set(tags)), key=len, reverse=True))
        # attributes stop at < or > so that every failed attempt scans only up to the next tag
        self.regex = re.compile(
            rf"<(?:(?P<open>{alts})(?:\s[^<>]*?)?(?P<empty>/?)|/(?P<close>{alts})\s*)>|(?P<cdata><!\[CDATA\[)",
            re.IGNORECASE)

    def elements(self, text: str) -> Iterator[tuple[str, str]]:
        """``(tag as written, body)`` of each top-level element, left to right."""
        opens, ends = self._pair(text)
        pos = 0
        for k, (start, end, tag, empty) in enumerate(opens):
            if start < pos:
                continue
            if empty:
                pos = end
                yield tag, ""
                continue
            close = ends.get(k)
            if close is None:
                pos = opens[k + 1][0] if k + 1 < len(opens) else len(text)
                yield tag, text[end:pos]
            else:
                pos = close[1]
                yield tag, text[end:close[0]]

    def _pair(self, text: str) -> tuple[list[tuple[int, int, str, bool]], dict[int, tuple[int, int]]]:
        """Every opening tag ``(start, end, tag, empty)`` and, by its index, the span of the tag closing it."""
        opens: list[tuple[int, int, str, bool]] = []
        matched: dict[int, tuple[int, int]] = {}
        first: dict[int, tuple[int, int]] = {}  # first closing tag of the same name after an open
        stacks: dict[str, list[int]] = {}
        waiting: dict[str, list[int]] = {}  # opens that have not seen a closing tag of their name yet
        search, pos, cdata = self.regex.search, 0, True
        while (m := search(text, pos)) is not None:
            pos = m.end()
            if m.group("cdata") is not None:
                if cdata:
                    stop = text.find("]]>", pos)
                    if stop >= 0:
                        pos = stop + 3
                    else:
                        cdata = False  # no terminator anywhere after: the rest is plain text
                continue
            tag = m.group("open")
            if tag is not None:
                empty = bool(m.group("empty"))
                opens.append((m.start(), pos, tag, empty))
                if not empty:
                    key = tag.lower()
                    stacks.setdefault(key, []).append(len(opens) - 1)
                    waiting.setdefault(key, []).append(len(opens) - 1)
                continue
            key = m.group("close").lower()
            span = (m.start(), pos)
            for k in waiting.pop(key, ()):
                first[k] = span
            stack = stacks.get(key)
            if stack:
                matched[stack.pop()] = span
        return opens, {**first, **matched}


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
