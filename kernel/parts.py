"""Message parts (``zagent.types.Part``): builders, size bounds, wire helpers, placeholders, media checks.

Inline bytes are bounded (``MAX_INLINE_BYTES`` unless ``max_bytes=`` says otherwise). URLs must be
``https://``/``http://`` or ``data:``; nothing here reads a path or follows a URL a spec named.
Logs, events and trajectories show ``placeholder(part)``, never the bytes.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Iterable, Optional, Union

from .errors import ConfigError, ProviderConfigError
from .types import Message, Part

#: default bound on one part's inline bytes (the APIs take about 20 MB per image, 32 MB per PDF request)
MAX_INLINE_BYTES = 20 * 1024 * 1024

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"%PDF-", "application/pdf"))


def sniff(data: bytes) -> Optional[str]:
    """The media type the bytes' magic number shows (PNG, JPEG, GIF, WebP, PDF), or ``None``."""
    for magic, media in _MAGIC:
        if data.startswith(magic):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _bounded(data: bytes, what: str, max_bytes: Optional[int]) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ConfigError(f"{what} data must be bytes, got {type(data).__name__}; read the file in your code "
                          f"(or use zagent.parts.read_part(path))")
    data = bytes(data)
    limit = MAX_INLINE_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise ConfigError(f"{what} is {len(data)} bytes, over the {limit}-byte limit for inline parts; "
                          f"shrink it, send it by URL, or pass max_bytes= to raise the limit")
    return data


def image_part(source: Union[bytes, str], media_type: Optional[str] = None,
               max_bytes: Optional[int] = None) -> Part:
    """``Part.image``: bytes (bounded; the media type sniffed when not given) or an http(s)/data URL."""
    if isinstance(source, str):
        if not source.startswith(("https://", "http://", "data:image/")):
            raise ConfigError(f"image URL {source[:60]!r} is not an http(s):// or data:image/ URL; "
                              f"pass the image's bytes for a local file")
        return Part(type="image", url=source, media_type=media_type or "")
    data = _bounded(source, "image", max_bytes)
    media = media_type or sniff(data)
    if not media or not media.startswith("image/"):
        raise ConfigError(f"cannot tell the image's media type ({media or 'unknown bytes'}); pass "
                          f"media_type='image/png' (or jpeg, gif, webp)")
    return Part(type="image", data=data, media_type=media)


def file_part(data: bytes, media_type: str = "application/pdf", name: Optional[str] = None,
              max_bytes: Optional[int] = None) -> Part:
    """``Part.file``: a document's bytes (bounded), its media type and an optional file name."""
    return Part(type="file", data=_bounded(data, "file", max_bytes), media_type=media_type, name=name)


def read_part(path: Any, max_bytes: Optional[int] = None) -> Part:
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


def parts_of(image: Any = None, file: Any = None) -> list[Part]:
    """``Message.user``'s ``image=``/``file=`` values (a ``Part``, bytes, a URL, or a list) as parts."""
    out: list[Part] = []
    for value, build in ((image, image_part), (file, file_part)):
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else (value,):
            out.append(v if isinstance(v, Part) else build(v))
    return out


def b64(part: Part) -> str:
    return base64.b64encode(part.data).decode("ascii")


def data_url(part: Part) -> str:
    """The part's URL, or its bytes as a ``data:`` URL."""
    return part.url or f"data:{part.media_type};base64,{b64(part)}"


def placeholder(part: Part) -> str:
    """What logs, events and trajectories keep of a part: ``<image/png 12345 bytes sha256:…>`` or its URL
    (a ``data:`` URL is summarised the same way)."""
    if part.url and not part.url.startswith("data:"):
        return f"<{part.type} {part.url}>"
    data = part.data or (part.url or "").encode()
    return f"<{part.media_type or part.type} {len(data)} bytes sha256:{hashlib.sha256(data).hexdigest()[:16]}>"


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
