"""``scrub``: plain JSON data for what the run log (and tracing) keeps, with values under secret-looking keys
(``looks_secret``) and ``zagent.Secret`` objects as ``"***"``, URL userinfo (and, in content, secret environment
values) masked and bytes as ``<N bytes sha256:…>``. Message text is otherwise kept as written.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import msgspec

from zagent.types import placeholder
from zagent import Secret, mask_userinfo
from zagent.agentkit.secrets import headers_key, looks_secret, looks_secret_header
from zagent.types import Part

MASK = "***"


def scrub(value: Any, *, headers: bool = False, mask: Callable[[str], str] = mask_userinfo) -> Any:
    """``value`` as plain data, secrets masked at any depth (in a mapping of HTTP headers, those
    ``looks_secret_header`` names); ``mask`` is applied to each string (default: URL credentials; the observer
    passes ``env_masker()`` for message content, which also masks secret environment values)."""
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, Part):
        return placeholder(value)
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value, builtin_types=(bytes, bytearray), enc_hook=_opaque)
    if isinstance(value, dict):
        secret = looks_secret_header if headers else looks_secret
        return {str(k): MASK if secret(str(k)) and v not in (None, "") else scrub(v, headers=headers_key(k), mask=mask)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if headers:  # ``[[name, value], ...]``, which the HTTP client takes as a mapping too
            return [[str(x[0]), MASK if looks_secret_header(str(x[0])) and x[1] not in (None, "")
                     else scrub(x[1], mask=mask)]
                    if isinstance(x, (list, tuple)) and len(x) == 2 else scrub(x, mask=mask) for x in value]
        return [scrub(v, mask=mask) for v in value]
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, (bytes, bytearray)):  # a message part's inline data: never logged
        return f"<{len(value)} bytes sha256:{hashlib.sha256(value).hexdigest()[:16]}>"
    if isinstance(value, (int, float, bool, type(None))):
        return value
    return _opaque(value)


def _opaque(value: Any) -> Any:
    return MASK if isinstance(value, Secret) else f"<{type(value).__name__}>"
