"""Long lists of one MCP message cut before the SDK parses it (``trimmed``): a tool list past ``MAX_TOOLS`` + 1
tools and a result past ``MAX_BLOCKS`` content blocks. Parsed, each tiny tool or block costs some 70 bytes of
memory per byte sent (16 MiB of them made over a gigabyte); only the kept items are parsed. A cut content list
ends with a text block saying how many were cut; a cut tool list is warned about as before.
"""

from __future__ import annotations

from typing import Any

import msgspec

#: content blocks of one tool result read (the rest are cut, and the model told so)
MAX_BLOCKS = 10_000
#: messages shorter than this are never looked at (lists that short cost little)
TRIM_FROM = 1 << 20
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_encode = msgspec.json.Encoder().encode


def trimmed(line: bytes) -> bytes:
    """``line`` (one JSON-RPC message) with a result's ``tools`` and ``content`` lists cut to what is read."""
    if len(line) < TRIM_FROM:
        return line
    from .connection import MAX_TOOLS

    try:
        message = _FIELDS.decode(line)
        result = _FIELDS.decode(message["result"]) if "result" in message else None
    except (msgspec.DecodeError, RecursionError):  # not an object of objects: the SDK says what is wrong
        return line
    if result is None:
        return line
    changed = False
    for key, keep in (("tools", MAX_TOOLS + 1), ("content", MAX_BLOCKS)):  # one past MAX_TOOLS: it is warned
        if key not in result:
            continue
        try:
            items = _ITEMS.decode(result[key])
        except (msgspec.DecodeError, RecursionError):
            continue
        if len(items) <= keep:
            continue
        kept: list[Any] = items[:keep]
        if key == "content":
            kept.append({"type": "text", "text": f"[... {len(items) - keep} more content blocks cut: at most "
                                                 f"{MAX_BLOCKS} of a result are read]"})
        result[key] = msgspec.Raw(_encode(kept))
        changed = True
    if not changed:
        return line
    message["result"] = msgspec.Raw(_encode(result))
    return _encode(message)
