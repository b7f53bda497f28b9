"""Messages API wire format: one loose msgspec Struct per reply and stream event (unknown types skipped), and request
encoding (a role's consecutive messages merged, tool results as ``tool_result`` blocks, reasoning blocks first)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import msgspec

from zagent.providerkit import encoded_once
from zagent.providerkit import parse_arguments
from zagent.types import Message, ToolCall, ToolSpec, Usage

STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                "pause_turn": "pause", "refusal": "content_filter"}


class Block(msgspec.Struct):
    type: str = ""
    text: str = ""
    id: str = ""
    name: str = ""
    input: Any = None
    thinking: Optional[str] = None
    signature: Optional[str] = None
    data: Optional[str] = None


THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def thinking_block(b: Block) -> dict[str, Any]:
    """A ``thinking``/``redacted_thinking`` block as the API sent it, to be sent back unchanged."""
    if b.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": b.data or ""}
    return {"type": "thinking", "thinking": b.thinking or "", "signature": b.signature or ""}


#: a token count as the server must send it: each part of a sum too (a negative cache count lowered the total)
Count = Annotated[int, msgspec.Meta(ge=0)]


class AnthropicUsage(msgspec.Struct):
    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_creation_input_tokens: Optional[Count] = None
    cache_read_input_tokens: Optional[Count] = None


class MessageReply(msgspec.Struct):
    type: str = ""
    id: Optional[str] = None
    content: list[Block] = []
    model: str = ""
    stop_reason: Optional[str] = None
    usage: Optional[AnthropicUsage] = None
    error: Any = None


class EventDelta(msgspec.Struct):
    type: str = ""
    text: str = ""
    partial_json: str = ""
    stop_reason: Optional[str] = None
    thinking: str = ""
    signature: str = ""


class AnthropicEvent(msgspec.Struct):
    type: str = ""
    index: int = 0
    message: Optional[MessageReply] = None
    content_block: Optional[Block] = None
    delta: Optional[EventDelta] = None
    usage: Optional[AnthropicUsage] = None
    error: Any = None


reply_decoder = msgspec.json.Decoder(MessageReply)
event_decoder = msgspec.json.Decoder(AnthropicEvent)
encoder = msgspec.json.Encoder()


def input_tokens(u: AnthropicUsage) -> int:
    return u.input_tokens + (u.cache_creation_input_tokens or 0) + (u.cache_read_input_tokens or 0)


def call_input(value: Any) -> Any:
    """A ``tool_use`` block's ``input`` as the call's arguments: an object as it is, none as ``{}``, anything else
    as its JSON text, which the tool runner refuses (telling the model) -- never ``{}``, running the tool's
    defaults."""
    if isinstance(value, dict):
        return value
    return {} if value is None else encoder.encode(value).decode()


def to_completion_parts(reply: MessageReply) -> tuple[Message, Usage]:
    texts = [b.text for b in reply.content if b.type == "text"]
    calls = [ToolCall(id=b.id, name=b.name, arguments=call_input(b.input)) for b in reply.content if b.type == "tool_use"]
    thinking = [thinking_block(b) for b in reply.content if b.type in THINKING_TYPES]
    reasoning = "\n\n".join(b.thinking for b in reply.content if b.type == "thinking" and b.thinking) or None
    u = reply.usage
    usage = Usage(input_tokens=input_tokens(u), output_tokens=u.output_tokens, calls=1) if u else Usage(calls=1)
    return Message(role="assistant", content="".join(texts) or None, tool_calls=calls, reasoning=reasoning,
                   reasoning_blocks=thinking), usage


# -- requests ----------------------------------------------------------------------

def _tool(spec: ToolSpec) -> dict[str, Any]:
    """``{"name", "description", "input_schema"}`` of ``spec``, encoded once per spec object."""
    tool: dict[str, Any] = {"name": spec.name, "input_schema": spec.parameters or {"type": "object", "properties": {}}}
    if spec.description:
        tool["description"] = spec.description
    return tool


encode_tool = encoded_once(_tool)


def split_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt (system messages joined) and the alternating user/assistant turns."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            system.append(m.content or "")
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(s for s in system if s), turns


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content or ""}]
    blocks: list[dict[str, Any]] = [b for b in m.reasoning_blocks if b.get("type") in THINKING_TYPES]
    if m.parts:
        blocks.extend(part_blocks(m))
    if m.content:
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        args = c.arguments if isinstance(c.arguments, dict) else parse_arguments(c.arguments)
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name,
                       "input": args if isinstance(args, dict) else {"raw": args}})
    return blocks


def part_blocks(m: Message) -> list[dict[str, Any]]:
    """A message's parts as ``image`` blocks (``base64`` or ``url`` source) and ``document`` blocks (PDFs),
    placed before its text as the API's examples do."""
    from zagent.providerkit import b64, split_data_url

    blocks: list[dict[str, Any]] = []
    for p in m.parts:
        if p.type == "text":
            blocks.append({"type": "text", "text": p.text})
            continue
        if p.url and not p.url.startswith("data:"):
            source: dict[str, Any] = {"type": "url", "url": p.url}
        elif p.url:  # a data: URL
            media, data = split_data_url(p.url)
            source = {"type": "base64", "media_type": media or p.media_type, "data": data}
        else:
            source = {"type": "base64", "media_type": p.media_type, "data": b64(p)}
        block: dict[str, Any] = {"type": "image" if p.type == "image" else "document", "source": source}
        if p.type == "file" and p.name:
            block["title"] = p.name
        blocks.append(block)
    return blocks


def schema_instruction(fmt: dict[str, Any]) -> str:
    """The Messages API has no ``response_format``: the schema becomes a system instruction instead."""
    schema = fmt.get("json_schema", {}).get("schema", fmt) if fmt.get("type") == "json_schema" else fmt
    if fmt.get("type") == "json_object":
        return "Reply with a single JSON object and nothing else."
    return ("Reply with a single JSON document valid for this JSON schema, and nothing else:\n"
            + encoder.encode(schema).decode())
