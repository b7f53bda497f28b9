"""``read_part``: an image or file message part from a local file the app (or the CLI user) chose."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..types import MAX_INLINE_BYTES, Part, file_part, image_part, sniff

__all__ = ["MAX_INLINE_BYTES", "read_part"]


def read_part(path: Any, max_bytes: int | None = None) -> Part:
    """An image (by its bytes) or file part from ``path``, read with the size bound (``MAX_INLINE_BYTES``); a
    FIFO or device is a ``ConfigError``, not a hang, and a symlink another user owns is not followed."""
    import os
    from pathlib import Path

    from .files import open_regular

    p = Path(path)
    limit = MAX_INLINE_BYTES if max_bytes is None else max_bytes
    try:
        with open_regular(p) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise ConfigError(f"{p} is {size} bytes, over the {limit}-byte limit for inline parts; "
                                  f"shrink it or raise max_bytes")
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror or exc}; check the path") from None
    media = sniff(data)
    if media and media.startswith("image/"):
        return image_part(data, media, limit)
    return file_part(data, media or "application/octet-stream", p.name, limit)
