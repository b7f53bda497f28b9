"""XML-ish text for the ``xml`` mode: ``ElementScanner(tags).elements(text)`` yields ``(tag, body)`` of each top-level
element of those tags, in O(len(text)). An element ends at its matching closing tag, else at the first closing
tag of its name, else at the next field's opening tag or the end. Also ``xml_text``, ``xml_escape``, ``tag_name``.
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
            rf"<(?:(?P<open>{alts})(?:\s[^<>]*?)?(?P<empty>/?)>|/(?P<close>{alts})\s*>|(?P<cdata>!\[CDATA\[))",
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
        ends: dict[int, tuple[int, int]] = {}
        stacks: dict[str, list[int]] = {}  # per tag: unmatched opens, innermost last
        fresh: dict[str, int] = {}  # per tag: opens on the stack from here on have seen no closing tag yet
        skip, cdata = 0, True
        for m in self.regex.finditer(text):
            start, end = m.span()
            if start < skip:  # inside a CDATA section
                continue
            tag, empty, close, marker = m.groups()
            if tag is not None:
                opens.append((start, end, tag, bool(empty)))
                if not empty:
                    stack = stacks.get(key := tag.lower())
                    if stack is None:
                        stack = stacks[key] = []
                        fresh[key] = 0
                    stack.append(len(opens) - 1)
            elif close is not None:
                stack = stacks.get(key := close.lower())
                if stack:
                    span = (start, end)
                    for k in stack[fresh[key]:]:  # their first closing tag (kept if none matches)
                        ends[k] = span
                    ends[stack.pop()] = span  # the matching one
                    fresh[key] = len(stack)
            elif cdata and marker is not None:
                stop = text.find("]]>", end)
                if stop >= 0:
                    skip = stop + 3
                else:
                    cdata = False  # no terminator anywhere after: the rest is plain text
        return opens, ends


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
            code = int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:])
        except ValueError:
            return m.group(0)
        # a surrogate (&#xD800;) is no character: decoded, the text could never be written out as UTF-8
        return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code <= 0xDFFF else m.group(0)
    return _ENTITY[ref]


def xml_escape(text: str) -> str:
    """Text safe inside an element: wrapped in CDATA when it holds markup, ``&`` or edge whitespace."""
    if ("<" not in text and "&" not in text and text == text.strip()) or not text:
        return text
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
