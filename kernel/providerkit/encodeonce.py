"""Wire JSON encoded once: ``encoded_once`` and ``messages_once`` make functions returning ``msgspec.Raw`` of
``build(x)``, computed once per ``ToolSpec`` or message object (their caches cleared at ``limit`` entries);
``history_encoder`` gives a request's messages, through ``messages_once`` from ``CACHE_FROM`` messages on.
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

    A message is checked by identity and by its field values: a field given a new value is encoded again, a list
    changed in place is not seen (replace a field rather than mutate it). The cache is cleared at ``limit`` entries.
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

    A conversation of fewer than ``cache_from`` messages is built whole each time (``build(m)``); from
    ``cache_from`` messages on, each goes through ``messages_once`` (spliced as ``msgspec.Raw``). Both give the
    same JSON.
    """
    once = messages_once(build, limit=limit)

    def encode_messages(messages: Sequence[Message]) -> list[Any]:
        return list(map(build if len(messages) < cache_from else once, messages))

    encode_messages.__doc__ = build.__doc__
    return encode_messages
