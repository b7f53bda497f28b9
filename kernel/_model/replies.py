"""A provider's reply settled the same way for every provider (``settle``, ``counted``; ``settled_stream`` and
``renamed_stream`` for streams); ``new_call_id`` for providers decoding a reply.
"""

from __future__ import annotations

from typing import AsyncGenerator, AsyncIterator

import msgspec

from ..errors import Refusal
from .reasoning import ThinkStream, join_reasoning, split_think
from .toolnames import WireNames
from ..types import Chunk, Completion, LLMRequest, ToolCall

__all__ = [
    "aclose_stream", "counted", "new_call_id", "renamed_stream", "settle", "settled_stream",
    "unique_call_ids",
]


def settle(request: LLMRequest, completion: Completion, think_tags: bool = True) -> Completion:
    """``completion`` with inline ``<think>`` spans moved to ``message.reasoning``, an id of its own for each tool
    call; a refusal to a structured-output request raises ``Refusal``."""
    message = completion.message
    text = message.content
    if think_tags and text and ("<think" in text or "</think" in text):
        answer, reasoning = split_think(text)
        if reasoning or answer != text:
            message = msgspec.structs.replace(message, content=answer or None,
                                              reasoning=join_reasoning(message.reasoning, reasoning))
    calls = message.tool_calls
    if calls:
        fixed = unique_call_ids(calls)
        if fixed is not calls:
            message = msgspec.structs.replace(message, tool_calls=fixed)
    if message is not completion.message:
        completion = msgspec.structs.replace(completion, message=message)
    if completion.refusal and request.response_format:
        raise Refusal(f"the model refused to give the structured output asked for: {completion.refusal}",
                      refusal=completion.refusal, completion=completion)
    return completion


def new_call_id() -> str:
    """A fresh tool-call id (``call_`` + 24 hex digits) for a call the server sent without a usable one."""
    import os

    return "call_" + os.urandom(12).hex()


def unique_call_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """``calls`` with missing, empty or repeated ids replaced (the same list when every id is unique)."""
    seen: set[str] = set()
    for c in calls:
        if not c.id or c.id in seen:
            break
        seen.add(c.id)
    else:
        return calls
    out: list[ToolCall] = []
    seen = set()
    for c in calls:
        if not c.id or c.id in seen:
            c = msgspec.structs.replace(c, id=new_call_id())
        seen.add(c.id)
        out.append(c)
    return out


async def aclose_stream(agen: AsyncIterator[Chunk]) -> None:
    """Close a provider's stream (an async generator has ``aclose``; a plain async iterator may not)."""
    aclose = getattr(agen, "aclose", None)
    if aclose is not None:
        await aclose()


async def settled_stream(request: LLMRequest, agen: AsyncIterator[Chunk], think_tags: bool) -> AsyncGenerator[Chunk, None]:
    """``agen`` with think spans as ``reasoning`` chunks and the ``done`` completion settled."""
    splitter = ThinkStream() if think_tags else None
    try:
        async for chunk in agen:
            kind = chunk.type
            if kind == "text" and splitter is not None:
                for piece_kind, piece in splitter.feed(chunk.text):
                    yield chunk if piece is chunk.text and piece_kind == "text" else Chunk(type=piece_kind, text=piece)
                continue
            if kind == "done" and chunk.completion is not None:
                if splitter is not None:
                    for piece_kind, piece in splitter.flush():
                        yield Chunk(type=piece_kind, text=piece)
                yield Chunk(type="done", completion=settle(request, chunk.completion, think_tags))
                continue
            yield chunk
    finally:
        await aclose_stream(agen)


def counted(completion: Completion) -> Completion:
    """``completion`` with ``usage.calls`` 1 and a finish reason (``tool_calls`` or ``stop``) where it has none."""
    if completion.usage.calls and completion.finish_reason:
        return completion
    usage = completion.usage if completion.usage.calls else msgspec.structs.replace(completion.usage, calls=1)
    reason = completion.finish_reason or ("tool_calls" if completion.tool_calls else "stop")
    return msgspec.structs.replace(completion, usage=usage, finish_reason=reason)


async def renamed_stream(agen: AsyncIterator[Chunk], names: WireNames) -> AsyncGenerator[Chunk, None]:
    """A provider's stream with the wire tool names in its chunks mapped back to the offered ones."""
    try:
        async for chunk in agen:
            yield names.chunk(chunk)
    finally:
        await aclose_stream(agen)
