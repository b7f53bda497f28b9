"""``partial_object(text)``: the object a half-written JSON reply holds so far (streaming ``json`` mode), or
``None`` when there is no ``{``, no prefix parses yet or it nests past ``MAX_DEPTH``; open strings, arrays and
objects are closed, a member missing its value is left out. Linear in ``len(text)``. ``JsonWalk`` is the structure
scan it uses; ``PartialReply`` reads a growing reply so that a long one costs linear time in all, not quadratic.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import msgspec

from .._trust.limits import MAX_DEPTH, TOKEN

_decode = msgspec.json.decode


class JsonWalk:
    """``for i, ch in JsonWalk(text)``: each ``[ ] { } ,`` of JSON ``text`` outside strings; after a whole walk
    ``in_string`` says the text stopped inside a string and ``escaped`` right after its backslash (the scan
    ``zagent._trust.limits.json_depth`` makes too, over the same ``TOKEN``)."""

    __slots__ = ("text", "in_string", "escaped")

    def __init__(self, text: str) -> None:
        self.text = text
        self.in_string = self.escaped = False

    def __iter__(self) -> Iterator[tuple[int, str]]:
        text = self.text
        for found in TOKEN.finditer(text):
            i = found.start()
            ch = text[i]
            if ch != '"':
                yield i, ch
            elif found.group(1) is None:  # a string still open where the text stops
                self.in_string = True
                self.escaped = found.end() < len(text)  # only a lone backslash is left after it
                return


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
            if len(stack) >= MAX_DEPTH:  # deeper than any reply is read: no partial object (the parser says why)
                return None
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
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


#: a reply shorter than this is read again after every delta
EVERY_DELTA_BELOW = 4096
#: a longer one once it has grown by at least this fraction of its length since it was last read
GROWTH = 1 / 64


class PartialReply:
    """The object of a JSON reply streamed in deltas (``feed``), read again only when it changed enough (each delta
    below ``EVERY_DELTA_BELOW`` characters, then every ``GROWTH`` of its length), so a reply of ``n`` characters
    costs O(n) reads in all instead of one per delta; ``flush`` reads what is left once the reply is whole. Deltas
    are kept in a list (``+=`` copied the whole text per delta); ``text`` joins them, O(n) per read."""

    __slots__ = ("_parts", "_size", "_read", "_last")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0  # len(self.text)
        self._read = 0  # the length of the text when it was last read
        self._last: Optional[dict[str, Any]] = None

    @property
    def text(self) -> str:
        """The reply so far (the deltas joined, kept joined until the next one)."""
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def feed(self, delta: str) -> Optional[dict[str, Any]]:
        """Add ``delta``; the object so far when it is read now and differs from the last one, else ``None``."""
        self._parts.append(delta)
        self._size = size = self._size + len(delta)
        if size >= EVERY_DELTA_BELOW and size - self._read < size * GROWTH:
            return None
        return self.flush()

    def flush(self) -> Optional[dict[str, Any]]:
        """The object of the whole text when it differs from the last one given, else ``None``."""
        if self._read == self._size:
            return None
        self._read = self._size
        found = partial_object(self.text)
        if found is None or found == self._last:
            return None
        self._last = found
        return found
