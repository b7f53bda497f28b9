"""What the model reads of a tool's return value (``to_text``) and of an exception (``describe``, URL userinfo
masked), lone surrogates replaced."""

from __future__ import annotations

import re
import sys
from typing import Any

import msgspec

from .._trust.secrets import Masker, Secret, looks_secret, mask_env

#: Nesting deeper than this (lists in lists...) is refused (the interpreter's recursion limit bounds it too).
MAX_DEPTH = 200
#: Characters of a tool's result (or error message) the model reads; the rest is cut, saying how much (as MCP results).
MAX_RESULT_CHARS = 200_000
_SURROGATES = re.compile("[\ud800-\udfff]")


class ResultNotText(ValueError):
    """A tool's return value that cannot be turned into text for the model."""


def clean(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (ASCII text is returned at once)."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub("\ufffd", text)


def to_text(value: Any) -> str:
    """Text as is, bytes decoded, anything else as JSON (else its ``repr``), cut to ``MAX_RESULT_CHARS``;
    ``ResultNotText`` saying why not."""
    text = _to_text(value)
    return text if len(text) <= MAX_RESULT_CHARS else cut(text)


def cut(text: str, dropped: int = 0) -> str:
    """``text`` cut to at most ``MAX_RESULT_CHARS`` characters in all, a note saying how many were cut (so a
    result cut once, e.g. by a tool source, is never cut again); ``dropped``: characters already left out."""
    if len(text) <= MAX_RESULT_CHARS and not dropped:
        return text
    keep = MAX_RESULT_CHARS - 160  # room for the note
    return (text[:keep] + f"\n[... {len(text) - keep + dropped} more characters of the tool's result cut: the model reads "
            f"at most {MAX_RESULT_CHARS}; return less, e.g. a summary or a page of it]")


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value if value.isascii() else clean(str(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return msgspec.json.encode(value, enc_hook=repr).decode()
    except UnicodeEncodeError:  # a lone surrogate somewhere inside
        try:
            return msgspec.json.encode(_cleaned(value, MAX_DEPTH), enc_hook=repr).decode()
        except Exception:
            pass
    except Exception:  # JSON cannot hold it, an enc_hook repr failed, or it contains itself: repr says it
        pass
    try:
        return clean(repr(value))
    except RecursionError:
        raise ResultNotText(f"a {type(value).__name__} nested too deeply to render (more than "
                            f"{min(MAX_DEPTH, sys.getrecursionlimit())} levels)") from None
    except Exception as exc:
        raise ResultNotText(f"a {type(value).__name__} whose repr() fails ({describe(exc)})") from None


def _cleaned(value: Any, depth: int) -> Any:
    """``value`` with its strings cleaned (dicts, lists and tuples followed ``depth`` levels)."""
    if depth <= 0:
        raise ResultNotText(f"nested more than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {_cleaned(k, depth - 1) if isinstance(k, str) else k: _cleaned(v, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v, depth - 1) for v in value]
    return value


def describe(exc: BaseException, arguments: Any = None) -> str:
    """``TypeName: message`` of ``exc``, surrogates cleaned, URL userinfo and secret environment values masked
    (``postgres://***@db``, ``auth *** refused``: a failing client quoting its URL or key), and the values of the
    secret-named ``arguments`` of the call (``api_token``: a rail may have put them there from a vault); a
    message that itself fails to render is skipped."""
    dropped = 0
    try:
        message = str(exc)
        if len(message) > MAX_RESULT_CHARS + 1024:  # masking is linear but not cheap: only what can be shown
            dropped, message = len(message) - MAX_RESULT_CHARS - 1024, message[:MAX_RESULT_CHARS + 1024]
        message = mask_env(message)
        if isinstance(arguments, dict) and arguments:
            message = Masker(_secret_arguments(arguments))(message)
    except Exception:
        message = "(its message cannot be rendered)"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return clean(text if len(text) <= MAX_RESULT_CHARS and not dropped else cut(text, dropped))


def _secret_arguments(value: Any, under: bool = False, depth: int = 20) -> list[Any]:
    """The values of a call's arguments that are secret: a ``Secret``, or text under a secret-named key at any
    depth (``auth={"token": ...}``)."""
    if isinstance(value, Secret):
        return [value]
    if isinstance(value, str):
        return [value] if under else []
    if depth <= 0:
        return []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _secret_arguments(v, under or looks_secret(str(k)), depth - 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _secret_arguments(v, under, depth - 1)]
    return []
