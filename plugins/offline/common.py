"""Helpers shared by the offline providers: token estimates, reply normalisation, text tool calls.

Nothing here touches the network or imports heavy modules.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import msgspec

from zagent.errors import ConfigError
from zagent.providerkit import new_call_id
from zagent.providerkit.plausible import estimate_tokens, received_chars, sent_chars
from zagent.types import Chunk, Completion, LLMRequest, Message, ToolCall, Usage

_WORDS = re.compile(r"\S+\s*|\s+")


def estimate_usage(request: LLMRequest, message: Message) -> Usage:
    """Usage of one offline call, estimated from the text in and out (``providerkit.plausible``'s estimate)."""
    return Usage(input_tokens=estimate_tokens(sent_chars(request)),
                 output_tokens=estimate_tokens(received_chars(message)), calls=1)


def to_tool_call(data: Any) -> ToolCall:
    """A ``ToolCall`` from a ``ToolCall`` or a ``{"name", "arguments", "id"?}`` dict (id generated if missing)."""
    if isinstance(data, ToolCall):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ConfigError(f"a scripted tool call must be a dict with a 'name' (and 'arguments'), got {data!r}")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, (dict, str)):
        raise ConfigError(f"tool call arguments must be a dict or a JSON string, got {arguments!r}")
    return ToolCall(id=data.get("id") or new_call_id(), name=data["name"], arguments=arguments)


def to_message(data: Any) -> Message:
    """An assistant ``Message`` from text, a ``Message`` or a ``{"content", "tool_calls"}`` dict."""
    if isinstance(data, Message):
        return data
    if isinstance(data, str):
        return Message(role="assistant", content=data)
    if isinstance(data, dict):
        unknown = set(data) - {"content", "tool_calls", "role", "finish_reason", "usage"}
        if unknown:
            raise ConfigError(
                f"scripted reply has unknown keys {sorted(unknown)}; use 'content' and 'tool_calls'"
            )
        calls = [to_tool_call(c) for c in data.get("tool_calls") or []]
        return Message(role="assistant", content=data.get("content"), tool_calls=calls)
    raise ConfigError(
        f"cannot use {type(data).__name__} as a scripted reply; give a str, a dict with 'content'/'tool_calls', "
        "a zagent.Message or Completion, an Exception, or a callable returning one of those"
    )


def render_text_tool_calls(message: Message) -> Message:
    """Move native tool calls into the text as ``<tool_call>{json}</tool_call>`` blocks (for native_tools=False)."""
    if not message.tool_calls:
        return message
    blocks = [
        "<tool_call>" + msgspec.json.encode({"name": c.name, "arguments": c.arguments}).decode() + "</tool_call>"
        for c in message.tool_calls
    ]
    text = "\n".join(([message.content] if message.content else []) + blocks)
    return Message(role="assistant", content=text)


def finish_reason_of(message: Message) -> str:
    return "tool_calls" if message.tool_calls else "stop"


def completion_chunks(completion: Completion) -> Iterable[Chunk]:
    """Stream a whole completion: word-sized text deltas, whole tool calls, then ``done``."""
    for piece in _WORDS.findall(completion.text):
        yield Chunk(type="text", text=piece)
    for call in completion.tool_calls:
        yield Chunk(type="tool_call", tool_call=call)
    yield Chunk(type="done", completion=completion)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

