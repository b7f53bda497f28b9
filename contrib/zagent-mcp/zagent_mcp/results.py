"""Turning an MCP ``CallToolResult`` (its wire form) into what a zagent tool handler returns: ``convert``.

``isError`` raises ``McpToolError``; else ``structuredContent`` is the value (``refuse_non_finite``: no NaN);
else the content blocks as text (media as short references, never bytes). At most ``MAX_RESULT_CHARS`` characters
reach the model, the cut stated. ``unvalidated`` stops the SDK checking results against a server's output schema.
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


def refuse_non_finite(structured: Any) -> None:
    """Raise ``McpToolError`` when a result's ``structuredContent`` (as the SDK parsed it) holds NaN or an infinity:
    not JSON, and its wire form would say ``null`` where the server said something else."""
    if structured is not None and (where := _non_finite(structured)) is not None:
        raise McpToolError(f"the tool's structured result holds {where}, which is not JSON (it would reach the model "
                           "and the app as null); the result is refused. Fix the server's tool")


def _non_finite(value: Any) -> Any:
    """Where ``value`` (decoded JSON) holds a NaN or infinite number, as ``"NaN at $.x"``; ``None`` when nowhere."""
    import math

    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{'NaN' if item != item else repr(item).replace('inf', 'Infinity')} at {path[:200]}"
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def unvalidated(session: Any) -> Any:
    """``session`` (the SDK's ``ClientSession``) no longer checks a tool's results against the ``outputSchema`` the
    server listed: ``jsonschema`` runs the server's ``pattern`` with ``re`` (``^(a|a)*$`` held the GIL, freezing the
    process) and every ``oneOf`` branch (2**40 through ``$ref``), on the loop all servers share. The server
    vouching for its own answer proves nothing; the result stays data either way."""
    async def no_check(*args: Any, **kwargs: Any) -> None:
        return None

    for name in ("validate_tool_result", "_validate_tool_result"):
        if hasattr(session, name):
            setattr(session, name, no_check)
    return session


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
