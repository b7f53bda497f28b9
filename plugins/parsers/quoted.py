"""``QuotedScan(other).finditer(text)``: the matches of ``"..."`` strings (and ``'...'`` within a line), or of the
pattern ``other``, that a regex requiring each string's closing quote would give, in linear time. That regex tries
every quote of a string that never closes again to the end of the text: 100,000 ``\\"`` took hours.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

__all__ = ["QuotedScan"]

_DQ = r'(?P<dq>"(?:[^"\\]|\\.)*(?P<dq_end>")?)'
_SQ = r"(?P<sq>'(?:[^'\\\n]|\\.)*(?P<sq_end>')?)"
_NEVER = r"(?P<{0}>(?!))(?P<{0}_end>(?!))"  # the groups, never matching


class QuotedScan:
    """Strings and ``other`` tokens left to right (see the module docstring); ``single=False`` reads only ``"``.

    A quote whose string never closes is plain text, as for the strict regex, and so is every later quote of its
    kind inside what it would have held: each fails the same way (each sits right after a backslash, so its own
    string reads the same characters). Those are never tried again."""

    __slots__ = ("_variants",)

    def __init__(self, other: str, *, single: bool = True) -> None:
        self._variants = {
            (dq, sq): re.compile("|".join([_DQ if dq else _NEVER.format("dq"),
                                           _SQ if sq and single else _NEVER.format("sq"), other]), re.DOTALL)
            for dq in (True, False) for sq in (True, False)}

    def finditer(self, text: str, pos: int = 0, endpos: Optional[int] = None) -> Iterator[re.Match[str]]:
        """The matches from ``pos`` to ``endpos`` (as ``re.Pattern.finditer``), closed strings and ``other``."""
        end = len(text) if endpos is None else endpos
        dq, sq_from = True, 0  # double-quoted strings still possible; single-quoted ones from this index on
        while pos <= end:
            sq = pos >= sq_from
            for m in self._variants[dq, sq].finditer(text, pos, end):
                if not sq and m.start() >= sq_from:  # past a single-quoted string that never closed
                    pos = max(pos, sq_from)
                    break
                if m.group("dq") is not None and m.group("dq_end") is None:
                    dq, pos = False, m.start() + 1
                    break
                if m.group("sq") is not None and m.group("sq_end") is None:
                    sq_from, pos = m.end(), m.start() + 1
                    break
                pos = m.end() if m.end() > m.start() else m.end() + 1
                yield m
            else:
                if sq or sq_from > end:
                    return
                pos = max(pos, sq_from)  # single-quoted strings may follow the one that never closed
