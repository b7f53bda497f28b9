"""Long lists of one MCP message cut before the SDK parses it (``trimmed``): tools past ``MAX_TOOLS`` + 1, content
blocks past ``MAX_BLOCKS`` (said in a last text block). A message over ``MAX_CONTAINERS`` objects and arrays or
``MAX_VALUES`` values is an error answering its request (``error_reply``).
"""

from __future__ import annotations

import re
from typing import Any, Optional

import msgspec

#: content blocks of one tool result read (the rest are cut, and the model told so)
MAX_BLOCKS = 10_000
#: messages shorter than this are never looked at (lists that short cost little)
TRIM_FROM = 1 << 20
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_encode = json_bytes = msgspec.json.Encoder().encode
#: JSON objects and arrays one message may hold once its lists are cut (each becomes a Python object of 60 to 230
#: bytes: 9 MB of ``{},`` in a result's ``structuredContent`` took 790 MiB); brackets in strings count too
MAX_CONTAINERS = 200_000
#: values listed in them (counted by commas, in strings too): 15 MB of ``"ab",`` in one list took 860 MiB
MAX_VALUES = 1_000_000
_ID = re.compile(rb'"id"\s*:\s*(-?[0-9]{1,18}(?![0-9.eE])|"(?:[^"\\]|\\.){0,200}")')


def error_reply(line: bytes, reason: str) -> Optional[dict[str, Any]]:
    """A JSON-RPC error (saying ``reason``) answering the request ``line`` names as its top-level ``id``, so that
    call fails at once instead of waiting for its timeout; ``None`` when ``line`` is not a JSON-RPC object with
    such an id (the first 16 ids in it are looked at)."""
    if line.lstrip()[:1] != b"{" or b'"jsonrpc"' not in line:
        return None
    for i, found in enumerate(_ID.finditer(line)):
        at = found.start()
        if i == 16:
            return None
        if line.count(b"{", 0, at) - line.count(b"}", 0, at) + line.count(b"[", 0, at) - line.count(b"]", 0, at) == 1:
            return {"jsonrpc": "2.0", "id": msgspec.json.decode(found.group(1)),
                    "error": {"code": -32600, "message": reason}}
    return None


def trimmed(line: bytes) -> bytes:
    """``line`` (one JSON-RPC message) with a result's ``tools`` and ``content`` lists cut to what is read; a message
    still holding over ``MAX_CONTAINERS`` objects and arrays (or ``MAX_VALUES`` values) is replaced by an error for
    its request (or by ``{}``, which the SDK refuses as not JSON-RPC, when it names none)."""
    if len(line) < TRIM_FROM:
        return line
    out = _cut_lists(line)
    if len(out) <= MAX_CONTAINERS:
        return out
    if (n := out.count(b"{") + out.count(b"[")) > MAX_CONTAINERS:
        reason = f"{n} JSON objects and arrays; zagent reads at most {MAX_CONTAINERS}"
    elif len(out) > MAX_VALUES and (n := out.count(b",")) > MAX_VALUES:
        reason = f"{n} JSON values in its lists and objects; zagent reads at most {MAX_VALUES}"
    else:
        return out
    error = error_reply(out, f"the server's reply holds {reason} in one message (each costs memory once read)")
    return b"{}" if error is None else _encode(error)


def _cut_lists(line: bytes) -> bytes:
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
