"""Embeddings as little-endian float32 blobs (``pack``/``unpack``) and brute-force cosine ranking (``top_k``), with
numpy when it is installed (not a dependency), else plain Python. A vector holding NaN, infinity or a number float32
cannot hold is a ``ConfigError`` (``finite``); a stored one edited that way ranks last.
"""

from __future__ import annotations

import heapq
import math
from array import array
from typing import Any, Iterable, Sequence

from zagent.agentkit.embeddings import checked_vector


def finite(vector: Any, who: Any, length: Any = None) -> "array[float]":
    """``vector`` as float32 numbers; ``ConfigError`` naming ``who`` (the embedder) when it is not a list of
    numbers, holds NaN, infinity or a number beyond float32, is empty or over ``MAX_DIMENSIONS`` long, or is not
    ``length`` long (``agentkit.embeddings.checked_vector``): such a vector ranks nothing, stored it stays wrong."""
    return checked_vector(vector, who, length)


def pack(vector: Sequence[float], who: Any = "embedder") -> bytes:
    """A vector as little-endian float32 bytes (``finite``: NaN and infinity are a ``ConfigError``)."""
    return finite(vector, who).tobytes()


def unpack(blob: bytes) -> array[float]:
    """Float32 bytes back to a vector."""
    out = array("f")
    out.frombytes(blob)
    return out


def top_k(query: Sequence[float], rows: Iterable[tuple[bytes, Any]], k: int) -> list[tuple[float, Any]]:
    """The ``k`` rows (``(blob, payload)``) most similar to ``query``, best first, as ``(cosine, payload)``."""
    rows = list(rows)
    if not rows or k <= 0:
        return []
    try:
        import numpy  # noqa: F401
    except ImportError:
        scored = ((_ranked(cosine(query, unpack(blob))), payload) for blob, payload in rows)
        return heapq.nlargest(k, scored, key=lambda s: s[0])
    return _top_k_numpy(query, rows, k)


def _top_k_numpy(query: Sequence[float], rows: list[tuple[bytes, Any]], k: int) -> list[tuple[float, Any]]:
    import numpy as np

    q = np.asarray(query, dtype=np.float32)
    matrix = np.frombuffer(b"".join(blob for blob, _ in rows), dtype=np.float32).reshape(len(rows), -1)
    with np.errstate(all="ignore"):  # a row edited to NaN/inf: its score is not finite, ranked last below
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
        scores = (matrix @ q) / np.where(norms == 0, 1.0, norms)
    scores = np.where(np.isfinite(scores), scores, -np.inf)
    best = np.argsort(-scores)[:k]
    return [(float(scores[i]), rows[i][1]) for i in best]


def _ranked(score: float) -> float:
    """A score as ranked: one that is not finite (a stored vector edited to NaN or infinity) comes last."""
    return score if math.isfinite(score) else -math.inf


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is all zeros."""
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
