"""``ProviderLLM``: the kit's base class for provider models. A provider implements ``_wire_complete`` (and may
implement ``_wire_stream``); around them the base class renames tools its wire refuses (``tool_name_pattern``),
moves inline ``<think>`` spans to reasoning (``profile.think_tags``), masks the client's secrets in the reply's
metadata (``metadata.masked_reply``) and a call's own secret options in its errors, and makes a server's usage and
metadata plausible (``plausible``). A provider subclassing ``zagent.LLM`` directly gets none.
"""

from __future__ import annotations

from typing import Any, AsyncGenerator, AsyncIterator, ClassVar, Optional

import attrs
import msgspec

from .._model.llm import LLM, stream_whole
from .._model.replies import aclose_stream
from .masking import mask_call_options, masked_error, option_secrets
from .metadata import client_masker, masked_reply, masked_stream
from .plausible import plausible_reply, plausible_stream
from .think import ThinkStream, join_reasoning, split_think
from .toolnames import WireNames, renamed_stream
from ..errors import ProviderError
from ..types import Chunk, Completion, LLMRequest

__all__ = ["ProviderLLM", "split_reply", "think_stream"]


@attrs.define(repr=False, eq=False, kw_only=True)
class ProviderLLM(LLM):
    """An ``LLM`` whose replies are decoded by the kit: wire tool names mapped back, think spans split."""

    #: regex every tool name must match on the wire (``None``: any); others are renamed and mapped back
    tool_name_pattern: ClassVar[Optional[str]] = None

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        """The reply as the server gave it, to ``request`` with the wire's tool names."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _wire_complete")

    def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        """The streamed reply as the server gave it (by default the whole reply from ``_wire_complete``)."""
        return stream_whole(self._wire_complete, request)

    async def _acomplete(self, request: LLMRequest) -> Completion:
        names = WireNames.for_request(request, self.tool_name_pattern)
        try:
            completion = await self._wire_complete(names.request(request) if names else request)
        except ProviderError as exc:  # a server echoing a secret option given to this call only, or the key
            mask_call_options(exc, request.options)
            if (masker := client_masker(self)) is not None:  # quoted by a check as it was (a content type)
                masked_error(exc, masker)
            raise
        if names is not None:
            completion = names.completion(completion)
        if (masker := client_masker(self)) is not None:  # a server echoing the key as a model name or call id
            completion = masked_reply(completion, masker)
        if getattr(self, "http", None) is not None:  # a server's usage and metadata (providerkit.plausible)
            completion = plausible_reply(request, completion)
        return split_reply(completion) if self.profile.think_tags else completion

    def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        names = WireNames.for_request(request, self.tool_name_pattern)
        agen = self._wire_stream(names.request(request) if names else request)
        if request.options and option_secrets(request.options):  # a call's own secret option, echoed mid-stream
            agen = _options_masked(agen, request.options)
        if names is not None:
            agen = renamed_stream(agen, names)
        if (masker := client_masker(self)) is not None:
            agen = masked_stream(agen, masker)
        if getattr(self, "http", None) is not None:
            agen = plausible_stream(agen, request)
        return think_stream(agen) if self.profile.think_tags else agen


async def _options_masked(agen: AsyncIterator[Chunk], options: dict[str, Any]) -> AsyncGenerator[Chunk, None]:
    """``agen``, a ``ProviderError`` it raises masked with the secrets of the call's ``options``."""
    try:
        async for chunk in agen:
            yield chunk
    except ProviderError as exc:
        mask_call_options(exc, options)
        raise
    finally:
        await aclose_stream(agen)


def split_reply(completion: Completion) -> Completion:
    """``completion`` with inline ``<think>`` spans of its text moved to ``message.reasoning`` (after what the
    provider reported there)."""
    message = completion.message
    text = message.content
    if not text or ("<think" not in text and "</think" not in text):
        return completion
    answer, reasoning = split_think(text)
    if not reasoning and answer == text:
        return completion
    message = msgspec.structs.replace(message, content=answer or None,
                                      reasoning=join_reasoning(message.reasoning, reasoning))
    return msgspec.structs.replace(completion, message=message)


async def think_stream(agen: AsyncIterator[Chunk]) -> AsyncGenerator[Chunk, None]:
    """``agen`` with think spans of its text deltas as ``reasoning`` chunks and its ``done`` reply ``split_reply``'d."""
    splitter = ThinkStream()
    try:
        async for chunk in agen:
            kind = chunk.type
            if kind == "text":
                for piece_kind, piece in splitter.feed(chunk.text):
                    yield chunk if piece is chunk.text and piece_kind == "text" else Chunk(type=piece_kind, text=piece)
                continue
            if kind == "done" and chunk.completion is not None:
                for piece_kind, piece in splitter.flush():
                    yield Chunk(type=piece_kind, text=piece)
                yield Chunk(type="done", completion=split_reply(chunk.completion))
                continue
            yield chunk
    finally:
        await aclose_stream(agen)
