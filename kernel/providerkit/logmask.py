"""Credentials out of the HTTP libraries' own log records. An app logging at INFO or DEBUG sees httpx's ``HTTP
Request: POST <url>`` line and httpcore's trace lines, which quote every response header (a server may echo the key
there). ``mask_http_logs(owner)`` filters those loggers: URL credentials, and the secrets of every live owner (its
``masker()``: a zagent client's, a user's ``client=`` too; also encoded, ``mask_pieces``), become ``***``, and
control characters are escaped. Only records a logger emits are masked.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from .._trust.secrets import mask_pieces, mask_userinfo
from .wire import shown

__all__ = ["LOGGERS", "mask_http_logs"]

#: loggers whose records quote a request's URL or a response's headers (a filter applies to its own logger only)
LOGGERS = ("httpx", "httpx2", *(f"{core}.{part}" for core in ("httpcore", "httpcore2")
                                 for part in ("connection", "http11", "http2", "proxy", "socks")),
           "hpack.hpack", "h2.connection")

_OWNERS: dict[int, "weakref.ref[Any]"] = {}
_FILTERED: set[str] = set()  # loggers given the filter


def mask_http_logs(owner: Any = None, *loggers: str) -> None:
    """Mask credentials in the records of ``LOGGERS`` (and ``loggers``) from now on; while ``owner`` lives, also
    the secrets its ``masker()`` masks. Cheap to call again."""
    if owner is not None and id(owner) not in _OWNERS:
        key = id(owner)
        _OWNERS[key] = weakref.ref(owner, lambda _ref: _OWNERS.pop(key, None))
    for name in (*LOGGERS, *loggers):
        if name in _FILTERED:
            continue
        logger = logging.getLogger(name)
        if not any(isinstance(f, MaskCredentials) for f in logger.filters):
            logger.addFilter(MaskCredentials())
        _FILTERED.add(name)


class MaskCredentials(logging.Filter):
    """A logging filter: the message and arguments of a record, with credentials masked (see the module)."""

    def filter(self, record: logging.LogRecord) -> bool:
        maskers = [m for m in (_masker(ref) for ref in tuple(_OWNERS.values())) if m is not None]
        if isinstance(record.msg, str):
            record.msg = _masked(record.msg, maskers)
        if isinstance(record.args, tuple):
            record.args = tuple(_masked_arg(a, maskers) for a in record.args)
        return True


def _masker(ref: "weakref.ref[Any]") -> Any:
    owner = ref()
    try:
        return None if owner is None else owner.masker()
    except Exception:  # a half-built owner: URL credentials are still masked
        return None


def _masked(text: str, maskers: list[Any]) -> str:
    text = shown(mask_userinfo(text))  # a server's reason phrase or header may carry terminal escapes
    for masker in maskers:
        text = masker(text)
        values = getattr(masker, "values", None)
        if values:  # a header echoing one cut short, upper-cased or encoded another way (percent, hex...)
            text = mask_pieces(text, values)
    return text


def _masked_arg(value: Any, maskers: list[Any]) -> Any:
    if isinstance(value, (int, float)) or value is None:
        return value
    text = str(value)
    masked = _masked(text, maskers)
    return value if masked == text else masked
