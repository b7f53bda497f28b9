"""The object a half-written JSON reply holds so far, for streaming ``json`` mode output.

``partial_object(text)`` finds the first ``{`` of ``text`` and returns what
its members parse to when the reply is cut where it is now: an open string
is closed, a member still missing its value is left out, open arrays and
objects are closed. ``None`` until some prefix parses (or when there is no
``{``). Each call is linear in ``len(text)``; values are whole JSON (a
string being written comes back as its text so far).
"""

from __future__ import annotations

from typing import Any, Optional

import msgspec

from .._trust.limits import JsonWalk

_decode = msgspec.json.decode


def partial_object(text: str) -> Optional[dict[str, Any]]:
    """What the JSON object started in ``text`` holds so far (see the module docstring)."""
    start = text.find("{")
    if start < 0:
        return None
    body = text[start:]
    stack: list[str] = []
    safe: Optional[tuple[int, str]] = None  # the last cut known to end a whole member, with its closers
    end = len(body)
    walk = JsonWalk(body)
    for i, ch in walk:
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
            safe = (i + 1, "".join(reversed(stack)))
        elif ch in "}]":
            if not stack:
                end = i
                break
            stack.pop()
            if not stack:
                end = i + 1
                break
            safe = (i + 1, "".join(reversed(stack)))
        else:  # ","
            safe = (i, "".join(reversed(stack)))
    in_string, escaped = walk.in_string, walk.escaped
    head = body[:end]
    if not stack:
        return _as_object(head)
    attempt = head[:-1] if escaped else head  # a lone backslash cannot end a string
    if in_string:
        attempt += '"'
    found = _as_object(attempt.rstrip().rstrip(",") + "".join(reversed(stack)))
    if found is None and safe is not None:
        found = _as_object(head[:safe[0]] + safe[1])
    return found


def _as_object(candidate: str) -> Optional[dict[str, Any]]:
    try:
        value = _decode(candidate)
    except (msgspec.DecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
