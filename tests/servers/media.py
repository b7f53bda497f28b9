"""What the loopback servers make of image and file parts: each decoded and described, as an API would.

``describe(kind, content)`` turns one message's content (OpenAI chat parts, Responses input parts,
Anthropic blocks) or Ollama ``images`` into ``text [image/png 12 bytes] ...``; base64 that does not decode,
or a part of an unknown shape, raises ``BadPart`` (the servers answer 400 with its text).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any


class BadPart(ValueError):
    pass


def _bytes(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, TypeError) as exc:
        raise BadPart(f"invalid base64 in a part: {exc}") from None


def _url(url: str) -> str:
    if url.startswith("data:"):
        head, _, data = url.partition(",")
        if not head.endswith(";base64"):
            raise BadPart(f"data URL without ;base64: {head}")
        return f"[{head[5:-7]} {_bytes(data)} bytes]"
    if not url.startswith(("https://", "http://")):
        raise BadPart(f"unsupported URL {url[:40]}")
    return f"[{url}]"


def describe(kind: str, content: Any) -> str:
    """One message's content as text, its parts described (``kind``: openai, responses, anthropic, ollama)."""
    if isinstance(content, str):
        return content
    if kind == "ollama":
        return " ".join(f"[image {_bytes(i)} bytes]" for i in content)
    out = []
    for p in content:
        t = p.get("type")
        if t in ("text", "input_text"):
            out.append(p["text"])
        elif t == "image_url" and kind == "openai":
            out.append("image " + _url(p["image_url"]["url"]))
        elif t == "file" and kind == "openai":
            out.append(f"file {p['file']['filename']} " + _url(p["file"]["file_data"]))
        elif t == "input_image" and kind == "responses":
            out.append("image " + _url(p["image_url"]))
        elif t == "input_file" and kind == "responses":
            out.append(f"file {p['filename']} " + _url(p["file_data"]))
        elif t in ("image", "document") and kind == "anthropic":
            s = p["source"]
            size = f"[{s['media_type']} {_bytes(s['data'])} bytes]" if s["type"] == "base64" else f"[{s['url']}]"
            out.append(f"{t} {size}")
        elif t == "tool_result" and kind == "anthropic":
            out.append(p.get("content") or "")
        else:
            raise BadPart(f"unknown {kind} content part type {t!r}")
    return " ".join(out)
