"""A provider's reply settled the same way for every provider, whatever it is built on (``settle``, ``counted``;
``settled_stream`` for streams): each tool call an id of its own, a refusal of structured output raised;
``new_call_id`` for providers decoding a reply. Inline ``<think>`` spans and tool names on the wire are the provider
kit's (``zagent.providerkit.ProviderLLM``): a provider subclassing ``LLM`` directly has its reply taken as it is.
"""

from __future__ import annotations

from typing import AsyncGenerator, AsyncIterator

import msgspec

from ..errors import Refusal
from ..types import Chunk, Completion, LLMRequest, ToolCall

__all__ = ["aclose_stream", "counted", "new_call_id", "settle", "settled_stream", "unique_call_ids"]


def settle(request: LLMRequest, completion: Completion) -> Completion:
    """``completion`` with an id of its own for each tool call; a refusal to a structured-output request raises
    ``Refusal``."""
    calls = completion.message.tool_calls
    if calls:
        fixed = unique_call_ids(calls)
        if fixed is not calls:
            completion = msgspec.structs.replace(
                completion, message=msgspec.structs.replace(completion.message, tool_calls=fixed))
    if completion.refusal and request.response_format:
        raise Refusal(f"the model refused to give the structured output asked for: {_quoted(completion.refusal)}",
                      refusal=completion.refusal, completion=completion)
    return completion


#: characters of a refusal an error message quotes (``Refusal.refusal`` keeps it whole)
REFUSAL_QUOTED = 2000


def _quoted(refusal: str) -> str:
    """A server's refusal as an error message may quote it: on one line, control and bidi characters escaped (no
    terminal escape or fake log line reaches an app's log), at most ``REFUSAL_QUOTED`` characters."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1]  # ESC as \x1b, U+202E as \u202e
                   for c in " ".join(refusal[:REFUSAL_QUOTED].splitlines()))
    return text if len(refusal) <= REFUSAL_QUOTED else f"{text} [... {len(refusal) - REFUSAL_QUOTED} more characters]"


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


async def settled_stream(request: LLMRequest, agen: AsyncIterator[Chunk]) -> AsyncGenerator[Chunk, None]:
    """``agen`` with its ``done`` completion settled."""
    try:
        async for chunk in agen:
            if chunk.type == "done" and chunk.completion is not None:
                chunk = Chunk(type="done", completion=settle(request, chunk.completion))
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
