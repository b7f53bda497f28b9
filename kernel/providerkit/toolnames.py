"""Tool names on the wire: ``WireNames`` renames a request's tools (and its calls and results) to names
a kit provider's ``ProviderLLM.tool_name_pattern`` accepts, and maps the reply's names back (``renamed_stream``
for a stream).
"""

from __future__ import annotations

import functools
import re
from typing import Any, AsyncGenerator, AsyncIterator, Optional

import msgspec

from .._model.replies import aclose_stream
from ..types import Chunk, Completion, LLMRequest, Message, ToolCall


class WireNames:
    """The renaming of one request: ``to_wire``/``from_wire`` dicts and the request/reply rewriting."""

    def __init__(self, to_wire: dict[str, str]):
        self.to_wire = to_wire
        self.from_wire = {v: k for k, v in to_wire.items()}

    @classmethod
    def for_request(cls, request: LLMRequest, pattern: Optional[str], max_length: int = 64) -> Optional["WireNames"]:
        """``None`` when every offered name already matches ``pattern`` (the common case)."""
        if not pattern or not request.tools or all(_valid(t.name, pattern) for t in request.tools):
            return None
        # a name the wire takes keeps it, whatever the order: a server's ``web.search`` (``web_search`` on the wire)
        # offered before the app's own ``web_search`` took that name, and calls of it ran the server's tool
        to_wire: dict[str, str] = {t.name: t.name for t in request.tools if _valid(t.name, pattern)}
        taken: set[str] = set(to_wire)
        for spec in request.tools:
            if spec.name in to_wire:
                continue
            name = base = _sanitize(spec.name, max_length)
            n = 2
            while name in taken:
                suffix = f"_{n}"
                name, n = base[: max_length - len(suffix)] + suffix, n + 1
            taken.add(name)
            to_wire[spec.name] = name
        return cls(to_wire)

    def request(self, request: LLMRequest) -> LLMRequest:
        """The request with tools, past tool calls and tool results renamed for the wire."""
        tools = [msgspec.structs.replace(t, name=self.to_wire.get(t.name, t.name)) for t in request.tools]
        messages = [_message(m, self.to_wire) for m in request.messages]
        return msgspec.structs.replace(request, tools=tools, messages=messages)

    def completion(self, completion: Completion) -> Completion:
        """The reply with the tool calls' names mapped back to the registered ones."""
        if not completion.message.tool_calls:
            return completion
        return msgspec.structs.replace(completion, message=_message(completion.message, self.from_wire))

    def chunk(self, chunk: Chunk) -> Chunk:
        if chunk.tool_call is not None:
            return msgspec.structs.replace(chunk, tool_call=_call(chunk.tool_call, self.from_wire))
        if chunk.completion is not None:
            return msgspec.structs.replace(chunk, completion=self.completion(chunk.completion))
        return chunk


def _message(message: Message, names: dict[str, str]) -> Message:
    changes: dict[str, Any] = {}
    if message.tool_calls:
        changes["tool_calls"] = [_call(c, names) for c in message.tool_calls]
    if message.role == "tool" and message.name in names:
        changes["name"] = names[message.name]
    return msgspec.structs.replace(message, **changes) if changes else message


def _call(call: ToolCall, names: dict[str, str]) -> ToolCall:
    return msgspec.structs.replace(call, name=names[call.name]) if call.name in names else call


@functools.lru_cache(maxsize=4096)
def _valid(name: str, pattern: str) -> bool:
    return re.fullmatch(pattern, name) is not None


def _sanitize(name: str, max_length: int) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name).strip("_") or "tool"
    return cleaned[:max_length]


async def renamed_stream(agen: AsyncIterator[Chunk], names: WireNames) -> AsyncGenerator[Chunk, None]:
    """A provider's stream with the wire tool names in its chunks mapped back to the offered ones."""
    try:
        async for chunk in agen:
            yield names.chunk(chunk)
    finally:
        await aclose_stream(agen)
