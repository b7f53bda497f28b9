"""Message parts (``zagent.types.Part``): builders, size bounds, placeholders, media checks.

Inline bytes are bounded (``MAX_INLINE_BYTES`` unless ``max_bytes=`` says otherwise). URLs must be
``https://``/``http://`` or ``data:``; nothing here reads a path or follows a URL a spec named.
Logs, events and trajectories show ``placeholder(part)``, never the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError, ProviderConfigError
from ..types import (
    MAX_INLINE_BYTES,
    Message,
    Part,
    file_part,
    image_part,
    parts_of,
    placeholder,
    sniff,
)

__all__ = ["MAX_INLINE_BYTES", "check_media", "file_part", "image_part", "parts_of",
           "placeholder", "read_part", "sniff"]


def read_part(path: Any, max_bytes: int | None = None) -> Part:
    """An image or file part from a local path the app (or the CLI user) chose, read with the size bound."""
    from pathlib import Path

    p = Path(path)
    limit = MAX_INLINE_BYTES if max_bytes is None else max_bytes
    try:
        size = p.stat().st_size
        if size > limit:
            raise ConfigError(f"{p} is {size} bytes, over the {limit}-byte limit for inline parts; "
                              f"shrink it or raise max_bytes")
        with p.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror or exc}; check the path") from None
    media = sniff(data)
    if media and media.startswith("image/"):
        return image_part(data, media, limit)
    return file_part(data, media or "application/octet-stream", p.name, limit)


def check_media(llm: Any, messages: Iterable[Message]) -> None:
    """Raise ``ProviderConfigError`` before any request when a part's kind is one the model does not take."""
    accepted = None
    for m in messages:
        if not m.parts:
            continue
        if accepted is None:
            accepted = llm.profile.input_media
            if accepted is None:
                accepted = type(llm).input_media
        for part in m.parts:
            kind = part.type
            if kind == "text" or kind in accepted or (kind == "file" and part.media_type in accepted):
                continue
            takes = ", ".join(accepted) or "text only"
            raise ProviderConfigError(
                f"{llm.name} cannot take {kind} parts ({part.media_type or part.url or kind}); it takes: {takes}. "
                f"Use a model that accepts {kind}s, drop the part, or, if the model does accept it, "
                f"set profile={{'input_media': ['{kind}', ...]}}", provider=llm.provider)
