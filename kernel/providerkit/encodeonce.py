"""``encoded_once``: a provider's wire form of a ``ToolSpec``, encoded once per spec object;
``messages_once``: the same for the messages of a growing conversation;
``history_encoder``: a request's message list, through ``messages_once`` only
once the conversation is long enough for that to pay.

Agents offer the same tools on every request. Providers turn each ``ToolSpec``
into their protocol's JSON once and splice the bytes into later request bodies
as ``msgspec.Raw``. The cache is keyed by the spec object (its id, checked by
identity, holding a reference so the id cannot be reused while cached) and
cleared when it reaches ``limit`` entries, so specs made per request cannot
grow it without bound.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import msgspec
import msgspec.structs

from ..types import Message, ToolSpec


def encoded_once(build: Callable[[ToolSpec], Any], *, limit: int = 4096) -> Callable[[ToolSpec], msgspec.Raw]:
    """A function returning ``msgspec.Raw(json(build(spec)))``, computed once per spec object."""
    cache: dict[int, tuple[ToolSpec, msgspec.Raw]] = {}
    encode = msgspec.json.encode

    def encode_tool(spec: ToolSpec) -> msgspec.Raw:
        hit = cache.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
        raw = msgspec.Raw(encode(build(spec)))
        if len(cache) >= limit:
            cache.clear()
        cache[id(spec)] = (spec, raw)
        return raw

    encode_tool.__doc__ = build.__doc__
    return encode_tool


def messages_once(build: Callable[[Message], Any], *, limit: int = 2048) -> Callable[[Message], msgspec.Raw]:
    """A function returning ``msgspec.Raw(json(build(message)))``, computed once per message object.

    A loop resends its whole conversation on every step; with this each message is
    encoded once, so building a request costs O(new messages), not O(history). The
    cache holds the message and checks it by identity and by its field values (any
    field given a new value is encoded again; a list changed in place is not seen,
    so replace a field rather than mutate it); it is cleared when it reaches
    ``limit`` entries, which bounds what it keeps alive.
    """
    cache: dict[int, tuple[Message, tuple[Any, ...], msgspec.Raw]] = {}
    encode = msgspec.json.encode
    fields = msgspec.structs.astuple

    def encode_message(message: Message) -> msgspec.Raw:
        hit = cache.get(id(message))
        values = fields(message)
        if hit is not None and hit[0] is message and hit[1] == values:
            return hit[2]
        raw = msgspec.Raw(encode(build(message)))
        if len(cache) >= limit:
            cache.clear()
        cache[id(message)] = (message, values, raw)
        return raw

    encode_message.__doc__ = build.__doc__
    return encode_message


#: conversations shorter than this are built whole on every request (see ``history_encoder``)
CACHE_FROM = 8


def history_encoder(build: Callable[[Message], Any], *, limit: int = 2048,
                    cache_from: int = CACHE_FROM) -> Callable[[Sequence[Message]], list[Any]]:
    """A function turning a request's messages into their wire values for the request body.

    A conversation of fewer than ``cache_from`` messages is built whole each time
    (``build(m)``, encoded with the body): a short agent run sends two or three
    requests, so caching its messages would only cost bookkeeping and keep them
    alive in the cache, where the cycle collector promotes and rescans them.
    From ``cache_from`` messages on, each message goes through ``messages_once``
    (encoded once, spliced as ``msgspec.Raw``), so a long loop's request costs
    O(new messages). Both give the same JSON.
    """
    once = messages_once(build, limit=limit)

    def encode_messages(messages: Sequence[Message]) -> list[Any]:
        return list(map(build if len(messages) < cache_from else once, messages))

    encode_messages.__doc__ = build.__doc__
    return encode_messages
