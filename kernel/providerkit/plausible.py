"""A network server's reply made plausible before anyone counts or shows it (``plausible_reply``, ``plausible_stream``):
a count the server left at zero is estimated from the text (``estimate_tokens``: a quarter of its characters), a
smaller positive one raised to an eighth, and ``Usage.estimated`` says so; ``model``, ``id`` and ``finish_reason`` are
cut to 200 characters, controls escaped. A server's usage defeated token budgets before.
"""

from __future__ import annotations

from typing import Any, AsyncGenerator, AsyncIterator

import msgspec

from .._model.replies import aclose_stream
from ..types import Chunk, Completion, LLMRequest, Message, Usage

__all__ = ["ESTIMATE", "FLOOR", "MAX_METADATA", "estimate_tokens", "plausible_reply", "plausible_stream", "plausible_usage",
           "received_chars", "sent_chars"]

#: characters per token of the estimate used when a server reports no count (or zero)
ESTIMATE = 4
#: characters per token below which no reported count is believed (no tokenizer packs more on average)
FLOOR = 8
#: characters of a reply's ``model``, ``id`` or ``finish_reason`` kept
MAX_METADATA = 200

_encode = msgspec.json.Encoder().encode


def _call_chars(message: Message) -> int:
    n = 0
    for c in message.tool_calls:
        args = c.arguments
        n += len(c.name or "") + (len(args) if isinstance(args, str) else len(_encode(args)))
    return n


def sent_chars(request: LLMRequest) -> int:
    """Characters a request sends: messages' text (and text parts), their tool calls, the tools' names and help."""
    n = 0
    for m in request.messages:
        n += len(m.content or "")
        if m.tool_calls:
            n += _call_chars(m)
        for p in m.parts:
            n += len(getattr(p, "text", None) or "")
    for t in request.tools:
        n += len(t.name) + len(t.description or "")
    return n


def received_chars(message: Message) -> int:
    """Characters a reply holds: text, reasoning, tool calls' names and arguments."""
    return len(message.content or "") + len(message.reasoning or "") + _call_chars(message)


def estimate_tokens(chars: int) -> int:
    """Tokens of a text of ``chars`` characters when nobody counted them: one per ``ESTIMATE``, rounded up."""
    return -(-chars // ESTIMATE)


def _count(reported: int, chars: int) -> int:
    if reported < 0 or type(reported) is not int:  # not a count: the kernel refuses the reply (``usage_problem``)
        return reported
    if reported == 0:
        return estimate_tokens(chars)
    return max(reported, chars // FLOOR)


def plausible_usage(request: LLMRequest, completion: Completion) -> Usage:
    """``completion.usage`` with each count at least what its text makes (the same object when it already is)."""
    usage = completion.usage
    i = _count(usage.input_tokens, sent_chars(request))
    o = _count(usage.output_tokens, received_chars(completion.message))
    if (i, o) == (usage.input_tokens, usage.output_tokens):
        return usage
    return Usage(input_tokens=i, output_tokens=o, calls=usage.calls, estimated=True)


def _metadata(value: Any) -> Any:
    if not isinstance(value, str) or (len(value) <= MAX_METADATA and value.isprintable()):
        return value
    from .wire import shown

    text = shown(value[:MAX_METADATA])
    return text if len(text) <= MAX_METADATA else text[:MAX_METADATA - 3] + "..."


def plausible_reply(request: LLMRequest, completion: Completion) -> Completion:
    """``completion`` with ``plausible_usage`` and its metadata bounded (the same object when nothing changed)."""
    changed: dict[str, Any] = {}
    usage = plausible_usage(request, completion)
    if usage is not completion.usage:
        changed["usage"] = usage
    for name in ("model", "id", "finish_reason"):
        value = getattr(completion, name)
        if (shown := _metadata(value)) is not value:
            changed[name] = shown
    return msgspec.structs.replace(completion, **changed) if changed else completion


async def plausible_stream(agen: AsyncIterator[Chunk], request: LLMRequest) -> AsyncGenerator[Chunk, None]:
    """``agen`` with its ``done`` reply ``plausible_reply``'d."""
    try:
        async for chunk in agen:
            if chunk.type == "done" and chunk.completion is not None:
                reply = plausible_reply(request, chunk.completion)
                if reply is not chunk.completion:
                    chunk = Chunk(type="done", completion=reply)
            yield chunk
    finally:
        await aclose_stream(agen)
