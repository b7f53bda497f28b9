"""``masked_reply``: a reply's metadata without the client's secrets. A hostile server got the key with the request
and can echo it as the reply's ``model``, ``id``, ``finish_reason`` or ``refusal`` (an error's message), or as a tool
call's ``id`` or ``name``, which zagent copies into events, the run log and traces. The message text and the
arguments are the server's answer, left as they are (docs/security.md, 5). Also cut short, upper-cased or encoded
(``mask_pieces``). ``models_mask``: for errors quoting a reply.
"""

from __future__ import annotations

import functools
from typing import Any, AsyncGenerator, AsyncIterator, Optional

import msgspec

from .._model.replies import aclose_stream
from .._trust.secrets import ENCODED, PIECE_LENGTH, decodings, mask_pieces
from ..errors import ProviderError
from ..types import Chunk, Completion, ToolCall

__all__ = ["masked_call", "masked_reply", "masked_stream", "models_mask"]


def masked_reply(completion: Completion, masker: Any) -> Completion:
    """``completion`` with ``masker`` applied to its model, id, finish reason, refusal (``zagent.Refusal`` quotes it)
    and tool calls' ids and names (the same object when none held a secret)."""
    changed: dict[str, Any] = {}
    for name in ("model", "id", "finish_reason", "refusal"):
        value = getattr(completion, name)
        if isinstance(value, str) and value and (shown := _shown(value, masker)) != value:
            changed[name] = shown
    calls = completion.message.tool_calls
    if calls:
        fixed = [masked_call(c, masker) for c in calls]
        if any(a is not b for a, b in zip(fixed, calls)):
            changed["message"] = msgspec.structs.replace(completion.message, tool_calls=fixed)
    return msgspec.structs.replace(completion, **changed) if changed else completion


def masked_call(call: ToolCall, masker: Any) -> ToolCall:
    """``call`` with its id and name masked (an id made only of a secret is left for ``settle`` to replace)."""
    ident, name = _shown(call.id or "", masker), _shown(call.name or "", masker)
    if ident == (call.id or "") and name == (call.name or ""):
        return call
    return msgspec.structs.replace(call, id=ident, name=name)


async def masked_stream(agen: AsyncIterator[Chunk], masker: Any) -> AsyncGenerator[Chunk, None]:
    """``agen`` with each tool call and the ``done`` reply ``masked_reply``'d, and an error it raises masked
    (``masking.masked_error``)."""
    try:
        async for chunk in agen:
            if chunk.type == "tool_call" and chunk.tool_call is not None:
                call = masked_call(chunk.tool_call, masker)
                if call is not chunk.tool_call:
                    chunk = msgspec.structs.replace(chunk, tool_call=call)
            elif chunk.type == "done" and chunk.completion is not None:
                reply = masked_reply(chunk.completion, masker)
                if reply is not chunk.completion:
                    chunk = Chunk(type="done", completion=reply)
            yield chunk
    except ProviderError as exc:  # a server's text a check quoted as it was (a content type, a tool name)
        from .masking import masked_error

        masked_error(exc, masker)
        raise
    finally:
        await aclose_stream(agen)


def _shown(value: str, masker: Any) -> str:
    """``masker(value)``, and ``mask_pieces`` of it when it holds ``PIECE_LENGTH`` characters of a secret as
    written, in another case or decoded (a set lookup per window first: this runs on every reply)."""
    shown: str = masker(value)
    pieces = _pieces(getattr(masker, "values", ()))
    if len(shown) < PIECE_LENGTH or not pieces:
        return shown
    for text in (shown.lower(), *(decodings(shown) if ENCODED.search(shown) else ())):
        if any(text[i:i + PIECE_LENGTH] in pieces for i in range(len(text) - PIECE_LENGTH + 1)):
            return mask_pieces(shown, masker.values)
    return shown


@functools.lru_cache(maxsize=64)
def _pieces(values: tuple[str, ...]) -> frozenset[str]:
    """Every run of ``PIECE_LENGTH`` characters of ``values``, lower-cased."""
    return frozenset(v.lower()[i:i + PIECE_LENGTH] for v in values if isinstance(v, str)
                     for i in range(len(v) - PIECE_LENGTH + 1))


def client_masker(llm: Any) -> Optional[Any]:
    """The ``Masker`` of ``llm``'s HTTP client when it has secrets (``None``: nothing to mask)."""
    http = getattr(llm, "http", None)
    masker = getattr(http, "masker", None)
    if masker is None:
        return None
    found = masker()
    return found if found else None


def models_mask(llm: Any) -> Optional[Any]:
    """A ``mask(text)`` with the client secrets of ``llm`` and of every model inside it (a ``fallback:`` chain's
    ``models``, a wrapper's ``inner`` or ``llm``), also cut short or encoded; ``None`` when there are none. For an
    error quoting a reply (a ``ParseError``), on that path only."""
    from .._trust.secrets import Masker

    values: list[str] = []
    todo: list[Any] = [llm]
    seen: set[int] = set()
    while todo:
        model = todo.pop()
        if model is None or id(model) in seen or len(seen) > 64:
            continue
        seen.add(id(model))
        masker = client_masker(model)
        values.extend(masker.values if masker is not None else ())
        todo.extend(getattr(model, "models", None) or ())
        todo.extend(getattr(model, name, None) for name in ("inner", "llm"))
    if not values:
        return None
    found = Masker(values)
    return lambda text: mask_pieces(found(text), found.values)
