"""Message content for spans, in the GenAI conventions' JSON shapes, with secrets masked.

Only used when content capture is switched on. ``gen_ai.input.messages`` /
``gen_ai.output.messages``: ``[{"role": ..., "parts": [{"type": "text", "content": ...},
{"type": "tool_call", "id", "name", "arguments"}, {"type": "tool_call_response", "id", "response"}]}]``.
Masked with ``zagent._trust.secrets``: values under secret-looking keys and ``zagent.Secret``
objects become ``"***"``, and so does any occurrence of the value of an environment
variable whose name looks secret (``OPENAI_API_KEY``...): ``env_secrets()``.
"""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from zagent import Secret, looks_secret, mask_userinfo

MASK = "***"
_json = msgspec.json.Encoder(enc_hook=lambda value: MASK if isinstance(value, Secret) else repr(value))


def env_secrets() -> list[str]:
    """Values of environment variables whose names look secret (at least 6 characters)."""
    import os

    return [v for k, v in os.environ.items() if looks_secret(k) and len(v) >= 6]


def masked(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Plain data with secrets masked (keys that look secret, ``Secret`` objects, known secret strings)."""
    known = [s for s in secrets if s and len(s) >= 6]
    return _mask(value, known)


def _mask(value: Any, known: list[str]) -> Any:
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value, enc_hook=lambda v: MASK if isinstance(v, Secret) else repr(v))
    if isinstance(value, dict):
        return {str(k): MASK if looks_secret(str(k)) and v not in (None, "") else _mask(v, known)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask(v, known) for v in value]
    if isinstance(value, str):
        for secret in known:
            value = value.replace(secret, MASK)
        return mask_userinfo(value)
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
    for call in m.tool_calls or []:
        parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
    return {"role": m.role, "parts": parts}
