"""Almost-JSON tool calls, repaired: ``repair_call(text, shaped)`` cuts a made-up trailing ``output``/``result``
member, closes brackets left open and decodes leniently, returning the call object(s) or ``None``. Strings are
never closed or changed; nothing else is guessed.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from . import jsontext
from .quoted import QuotedScan

_BRACKETS = QuotedScan(r"[{}\[\]]", single=False)  # linear even when a string never closes
_MADE_UP = re.compile(r',\s*"(?:output|outputs|result|results|response|return|returns|observation)"\s*:')
_CLOSE = {"{": "}", "[": "]"}
MAX_TEXT = 50_000


def repair_call(text: str, shaped: Any) -> Optional[list[Any]]:
    """The call object(s) in almost-JSON ``text``, or ``None`` (also for text over ``MAX_TEXT`` characters, or
    cut off right after ``{``, ``[``, ``,`` or ``:``, where a value was still coming).

    :param shaped: ``shaped(value) -> bool``, the reader's test that a decoded object is a call.
    """
    body = text.strip()
    if not body.startswith(("{", "[")) or len(body) > MAX_TEXT:
        return None
    cut = _without_made_up(body).rstrip()
    for candidate in (cut, cut[:cut.rfind("}") + 1] if "}" in cut else ""):
        if not candidate or candidate[-1] in "{[,:":  # cut off right after an opener or separator: a guess
            continue
        closers = _missing_closers(candidate)
        if closers is None:
            continue
        try:
            value = jsontext.loads(candidate + closers)
        except ValueError:
            continue
        items = value if isinstance(value, list) else [value]
        if items and all(shaped(i) for i in items):
            return items
    return None


def _without_made_up(body: str) -> str:
    """``body`` cut before a made-up result member of the top-level call object, when it has one."""
    for m in _MADE_UP.finditer(body):
        if _depth(body, m.start()) == 1:
            return body[:m.start()]
    return body


def _depth(text: str, pos: int) -> int:
    depth = 0
    for m in _BRACKETS.finditer(text, 0, pos):
        tok = m.group(0)
        if tok in "{[":
            depth += 1
        elif tok in "}]":
            depth -= 1
    return depth


def _missing_closers(text: str) -> Optional[str]:
    """The closing brackets ``text`` lacks, in order; ``None`` if a closer does not match its opener."""
    stack: list[str] = []
    for m in _BRACKETS.finditer(text):
        tok = m.group(0)
        if tok in "{[":
            stack.append(tok)
        elif tok in "}]":
            if not stack or _CLOSE[stack.pop()] != tok:
                return None
    return "".join(_CLOSE[t] for t in reversed(stack))
