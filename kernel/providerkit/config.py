"""HTTP options every network provider shares (``HttpConfig``), their defaults, and which HTTP module to use.

``HttpConfig.from_options`` validates ``timeout`` (or ``ZAGENT_TIMEOUT``), ``deadline``, ``max_response_bytes``,
``max_retries``, pool and in-flight limits, ``rpm`` and the rest (docs/http.md lists them); ``default_http_module``
picks ``ZAGENT_HTTP_MODULE``, else httpx2 when installed, else httpx.
"""

from __future__ import annotations

from typing import Any, Optional

import msgspec

from ..errors import (
    ConfigError,
)

USER_AGENT = "zagent/0.1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})

#: Options every network provider accepts (``k.llm("openai:x", timeout=30, max_retries=2, rpm=60)``).
HTTP_OPTIONS = (
    "timeout", "connect_timeout", "read_timeout", "write_timeout", "pool_timeout",
    "max_connections", "max_keepalive_connections", "keepalive_expiry",
    "max_retries", "retry_backoff", "retry_max_backoff", "retry_max_wait", "rpm",
    "client", "client_factory", "http_module", "headers",
    "deadline", "max_response_bytes", "max_in_flight", "retry_read_timeouts",
)
#: Default whole-call deadline in seconds (raised to the read timeout when that is longer).
DEFAULT_DEADLINE = 600.0
#: Default limit on one reply's size, a streamed one counted whole (32 MiB).
DEFAULT_MAX_RESPONSE_BYTES = 32 * 2**20
ERROR_BODY_BYTES = 64 * 1024  # what is read of an error reply (the rest is dropped)


class HttpConfig(msgspec.Struct, kw_only=True, frozen=True):
    """Timeouts (seconds), pool limits and retry policy of one provider's client (docs/http.md).

    Defaults: connect 10 s, read 120 s (between bytes), write 30 s, pool 60 s; 100 connections, 20 kept alive
    30 s idle; 2 retries, backoff 0.5 s doubling up to 8 s with jitter; a server asking to wait longer than
    ``retry_max_wait`` (60 s) is not waited for. ``deadline`` 600 s (or the read timeout when longer) and
    ``max_response_bytes`` 32 MiB (``None`` turns either off); ``max_in_flight`` (requests open per client and
    event loop, the rest wait in FIFO order) is ``max_connections`` (``0``: off); ``retry_read_timeouts`` off.
    ``timeout`` (seconds) comes from ``ZAGENT_TIMEOUT`` when not given.
    """

    connect_timeout: Optional[float] = 10.0
    read_timeout: Optional[float] = 120.0
    write_timeout: Optional[float] = 30.0
    pool_timeout: Optional[float] = 60.0
    max_connections: Optional[int] = 100
    max_keepalive_connections: Optional[int] = 20
    keepalive_expiry: Optional[float] = 30.0
    max_retries: int = 2
    retry_backoff: float = 0.5
    retry_max_backoff: float = 8.0
    retry_max_wait: float = 60.0
    rpm: Optional[float] = None
    deadline: Optional[float] = DEFAULT_DEADLINE
    max_response_bytes: Optional[int] = DEFAULT_MAX_RESPONSE_BYTES
    max_in_flight: Optional[int] = None
    retry_read_timeouts: bool = False

    @property
    def in_flight(self) -> int:
        """The in-flight limit in force (0: none)."""
        if self.max_in_flight is not None:
            return max(0, self.max_in_flight)
        return self.max_connections or 0

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "HttpConfig":
        """Take the HTTP settings out of a provider's ``options`` (they are removed from it)."""
        values: dict[str, Any] = {}
        timeout = options.pop("timeout", None)
        if timeout is None:
            timeout = _env_timeout()
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            values.update(connect_timeout=min(float(timeout), 10.0), read_timeout=float(timeout),
                          write_timeout=float(timeout), pool_timeout=float(timeout))
        elif isinstance(timeout, dict):
            values.update({f"{k}_timeout": v for k, v in timeout.items()})
        elif all(hasattr(timeout, a) for a in ("connect", "read", "write", "pool")):  # an httpx.Timeout
            values.update({f"{a}_timeout": getattr(timeout, a) for a in ("connect", "read", "write", "pool")})
        elif timeout is not None:
            raise ConfigError(
                f"timeout must be seconds, a dict like {{'connect': 5, 'read': 60}} or an httpx.Timeout, got {timeout!r}")
        for name in cls.__struct_fields__:
            if name in options:
                values[name] = options.pop(name)
        if "deadline" not in values:
            read = values.get("read_timeout", cls.read_timeout)
            values["deadline"] = max(DEFAULT_DEADLINE, read) if isinstance(read, (int, float)) else DEFAULT_DEADLINE
        try:
            config = msgspec.convert(values, cls)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"bad HTTP option: {exc}") from None
        for name in ("deadline", "max_response_bytes"):
            value = getattr(config, name)
            if value is not None and value <= 0:
                raise ConfigError(f"{name} must be a positive number (or None for no limit), got {value!r}")
        return config


def _env_timeout() -> Optional[float]:
    """``ZAGENT_TIMEOUT`` (seconds) when set; a clear error when it is not a positive number."""
    import os

    raw = os.environ.get("ZAGENT_TIMEOUT", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"ZAGENT_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def default_http_module() -> tuple[str, str]:
    """The HTTP module to use without ``http_module=``: ``ZAGENT_HTTP_MODULE``, else httpx2 if installed, else httpx.

    Returns the name and what chose it (``"ZAGENT_HTTP_MODULE"``, or ``""`` for the automatic choice).
    """
    import os

    name = os.environ.get("ZAGENT_HTTP_MODULE", "").strip()
    if name:
        return name, "ZAGENT_HTTP_MODULE"
    import importlib.util

    return ("httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"), ""
