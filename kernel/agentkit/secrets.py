"""Secrets out of what zagent shows: ``looks_secret`` (a setting's name says it holds one), ``looks_secret_header``
(the same for an HTTP header, as providers mask them), ``public_data`` (settings without them), ``held_settings``
(their secrets as ``Secret``), ``Masker`` (known secret values out of text) and ``env_secrets``; the kernel masks
with the same rule (its ``_trust.secrets``)."""

from __future__ import annotations

import re
from typing import Any

from .._trust.secrets import (ANYWHERE_MASK_LENGTH, MASK, MIN_MASK_LENGTH, SECRET_KEY_WORDS, WORD_MASK_LENGTH,
                              Masker, Secret, encoded_forms, env_masker, env_secrets, error_excerpt, looks_secret,
                              mask_env, mask_exception, mask_pieces, mask_userinfo)
from .._trust.settings import config_masker

__all__ = ["Masker", "config_masker", "encoded_forms", "env_masker", "env_secrets", "error_excerpt", "held_settings",
           "looks_secret", "looks_secret_header", "mask_env", "mask_exception", "mask_pieces", "masked_arguments",
           "masked_json", "public_data"]
__all__ += ["ANYWHERE_MASK_LENGTH", "MASK", "MIN_MASK_LENGTH", "SECRET_KEY_WORDS", "WORD_MASK_LENGTH"]

#: words that make a header secret anywhere in its name (``X-Authentication``, ``X-Api-Keys``), as providers mask
#: the values of such headers when a server echoes them (``zagent.providerkit.masking.header_secrets``)
HEADER_SECRET_WORDS = ("key", "token", "secret", "auth", "cookie", "passw")
_PLACEHOLDER = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def looks_secret_header(name: str) -> bool:
    """Whether an HTTP header named ``name`` holds a secret: ``looks_secret``, or its name says key, token,
    secret, auth, cookie or password anywhere (``X-Authentication``, ``X-Custom-Auth-Header``)."""
    lowered = name.lower()
    return looks_secret(name) or any(w in lowered for w in HEADER_SECRET_WORDS)


def headers_key(key: Any) -> bool:
    """Whether the setting ``key`` is a mapping of HTTP headers (``headers``, ``extra_headers``)."""
    return str(key).lower().endswith("headers")


def public_data(value: Any, *, headers: bool = False) -> Any:
    """``value`` (settings) without values under secret-looking keys (a ``${VAR}`` reference stays; in a mapping
    of HTTP headers, ``looks_secret_header``), ``Secret`` objects and anything that is not plain JSON data, at
    any depth."""
    if isinstance(value, dict):
        out = {}
        secret = looks_secret_header if headers else looks_secret
        for k, v in value.items():
            if k in _PER_TOOL and isinstance(v, dict):  # tool names (``get_token``) keyed to numbers: no secrets
                out[k] = {**public_data(v), **{n: c for n, c in v.items() if type(c) in (int, float)}}
                continue
            if secret(str(k)) and not (isinstance(v, str) and _PLACEHOLDER.match(v)):
                continue
            v = public_data(v, headers=headers_key(k))
            if v is not _DROP:
                out[k] = v
        return out
    if isinstance(value, (list, tuple)):
        if headers:  # ``[[name, value], ...]``, which the HTTP client takes as a mapping too
            value = [x for x in value if not (isinstance(x, (list, tuple)) and len(x) == 2 and public_data(
                {str(x[0]): x[1]}, headers=True) == {})]
        return [v for v in (public_data(x) for x in value) if v is not _DROP]
    if isinstance(value, str):
        return mask_userinfo(value)
    if isinstance(value, (int, float, bool, type(None))):
        return value
    return _DROP


_DROP = object()
#: the rails' per-tool limits: a tool named like a secret is a name, and dropping its number would drop its limit
#: from settings saved and used again (a signed ReAct checkpoint's, an agent file the manager saved)
_PER_TOOL = frozenset({"tool_budget", "tool_rpm"})


def masked_arguments(value: Any, *, headers: bool = False, depth: int = 64) -> Any:
    """``value`` (a tool call's arguments, a step's ``parameters``) with the value under every secret-named key
    (``looks_secret``; in a mapping of HTTP headers, ``looks_secret_header``) as ``"***"`` at any depth, as the
    run log keeps them: what zagent's own files (trajectories) keep of a call. Deeper than ``depth``: ``"***"``."""
    if isinstance(value, dict):
        if depth <= 0:
            return MASK
        secret = looks_secret_header if headers else looks_secret
        return {k: MASK if secret(str(k)) and v not in (None, "") else
                masked_arguments(v, headers=headers_key(k), depth=depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return MASK if depth <= 0 else [masked_arguments(v, depth=depth - 1) for v in value]
    return value


def masked_json(line: bytes) -> bytes:
    """A JSON document (a trajectory or results line) with secret environment values and URL passwords masked in
    its texts (``mask_env``), as the run log masks content: zagent's own files are kept and shared. ``line``
    itself when nothing is masked."""
    import msgspec

    text = line.decode()
    if mask_env(text) == text:
        return line
    return msgspec.json.encode(_masked_texts(msgspec.json.decode(line)))


def _masked_texts(value: Any) -> Any:
    if isinstance(value, str):
        return mask_env(value)
    if isinstance(value, dict):
        return {mask_env(k): _masked_texts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked_texts(v) for v in value]
    return value


def held_settings(value: Any, *, headers: bool = False) -> Any:
    """``value`` (settings already used, e.g. an agent's ``llm_config`` once its model is made) as an object may
    keep them: each value ``public_data`` drops for its name is a ``Secret`` (a ``${VAR}`` stays), URL userinfo
    and secret query values are masked, the rest is kept; ``public_data`` of it is ``public_data`` of ``value``."""
    secret = looks_secret_header if headers else looks_secret
    if isinstance(value, dict):
        return {k: _held(v) if secret(str(k)) else held_settings(v, headers=headers_key(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [[x[0], _held(x[1])] if headers and isinstance(x, (list, tuple)) and len(x) == 2
                and secret(str(x[0])) else held_settings(x) for x in value]
    return mask_userinfo(value) if isinstance(value, str) else value


def _held(value: Any) -> Any:
    if isinstance(value, Secret) or value is None or (isinstance(value, str) and _PLACEHOLDER.match(value)):
        return value
    if isinstance(value, dict):
        return held_settings(value)
    return Secret(value)
