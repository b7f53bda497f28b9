"""Untrusted text never drives the terminal: control characters are shown escaped in everything the CLI prints
(docs/security.md, 5d).

``printable(text)`` escapes C0/C1 controls but newline and tab, bidi controls and invisible format characters;
``SafeStream`` writes ``printable`` text with URL userinfo masked, and ``safe_terminal()`` puts it around
``sys.stdout`` and ``sys.stderr``. JSON output stays valid JSON.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from zagent import mask_userinfo

_ESCAPES: dict[int, str] = {c: f"\\x{c:02x}" for c in range(0x20) if c not in (0x09, 0x0A)}
# DEL and C1 (``\x9b`` is CSI in one byte) as ``\u009b``: JSON encoders leave them raw, and ``\x9b`` is no JSON escape
_ESCAPES.update({c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)})
_ESCAPES.update({c: f"\\u{c:04x}" for c in [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F),
                                            *range(0x2066, 0x206A)]})
# Invisible format characters that hide text from the reader while a model still reads it: zero-width space and
# non-joiner, word joiner and the invisible operators, the BOM, interlinear annotations, and the tag characters
# (U+E0000-E007F, "ASCII smuggling": each one an invisible copy of an ASCII letter). The zero-width joiner stays
# (emoji sequences need it). Astral ones are shown as a UTF-16 pair (``\udb40\udc41``), still a valid JSON escape.
_ESCAPES.update({c: f"\\u{c:04x}" for c in [0x180E, 0x200B, 0x200C, *range(0x2060, 0x2065), 0xFEFF,
                                            *range(0xFFF9, 0xFFFC)]})
# The rest of Unicode's Default_Ignorable_Code_Point set (drawn as nothing): the soft hyphen, the combining
# grapheme joiner, the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0, blank "letters" an identifier or a prompt
# can be padded with), Khmer inherent vowels, Mongolian variation selectors, the deprecated format characters
# U+206A-206F, the variation selectors but U+FE0E/FE0F (text or emoji presentation, which emoji need), whose runs
# carry invisible bytes ("emoji smuggling"), unassigned U+FFF0-FFF8, shorthand and musical format controls and
# the whole U+E0000-E0FFF block (tags, variation selectors supplement).
_ESCAPES.update({c: f"\\u{c:04x}" for c in [0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810),
                                            0x2065, *range(0x206A, 0x2070), 0x3164, *range(0xFE00, 0xFE0E), 0xFFA0,
                                            *range(0xFFF0, 0xFFF9)]})
_ESCAPES.update({c: f"\\u{0xD800 + ((c - 0x10000) >> 10):04x}\\u{0xDC00 + ((c - 0x10000) & 0x3FF):04x}"
                 for c in [*range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B), *range(0xE0000, 0xE1000)]})
_ALL = {**_ESCAPES, 0x09: "\\x09", 0x0A: "\\x0a"}


def printable(text: Any, *, layout: bool = True) -> str:
    """``text`` with control characters escaped (see the module docstring); ``layout=False`` escapes newlines
    and tabs too (for one-line fields: a name, a table cell)."""
    return str(text).translate(_ESCAPES if layout else _ALL)


class SafeStream:
    """A text stream that writes ``printable(text)`` to the stream it wraps; everything else is the wrapped one's."""

    def __init__(self, raw: Any):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(mask_userinfo(printable(text)))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The real stream under a ``SafeStream`` (for the ticker's own escape sequences); other streams as they are."""
    return stream.raw if isinstance(stream, SafeStream) else stream


def safe_terminal() -> Callable[[], None]:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in ``SafeStream`` (once); return the undo."""
    out, err = sys.stdout, sys.stderr
    if not isinstance(out, SafeStream):
        sys.stdout = SafeStream(out)
    if not isinstance(err, SafeStream):
        sys.stderr = SafeStream(err)

    def undo() -> None:
        sys.stdout, sys.stderr = out, err

    return undo
