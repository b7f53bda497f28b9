"""Title lines of the ``title`` mode, found in linear time (``TitleSyntax.scan``). A title is one line: the
format's prefix (``#`` alone: any heading level), optional bold or bullet markers, a field name in any case and
word separator, optional ``:``, the suffix; with an empty or ``:`` suffix, ``NAME: value`` counts too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Optional

from zagent.errors import ConfigError

_SP = " \t"
_BOLD = ("**", "__")
_LOOSE = re.compile(r"[\s_-]+")


def loose_name(name: str) -> str:
    """A name as titles match it: lower case, runs of whitespace/``_``/``-`` as one space."""
    return _LOOSE.sub(" ", name.strip().lower())


class TitleSyntax:
    """Recognises title lines of one ``title_format`` for one set of field names."""

    __slots__ = ("hashes", "inline", "lines", "memo", "names", "prefix", "suffix")

    def __init__(self, fmt: str, names: Mapping[str, str]):
        """``names``: loose name (``loose_name``) -> field name."""
        if "{title}" not in fmt:
            raise ConfigError(f"title_format {fmt!r} must contain '{{title}}', e.g. '## {{title}}'")
        prefix, _, suffix = fmt.partition("{title}")
        self.prefix, self.suffix = prefix.strip(), suffix.strip()
        self.hashes = bool(self.prefix) and set(self.prefix) == {"#"}
        self.inline = self.suffix in ("", ":")
        self.names = dict(names)
        # candidate lines: those whose first non-blank character can open a title (every line
        # when the prefix is empty); linear: only line starts are tried, each reading its indent once
        first = "" if not self.prefix else re.escape(self.prefix[0])
        self.lines = re.compile(rf"^[ \t]*[-+*_{first}]", re.MULTILINE | re.IGNORECASE) if first else None
        self.memo: dict[str, Optional[tuple[str, Optional[str]]]] = {}  # short line -> match result

    def scan(self, text: str) -> Iterator[tuple[int, int, str, Optional[str]]]:
        """``(start, end, field name, inline value or None)`` for each title line, in order.

        ``end`` is just past the line's newline (or the end of the text).
        """
        size = len(text)
        if self.lines is None:
            starts: Iterator[int] = _line_starts(text)
        else:
            starts = (m.start() for m in self.lines.finditer(text))
        for start in starts:
            nl = text.find("\n", start)
            stop = size if nl < 0 else nl
            hit = self._cached(text[start:stop - 1] if text.endswith("\r", start, stop) else text[start:stop])
            if hit is not None:
                yield start, size if nl < 0 else nl + 1, hit[0], hit[1]

    def _cached(self, line: str) -> Optional[tuple[str, Optional[str]]]:
        """``match``, remembered for short lines (titles repeat from reply to reply)."""
        if len(line) > 80:
            return self.match(line)
        try:
            return self.memo[line]
        except KeyError:
            pass
        if len(self.memo) >= 512:
            self.memo.clear()
        hit = self.memo[line] = self.match(line)
        return hit

    def match(self, line: str) -> Optional[tuple[str, Optional[str]]]:
        """``(field name, inline value or None)`` if ``line`` (no line break) is a title line."""
        for rest in self._heads(line.lstrip(_SP)):
            name = self._name(self._alone(rest))
            if name is not None:
                return name, None
            if self.inline:
                hit = self._inline(rest)
                if hit is not None:
                    return hit
        return None

    def _heads(self, s: str) -> list[str]:
        """What may follow the title's opening (prefix and/or bold marker), one entry per reading."""
        out = []
        if self.hashes:
            n = len(s) - len(s.lstrip("#"))
            if 1 <= n <= 6:
                out.append(_skip_bold(s[n:]))
        elif _starts(s, self.prefix):
            out.append(_skip_bold(s[len(self.prefix):]))
        if s[:2] in _BOLD:
            out.append(s[2:].lstrip(_SP))
        elif s[:1] in "-+*" and s[1:2] in (" ", "\t"):  # a list bullet, then a bold title: "- **answer**: Paris"
            rest = s[1:].lstrip(_SP)
            if rest[:2] in _BOLD:
                out.append(rest[2:].lstrip(_SP))
        return out

    def _alone(self, rest: str) -> Optional[str]:
        """The name part of a title alone on its line: ``NAME [:] [**] [:] suffix``."""
        t = rest.rstrip(_SP)
        if self.suffix:
            if len(t) < len(self.suffix) or t[-len(self.suffix):].lower() != self.suffix.lower():
                return None
            t = t[:-len(self.suffix)].rstrip(_SP)
        t = _drop(t, (":",))
        t = _drop(t, _BOLD)
        return _drop(t, (":",))

    def _inline(self, rest: str) -> Optional[tuple[str, str]]:
        """``NAME [**]: [**] value`` -> (field name, value)."""
        colon = rest.find(":")
        if colon < 0:
            return None
        name = self._name(_drop(rest[:colon].rstrip(_SP), _BOLD))
        if name is None:
            return None
        value = rest[colon + 1:].lstrip(_SP)
        if value[:2] in _BOLD:
            after = value[2:].lstrip(_SP)
            if after and not after[0].isspace():
                value = after
        value = value.rstrip(_SP)
        if not value or value[0].isspace():
            return None
        return name, value

    def _name(self, text: Optional[str]) -> Optional[str]:
        if not text or text[0].isspace() or text[-1].isspace():
            return None
        return self.names.get(loose_name(text))


def _line_starts(text: str) -> Iterator[int]:
    pos = 0
    for line in text.split("\n"):
        yield pos
        pos += len(line) + 1


def _starts(s: str, prefix: str) -> bool:
    """``s`` starts with ``prefix``, ignoring case (as titles do)."""
    return s[:len(prefix)].lower() == prefix.lower()


def _skip_bold(s: str) -> str:
    s = s.lstrip(_SP)
    return s[2:].lstrip(_SP) if s[:2] in _BOLD else s


def _drop(t: str, ends: tuple[str, ...]) -> str:
    """``t`` without one trailing marker from ``ends`` and the spaces before it."""
    for end in ends:
        if t.endswith(end):
            return t[:-len(end)].rstrip(_SP)
    return t
