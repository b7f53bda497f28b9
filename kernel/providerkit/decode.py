"""``body_chunks``: a reply's body decoded within a size limit counted on the *decoded* bytes of every layer (gzip
and deflate bombs). ``gzip``/``x-gzip`` and ``deflate`` (zlib or raw), at most ``MAX_LAYERS`` stacked, are inflated
``STEP`` bytes at a time; ``br``, ``zstd``, ``compress``, more layers, corrupt data, data after the end or a cut
stream raise ``ProtocolError``; unknown tokens pass through. ``fragmented``: a body of many tiny pieces (each costs
CPU) is refused.
"""

from __future__ import annotations

import zlib
from typing import Any, AsyncGenerator, Callable, Iterator, Optional

from ..errors import ProtocolError

#: The most bytes one inflating step may produce (the unit the limit is checked in).
STEP = 64 * 1024
#: The most compressing encodings one reply may stack (``gzip, gzip`` is two).
MAX_LAYERS = 2
_REFUSED = frozenset({"br", "zstd", "compress", "x-compress"})
#: Pieces of one body read before their average size is looked at (about 2.5 s of CPU in 1-byte pieces).
PIECES_FROM = 2**18
#: The smallest average piece, in bytes, of a body of more than ``PIECES_FROM`` pieces (an honest event is 50+).
MIN_PIECE = 24


def fragmented(pieces: int, size: int, where: str) -> Optional[ProtocolError]:
    """The error for a body of ``pieces`` pieces holding ``size`` bytes when it is too fragmented, else ``None``."""
    if pieces <= PIECES_FROM or size >= pieces * MIN_PIECE:
        return None
    return ProtocolError(
        f"{where}sent its body in {pieces} pieces of {size / pieces:.1f} bytes on average; zagent stops reading a "
        f"body of more than {PIECES_FROM} pieces averaging under {MIN_PIECE} bytes (each piece costs CPU). "
        "Check the server or the proxy in front of it", status=200)


def encodings(response: Any) -> list[str]:
    """The compressing encodings of ``response`` in the order they were applied (``[]``: none)."""
    value = response.headers.get("content-encoding")
    if not value:
        return []
    names = [name.strip().lower() for name in value.split(",")]
    return [name for name in names if name and name != "identity"]


def body_chunks(response: Any, limit: Optional[int], owner: Any) -> AsyncGenerator[bytes, None]:
    """The decoded body of a streamed ``response``: an async iterator of chunks (close it with ``aclose()``).

    An encoded reply is inflated at most ``STEP`` bytes at a time; past ``limit`` in any layer (the caller counts
    the last one too) ``owner.too_large(limit, detail)`` is raised before the next step. The response is closed at
    the end of the body; ``owner`` (the ``HttpClient``) names the server in errors.
    """
    if hasattr(response, "_content"):  # already read by httpx (a mock transport): nothing left to bound
        bytes_: AsyncGenerator[bytes, None] = response.aiter_bytes()
        return bytes_
    names = encodings(response)
    if not names:
        raw: AsyncGenerator[bytes, None] = response.aiter_raw()
        return raw
    return _decoded(response, _layers(names, f"{owner.provider} ({owner.base_url}) "), limit, owner.too_large)


async def _decoded(response: Any, layers: list["_Layer"], limit: Optional[int],
                   too_large: Callable[[int, str], Exception]) -> AsyncGenerator[bytes, None]:
    raw = response.aiter_raw()
    pieces = size = 0
    try:
        async for chunk in raw:
            pieces += 1
            size += len(chunk)
            if pieces > PIECES_FROM and (error := fragmented(pieces, size, layers[0].where)) is not None:
                raise error
            for out in _through(layers, 0, chunk, limit, too_large):
                yield out
        for i in range(len(layers)):  # flush each layer in turn, through the ones after it
            for out in _through(layers, i, None, limit, too_large):
                yield out
    finally:
        await raw.aclose()


class _Layer:
    """One compressing layer being undone, and how many bytes it has produced."""

    __slots__ = ("name", "z", "size", "fallback", "where", "fed")

    def __init__(self, name: str, where: str):
        self.name = name
        self.where = where
        self.size = 0
        self.fed = False  # compressed bytes came in (an empty body is no stream to finish)
        self.fallback = name == "deflate"  # zlib-wrapped first; raw deflate if that fails at once
        self.z = zlib.decompressobj(zlib.MAX_WBITS | 16 if name != "deflate" else zlib.MAX_WBITS)

    def inflate(self, data: bytes, final: bool = False) -> Iterator[bytes]:
        """``data`` inflated, ``STEP`` bytes at a time (``final``: the body ended, flush what is pending). Bytes after
        the compressed stream's end (a second gzip member, junk), or a body ending before it, are a ``ProtocolError``:
        other readers of the same bytes would see another reply, or a cut one would pass."""
        z = self.z
        if data:
            self.fed = True
            if z.eof:
                raise self._broken("has data after the end of its compressed stream")
        while True:
            try:
                out = z.decompress(data, STEP)
            except zlib.error as exc:
                if self.fallback and self.size == 0:
                    self.fallback = False
                    self.z = z = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise ProtocolError(
                    f"{self.where}sent a body that is not valid {self.name} data ({exc}); check the server "
                    "or the proxy in front of it", status=200) from None
            self.fallback = False
            data = z.unconsumed_tail
            if out:
                yield out
            if z.eof and z.unused_data:
                raise self._broken("has data after the end of its compressed stream")
            if z.eof or (not data and len(out) < STEP):
                if final and not z.eof and self.fed:
                    raise self._broken("was cut: it ended before its compressed stream did")
                return

    def _broken(self, what: str) -> ProtocolError:
        return ProtocolError(f"{self.where}sent a {self.name} body that {what}; zagent reads a compressed body only "
                             "whole. Check the server or the proxy in front of it", status=200)


def _layers(names: list[str], where: str) -> list[_Layer]:
    refused = [name for name in names if name in _REFUSED]
    known = [name for name in names if name in ("gzip", "x-gzip", "deflate")]
    if refused or len(known) > MAX_LAYERS:
        raise ProtocolError(
            f"{where}sent a body with Content-Encoding {', '.join(names)!r}; zagent decodes gzip and deflate, "
            f"at most {MAX_LAYERS} stacked. Check the server or the proxy in front of it", status=200)
    return [_Layer(name, where) for name in reversed(known)]  # the last applied is undone first


def _through(layers: list[_Layer], i: int, data: Optional[bytes], limit: Optional[int],
             too_large: Callable[[int, str], Exception]) -> Iterator[bytes]:
    """``data`` through layers ``i`` onwards (``None``: flush layer ``i``), each layer's output counted."""
    layer = layers[i]
    for out in layer.inflate(data if data is not None else b"", final=data is None):
        layer.size += len(out)
        if limit is not None and layer.size > limit:
            raise too_large(limit, f"decoded, {layer.size} bytes so far from {layer.name}")
        if i + 1 == len(layers):
            yield out
        else:
            yield from _through(layers, i + 1, out, limit, too_large)
