"""Message content for spans, in the GenAI conventions' JSON shapes, with secrets masked (content capture only).

``messages_json`` gives ``gen_ai.input.messages``/``gen_ai.output.messages`` (inline data over ``MAX_BLOB_BYTES``
keeps only type, size and digest); ``masked`` turns values under secret-looking keys, ``zagent.Secret``
objects and secret environment values (``zagent.agentkit.secrets.env_secrets()``) into ``"***"``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import Any, Iterable

import msgspec

from zagent import Secret
from zagent.agentkit.secrets import headers_key, looks_secret, looks_secret_header

MASK = "***"
#: inline image/file bytes up to this size are recorded (base64); larger ones by size and digest only
MAX_BLOB_BYTES = 64 * 1024
_json = msgspec.json.Encoder(enc_hook=lambda value: MASK if isinstance(value, Secret) else repr(value))


def masked(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Plain data with secrets masked (keys that look secret, ``Secret`` objects, known secret strings and their
    encoded forms: ``zagent.agentkit.secrets.Masker``)."""
    return _mask(value, _masker(tuple(s for s in secrets if isinstance(s, str))))


@functools.lru_cache(maxsize=8)
def _masker(secrets: tuple[str, ...]) -> Any:
    from zagent.agentkit.secrets import Masker

    return Masker(secrets)


def _mask(value: Any, known: Any, headers: bool = False) -> Any:
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value, enc_hook=lambda v: MASK if isinstance(v, Secret) else repr(v))
    if isinstance(value, dict):  # in a ``headers`` mapping, the providers' header rule (as the run log's)
        secret = looks_secret_header if headers else looks_secret
        return {str(k): MASK if secret(str(k)) and v not in (None, "") else _mask(v, known, headers_key(k))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask(v, known) for v in value]
    if isinstance(value, str):
        return known(value)  # URL userinfo too
    return value


def messages_json(messages: Iterable[Any], secrets: Iterable[str] = ()) -> str:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` for zagent ``Message``s."""
    return _json.encode(masked([_message(m) for m in messages], secrets)).decode()


def to_json(value: Any, secrets: Iterable[str] = ()) -> str:
    return _json.encode(masked(value, secrets)).decode()


def _message(m: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if m.role == "tool":
        parts.append({"type": "tool_call_response", "id": m.tool_call_id, "response": m.content or ""})
    elif m.content:
        parts.append({"type": "text", "content": m.content})
    parts.extend(_part(part) for part in getattr(m, "parts", None) or [])
    for call in m.tool_calls or []:
        parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
    return {"role": m.role, "parts": parts}


def _part(part: Any) -> dict[str, Any]:
    """A zagent ``Part`` (image or file) as a GenAI ``uri`` or ``blob`` part."""
    media = part.media_type or None
    kind = (media or "").split("/")[0]
    modality = "image" if part.type == "image" else kind if kind in ("audio", "video", "image") else "document"
    if part.type == "text":
        return {"type": "text", "content": part.text}
    if part.url and not part.url.startswith("data:"):
        return {"type": "uri", "modality": modality, "mime_type": media, "uri": part.url}
    data = part.data
    if not data and part.url:  # a data: URL: its payload
        from zagent.providerkit.codec import split_data_url

        named, payload = split_data_url(part.url)
        media = media or named or None
        try:
            data = base64.b64decode(payload)
        except ValueError:
            data = payload.encode()
    found: dict[str, Any] = {"type": "blob", "modality": modality, "mime_type": media}
    if part.name:
        found["name"] = part.name
    if len(data) <= MAX_BLOB_BYTES:
        found["content"] = base64.b64encode(data).decode()
    else:
        found.update(content="", size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return found
