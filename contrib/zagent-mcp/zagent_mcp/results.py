"""Turning an MCP ``CallToolResult`` (its wire form) into what a zagent tool handler returns: ``convert``.

``isError`` raises ``McpToolError``; else ``structuredContent`` is the value; else the content blocks as text
(media as short references, never bytes). At most ``MAX_RESULT_CHARS`` characters (a text resource
``MAX_RESOURCE_TEXT``) reach the model, the cut stated.
"""

from __future__ import annotations

from typing import Any


#: characters of an embedded text resource passed on (the rest is cut, saying how much)
MAX_RESOURCE_TEXT = 100_000
#: characters of a whole result passed on
MAX_RESULT_CHARS = 200_000


class McpToolError(Exception):
    """An MCP tool or server reported an error; the message is what the model is told."""


def convert(result: dict[str, Any]) -> Any:
    """The value of a successful call, or raise ``McpToolError`` for an ``isError`` result."""
    text = _cut("\n".join(describe(block) for block in result.get("content") or []))
    if result.get("isError"):
        raise McpToolError(text or "the tool reported an error without a message")
    structured = result.get("structuredContent")
    if structured is not None:
        import msgspec

        encoded = msgspec.json.encode(structured)
        if len(encoded) <= MAX_RESULT_CHARS:  # bytes: never fewer than characters
            return structured
        as_text = encoded.decode("utf-8", "replace")
        return structured if len(as_text) <= MAX_RESULT_CHARS else _cut(as_text)
    return text


def _cut(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    keep = MAX_RESULT_CHARS - 80  # the note fits within the bound: the kernel's own cut leaves it alone
    return text[:keep] + f"\n[... {len(text) - keep} more characters of the result cut]"


def describe(block: dict[str, Any]) -> str:
    """One content block as text: text itself, anything else as a short reference."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')} {_b64_size(block.get('data', ''))} bytes]"
    if kind == "resource_link":
        return _reference(block.get("uri", "?"), block.get("mimeType"), block.get("name"))
    if kind == "resource":
        res = block.get("resource") or {}
        full = res.get("text")
        if isinstance(full, str):  # a text resource: the model needs what it says, headed by where from
            text = full
            if len(text) > MAX_RESOURCE_TEXT:
                text = text[:MAX_RESOURCE_TEXT] + f"\n[... {len(full) - MAX_RESOURCE_TEXT} more characters]"
            return _reference(res.get("uri", "?"), res.get("mimeType"), None) + "\n" + text
        return _reference(res.get("uri", "?"), res.get("mimeType"), f"{_b64_size(res.get('blob', ''))} bytes")
    return f"[{kind or 'unknown'} content]"


def _reference(uri: str, mime: Any, extra: Any) -> str:
    return "[resource " + " ".join(str(p) for p in (uri, mime, extra) if p) + "]"


def _b64_size(data: str) -> int:
    """Decoded size of base64 ``data`` without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))
