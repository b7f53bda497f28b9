"""Chat Completions wire format: typed msgspec Structs for replies (unknown fields ignored) and request encoding,
tool specs encoded once per ``ToolSpec`` object. Loaded with the first model made, not at plugin import.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional, Union

import msgspec

from zagent.providerkit import encoded_once, history_encoder
from zagent.providerkit import parse_arguments
from zagent.types import Message, ToolCall, ToolSpec, Usage

# -- replies -----------------------------------------------------------------------


class Function(msgspec.Struct):
    name: str = ""
    arguments: str = ""


class WireToolCall(msgspec.Struct):
    function: Function
    id: str = ""
    type: str = "function"


class WireMessage(msgspec.Struct):
    role: str = "assistant"
    content: Union[str, list[Any], None] = None
    tool_calls: Optional[list[WireToolCall]] = None
    refusal: Optional[str] = None
    reasoning_content: Optional[str] = None  # DeepSeek, vLLM, llama.cpp (--reasoning-format)
    reasoning: Optional[str] = None  # OpenRouter, vLLM >= 0.10


class WireChoice(msgspec.Struct):
    message: WireMessage
    index: int = 0
    finish_reason: Optional[str] = None


class WireUsage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Timings(msgspec.Struct):
    """llama.cpp's server statistics; token counts when a reply carries no ``usage`` (each >= 0: a negative
    ``cache_n`` lowered the sum, past the check of the sum)."""

    prompt_n: Annotated[int, msgspec.Meta(ge=0)] = 0
    predicted_n: Annotated[int, msgspec.Meta(ge=0)] = 0
    cache_n: Annotated[int, msgspec.Meta(ge=0)] = 0


class ChatResponse(msgspec.Struct):
    choices: list[WireChoice] = []
    id: Optional[str] = None
    model: str = ""
    usage: Optional[WireUsage] = None
    error: Any = None
    timings: Optional[Timings] = None


class DeltaFunction(msgspec.Struct):
    name: Optional[str] = None
    arguments: Optional[str] = None


class DeltaToolCall(msgspec.Struct):
    index: int = 0
    id: Optional[str] = None
    function: Optional[DeltaFunction] = None


class Delta(msgspec.Struct):
    content: Optional[str] = None
    tool_calls: Optional[list[DeltaToolCall]] = None
    refusal: Optional[str] = None
    reasoning_content: Optional[str] = None
    reasoning: Optional[str] = None


class StreamChoice(msgspec.Struct):
    delta: Optional[Delta] = None
    index: int = 0
    finish_reason: Optional[str] = None


class StreamChunk(msgspec.Struct):
    choices: list[StreamChoice] = []
    model: str = ""
    usage: Optional[WireUsage] = None
    error: Any = None
    timings: Optional[Timings] = None


response_decoder = msgspec.json.Decoder(ChatResponse)
chunk_decoder = msgspec.json.Decoder(StreamChunk)
encoder = msgspec.json.Encoder()


def text_of(content: Union[str, list[Any], None]) -> Optional[str]:
    """Message content as text (content-part lists are joined)."""
    if content is None or isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def to_usage(usage: Optional[WireUsage], timings: Optional[Timings] = None) -> Usage:
    """Token usage; llama.cpp's ``timings`` stand in when ``usage`` is absent (prompt tokens counted
    with those served from its cache)."""
    if usage is None:
        if timings is not None:
            return Usage(input_tokens=timings.prompt_n + timings.cache_n, output_tokens=timings.predicted_n, calls=1)
        return Usage(calls=1)
    return Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens, calls=1)


def reasoning_of(wire: Union[WireMessage, "Delta"]) -> Optional[str]:
    """The reasoning a server sent beside the content (``reasoning_content`` or ``reasoning``)."""
    return wire.reasoning_content or wire.reasoning or None


def to_message(wire: WireMessage) -> Message:
    calls = [ToolCall(id=c.id, name=c.function.name, arguments=parse_arguments(c.function.arguments))
             for c in wire.tool_calls or ()]
    return Message(role="assistant", content=text_of(wire.content), tool_calls=calls, reasoning=reasoning_of(wire))


# -- requests ----------------------------------------------------------------------

def _tool(spec: ToolSpec) -> dict[str, Any]:
    """The encoded ``{"type": "function", "function": ...}`` of ``spec``, computed once per spec object."""
    function: dict[str, Any] = {"name": spec.name, "parameters": spec.parameters or {"type": "object", "properties": {}}}
    if spec.description:
        function["description"] = spec.description
    return {"type": "function", "function": function}


encode_tool = encoded_once(_tool)


def encode_message(m: Message) -> dict[str, Any]:
    role = m.role
    if role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content or ""}
    # Never null: llama-cpp-python's server answers 500 to an assistant turn with "content": null
    # (the OpenAI API and other servers take "" with tool calls just as well).
    out: dict[str, Any] = {"role": role, "content": m.content if m.content is not None else ""}
    if m.parts:
        out["content"] = content_parts(m)
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str)
                          else encoder.encode(c.arguments).decode()}}
            for c in m.tool_calls
        ]
    if m.name and role != "assistant":
        out["name"] = m.name
    return out


def content_parts(m: Message) -> list[dict[str, Any]]:
    """A message with parts as Chat Completions content parts: its text, ``image_url`` and ``file`` parts."""
    from zagent.providerkit import data_url

    out: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    for p in m.parts:
        if p.type == "text":
            out.append({"type": "text", "text": p.text})
        elif p.type == "image":
            out.append({"type": "image_url", "image_url": {"url": data_url(p)}})
        else:
            out.append({"type": "file", "file": {"filename": p.name or "file", "file_data": data_url(p)}})
    return out


encode_messages = history_encoder(encode_message)
"""A request's messages for its body: built whole while the conversation is short, then once per message."""


def response_format(fmt: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's ``response_format``: given as-is, or a bare JSON schema wrapped as ``json_schema``
    (named after its ``title``, cut to OpenAI's ``[A-Za-z0-9_-]{1,64}``; not ``strict``, which would
    require every property and ``additionalProperties: false``)."""
    if fmt.get("type") in ("json_schema", "json_object", "text"):
        return fmt
    import re

    name = re.sub(r"[^A-Za-z0-9_-]+", "_", str(fmt.get("title") or "")).strip("_")[:64] or "output"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": fmt}}
