"""Message parts from local files (``read_part``, size-bounded) and the check of what a model takes
(``check_media``); the part builders and placeholders are in ``zagent.types``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError, ProviderConfigError
from ..types import MAX_INLINE_BYTES, Message, Part, file_part, image_part, sniff

__all__ = ["MAX_INLINE_BYTES", "check_media", "read_part"]


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
