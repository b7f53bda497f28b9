"""Vectors an embedder returned, checked before anything stores or ranks by them: one per text, each a non-empty
list of finite float32 numbers, all of one length, at most ``MAX_DIMENSIONS`` long. An embedding server may lie
(NaN, lengths that change from text to text, a million numbers a text); ``checked_vectors`` raises a
``ConfigError`` naming the embedder and what was wrong. Memory, documents, tool retrieval and skills use it.
"""

from __future__ import annotations

import math
from array import array
from typing import Any, Optional

from ..errors import ConfigError

#: The most numbers one embedding may hold (the largest common models use 4,096; 16,384 is 64 KiB a vector).
MAX_DIMENSIONS = 16_384


def checked_vector(vector: Any, who: Any, length: Optional[int] = None) -> "array[float]":
    """``vector`` as float32 numbers, or a ``ConfigError`` naming ``who`` (the embedder): not a list of numbers,
    empty, over ``MAX_DIMENSIONS``, NaN/infinity/beyond float32, or not ``length`` long when that is given."""
    size = len(vector) if hasattr(vector, "__len__") else None
    if size is not None and size > MAX_DIMENSIONS:  # before converting a million numbers
        raise ConfigError(f"embedder {who!r} returned a vector of {size} dimensions; zagent takes at most "
                          f"{MAX_DIMENSIONS} (check the embedder's model and its server's replies)")
    try:
        out = array("f", vector)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"embedder {who!r} returned {type(vector).__name__} that is not a list of numbers "
                          f"({exc}); an embedder must return one list of finite numbers per text") from None
    if not out or len(out) > MAX_DIMENSIONS:
        raise ConfigError(f"embedder {who!r} returned a vector of {len(out)} dimensions; zagent takes 1 to "
                          f"{MAX_DIMENSIONS} (check the embedder's model and its server's replies)")
    if not all(math.isfinite(x) for x in out):
        raise ConfigError(f"embedder {who!r} returned a vector holding NaN, infinity or a number beyond float32; "
                          "an embedder must return finite numbers (check its server's replies)")
    if length is not None and len(out) != length:
        raise ConfigError(f"embedder {who!r} returned a vector of length {len(out)} where its vectors are {length} "
                          "long; one embedder returns one length (did its model or server change?)")
    return out


def checked_vectors(vectors: Any, count: int, who: Any, length: Optional[int] = None) -> "list[array[float]]":
    """``count`` vectors (one per text asked), each ``checked_vector``, all of one length (``length`` if given)."""
    try:
        n = len(vectors)
    except TypeError:
        n = -1
    if n != count:
        raise ConfigError(f"embedder {who!r} returned {n if n >= 0 else type(vectors).__name__} vectors for "
                          f"{count} texts; it must return one per text")
    out: list[array[float]] = []
    for vector in vectors:
        checked = checked_vector(vector, who)
        if length is None:
            length = len(checked)
        elif len(checked) != length:
            raise ConfigError(f"embedder {who!r} returned vectors of different lengths ({length} and "
                              f"{len(checked)}) for one request; one embedder returns one length for every text")
        out.append(checked)
    return out
