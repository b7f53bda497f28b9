"""The one place that builds HTTP clients for network providers, and what every request shares.

``HttpClient`` wraps an ``httpx.AsyncClient`` (or an httpx-API-compatible
client such as httpx2) for one provider instance:

* **one client per event loop**, created on first use and reused: an httpx
  client must not cross event loops, and zagent's sync twins run on a
  background loop (``zagent.sync``), so a script mixing ``complete()`` and
  ``await acomplete()`` gets one client on each loop, never one per call;
* explicit **timeouts** (connect/read/write/pool; ``timeout=`` or the
  ``ZAGENT_TIMEOUT`` environment variable) and **pool limits** sized for many
  concurrent agents; default headers (user agent, JSON, the API key);
* a whole-call **deadline** (connect, every read, the stream, retries and their
  waits: a server that trickles a byte at a time or streams forever is cut
  there) and a **size limit** on every reply, streamed ones counted whole
  (``max_response_bytes``): ``DeadlineExceeded`` and ``ResponseTooLarge``
  name the limit and how to raise it;
* a fair **in-flight limit** per client and event loop (``max_in_flight``,
  by default the pool's ``max_connections``): calls past it wait their turn in
  FIFO order instead of crowding httpx's pool, which slows down sharply when
  thousands of requests wait inside it;
* **retries** with exponential backoff and jitter for connection errors,
  connect/pool timeouts, 408, 409, 429 and 5xx, honouring ``Retry-After``
  (seconds or an HTTP date), ``retry-after-ms`` and ``x-should-retry``, bounded
  by ``max_retries`` and the deadline. A *read* timeout is not retried (unless
  ``retry_read_timeouts=True``): the server may still be generating the
  abandoned reply, and a retry would stack a second generation on it. Then a
  typed error from ``zagent.errors`` carrying provider, status and the
  server's message (401/403 name the environment variable to set); see
  docs/errors.md for which errors are retryable;
* an optional **rate limit** (``rpm``: requests per minute) shared by every
  LLM of one kernel that talks to the same provider and base URL;
* a user's own client (``client=``, never closed by zagent) or a factory
  (``client_factory=``, called once per event loop with ``base_url``,
  ``headers``, ``timeout`` and ``limits`` built from the factory's own module,
  so ``client_factory=httpx2.AsyncClient`` just works). A user's client keeps
  its own ``base_url`` (it wins over ``base_url=``); without one, requests go
  to absolute URLs under ``base_url``.

API keys live in a ``Secret`` and go into the client's default headers only;
they never appear in reprs or errors: a server message echoing the key, or
the value of a header whose name says it is a secret (``X-Api-Key``,
``Authorization``, ``Cookie``...), is masked (``zagent.secrets.Masker``:
whole values only, so a dummy key such as ``x`` leaves messages intact).
httpx is imported when the first client is built, never at import; with
``pip install 'zagent[httpx2]'`` the client is httpx2 (``ZAGENT_HTTP_MODULE=httpx``
switches back).

The helpers ``iter_sse`` and ``iter_ndjson`` parse streamed bodies.
"""

from __future__ import annotations

import re
import time
import weakref
from collections import deque
from typing import Any, AsyncIterator, Callable, Optional

import attrs
import msgspec

from .errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    DeadlineExceeded,
    NotFoundError,
    ProtocolError,
    ProviderConfigError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseTooLarge,
)
from .secrets import Secret

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
    """Timeouts (seconds), pool limits and retry policy of one provider's client.

    Defaults: connect 10 s, read 120 s (time between bytes; a streamed reply
    may take longer in total), write 30 s, pool 60 s (waiting for a free
    connection inside httpx's pool; calls past ``max_in_flight`` wait before
    it, within the deadline); httpx's own pool defaults: up
    to 100 connections, 20 of which stay alive for 30 s idle. Measured with the
    peers' harness (500 concurrent two-call agent tasks on loopback): 100/20
    ran at 1.0-1.2x the bare-httpx loop; 100/100 at 1.6-1.8x and 200-1000
    connections at 1.2-1.7x (httpcore's pool work grows with the connections
    it holds). With slow real models and hundreds of agents in flight, raise
    ``max_connections``: each in-flight HTTP/1.1 request holds one
    connection. 2 retries, backoff 0.5 s doubling up to 8 s with jitter; a server
    asking to wait longer than ``retry_max_wait`` (60 s) is not waited for.

    ``deadline`` bounds one call as a whole (600 s, or the read timeout when
    longer; ``None`` turns it off); ``max_response_bytes`` bounds one reply
    (32 MiB; ``None`` turns it off). ``max_in_flight`` caps the requests one
    client has open per event loop (default: ``max_connections``; ``0`` turns
    it off); the rest wait in FIFO order. ``retry_read_timeouts`` retries a
    read timeout too (off: the server may still be generating). ``timeout``
    (seconds) comes from ``ZAGENT_TIMEOUT`` when not given.
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


@attrs.define(repr=False, eq=False, kw_only=True)
class HttpClient:
    """HTTP access for one provider instance. Create with ``HttpClient.build(...)``.

    :ivar provider: provider name, used in errors (``openai``).
    :ivar base_url: root URL requests are relative to.
    :ivar key_env: environment variable that holds the key (named in 401 errors).
    :ivar owner: the LLM using this client; its kernel scopes the shared rate limiter.
    """

    provider: str
    base_url: str
    config: HttpConfig = HttpConfig()
    api_key: Optional[Secret] = None
    key_env: str = ""
    auth_header: str = "Authorization"
    auth_prefix: str = "Bearer "
    headers: dict[str, str] = attrs.field(factory=dict)
    user_client: Any = None
    client_factory: Optional[Callable[..., Any]] = None
    http_module: Optional[str] = None
    owner: Any = None
    _clients: dict[Any, tuple[Any, Any]] = attrs.field(factory=dict, init=False)
    _last: tuple[Any, Any, Any] = attrs.field(default=(None, None, None), init=False)
    _request_headers: Optional[dict[str, str]] = attrs.field(default=None, init=False)
    _limiter: Any = attrs.field(default=False, init=False)
    _mod: Any = attrs.field(default=None, init=False)
    _prefix: str = attrs.field(default="", init=False)
    _masker: Any = attrs.field(default=None, init=False)

    @classmethod
    def build(cls, provider: str, base_url: str, options: dict[str, Any], **fields: Any) -> "HttpClient":
        """Make the client of one provider instance, taking ``HTTP_OPTIONS`` out of ``options``."""
        client = options.pop("client", None)
        factory = options.pop("client_factory", None)
        module = options.pop("http_module", None)
        headers = dict(options.pop("headers", None) or {})
        config = HttpConfig.from_options(options)
        own_base = str(getattr(client, "base_url", "") or "") if client is not None else ""
        http = cls(provider=provider, base_url=(own_base or base_url).rstrip("/"), config=config, headers=headers,
                   user_client=client, client_factory=factory, http_module=module, **fields)
        http._prefix = "" if client is None or own_base else http.base_url
        return http

    # -- clients ----------------------------------------------------------------

    def client(self) -> Any:
        """The client for the running event loop (created on first use)."""
        return self._slot()[0]

    def _slot(self) -> tuple[Any, Any]:
        """The client and the in-flight gate (an ``asyncio.Semaphore`` or ``None``) of the running loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        last = self._last
        if last[0] is loop:
            return last[1], last[2]
        entry = self._clients.get(loop)
        if entry is None:
            client = self.user_client if self.user_client is not None else self._new_client()
            size = self.config.in_flight
            entry = (client, asyncio.Semaphore(size) if size else None)
            self._forget_closed_loops()
            self._clients[loop] = entry
        self._last = (loop, entry[0], entry[1])
        return entry

    def module(self) -> Any:
        """The httpx-compatible module whose exceptions and types apply.

        ``http_module=`` if given; else that of a user's ``client=`` or
        ``client_factory=``; else ``ZAGENT_HTTP_MODULE``; else httpx2 when it is
        installed (``pip install 'zagent[httpx2]'``), else httpx.
        """
        if self._mod is None:
            import importlib

            name = self.http_module
            chosen_by = "http_module"
            if name is None and (self.user_client is not None or self.client_factory is not None):
                source = self.user_client if self.user_client is not None else self.client_factory
                owner = type(source).__module__ if self.user_client is not None else getattr(source, "__module__", "")
                name = (owner or "httpx").split(".")[0]
                chosen_by = ""
            if name is None:
                name, chosen_by = default_http_module()
            try:
                mod = importlib.import_module(name)
            except ImportError:
                mod = None
            if mod is None or not hasattr(mod, "TransportError"):
                if chosen_by:
                    raise ProviderConfigError(
                        f"{chosen_by}={name!r} is not an installed httpx-compatible module; install it "
                        "(pip install 'zagent[httpx2]' for httpx2) or use 'httpx'", provider=self.provider)
                import httpx as mod  # type: ignore[no-redef]
            self._mod = mod
        return self._mod

    def _new_client(self) -> Any:
        mod = self.module()
        c = self.config
        kwargs = dict(
            base_url=self.base_url,
            headers=self._default_headers(),
            timeout=mod.Timeout(connect=c.connect_timeout, read=c.read_timeout,
                                write=c.write_timeout, pool=c.pool_timeout),
            limits=mod.Limits(max_connections=c.max_connections,
                              max_keepalive_connections=c.max_keepalive_connections,
                              keepalive_expiry=c.keepalive_expiry),
        )
        factory = self.client_factory or mod.AsyncClient
        return factory(**kwargs)

    def _default_headers(self) -> dict[str, str]:
        headers = {"user-agent": USER_AGENT, "content-type": "application/json", "accept": "application/json"}
        headers.update({k: v.reveal() if isinstance(v, Secret) else v for k, v in self.headers.items()})
        if self.api_key:
            headers[self.auth_header] = self.auth_prefix + self.api_key.reveal()
        return headers

    def request_headers(self) -> Optional[dict[str, str]]:
        """Per-request headers: only needed for a user's own client, which lacks our defaults."""
        if self.user_client is None:
            return None
        if self._request_headers is None:
            self._request_headers = self._default_headers()
        return self._request_headers

    def _forget_closed_loops(self) -> None:
        for loop in [lp for lp in self._clients if lp.is_closed()]:
            del self._clients[loop]

    async def aclose(self) -> None:
        """Close the clients this object made (a user's ``client=`` is left open: it is theirs)."""
        import asyncio

        clients, self._clients, self._last = self._clients, {}, (None, None, None)
        current = asyncio.get_running_loop()
        for loop, (client, _gate) in clients.items():
            if client is self.user_client:
                continue
            if loop is current:
                await client.aclose()
            elif loop.is_running():
                future = asyncio.run_coroutine_threadsafe(client.aclose(), loop)
                try:
                    await asyncio.wait_for(asyncio.wrap_future(future), 5)
                except Exception:  # a busy or dying loop: its connections go with it
                    pass

    # -- sending ----------------------------------------------------------------

    async def post(self, path: str, body: bytes, *, stream: bool = False, expect: Optional[str] = None) -> Any:
        """POST ``body`` (JSON bytes) to ``path``; retry what is retryable; raise typed errors.

        Returns the response with status < 400, its body read (within
        ``max_response_bytes``). With ``stream=True`` it returns a
        ``StreamReply`` whose body is not read yet: iterate ``aiter_lines()``,
        then ``await reply.aclose()``; the deadline and the size limit go on
        applying while it is read. ``expect`` is the media type a streamed
        reply must have (``text/event-stream``); another one (an HTML page, a
        JSON body) raises ``ProtocolError`` naming it.
        """
        import asyncio

        client, gate = self._slot()
        headers = self.request_headers()
        if self._prefix:  # a user's client without base_url: send absolute URLs
            path = self._prefix + path
        limiter = self._limiter if self._limiter is not False else self._resolve_limiter()
        seconds = self.config.deadline
        guard = _Deadline(seconds) if seconds else None
        handed_over = False
        attempt = 0
        try:
            while True:
                if limiter is not None:
                    await limiter.acquire()
                if gate is not None:
                    await gate.acquire()
                held = gate is not None
                response = None
                try:
                    request = client.build_request("POST", path, content=body, headers=headers)
                    response = await client.send(request, stream=True)
                    status = response.status_code
                    if status < 400:
                        if not stream:
                            response._content = await self._read_body(response)
                            return response
                        if expect:
                            await self._check_media_type(response, expect)
                        reply = StreamReply(self, response, gate if held else None, guard)
                        held, handed_over = False, True
                        return reply
                    response._content = await self._read_head(response, ERROR_BODY_BYTES)
                    error: ProviderError = self.status_error(response, attempt + 1)
                    delay = self._retry_delay(error, response, attempt)
                except asyncio.CancelledError:  # the deadline or the caller: give the connection back first
                    if response is not None:
                        await _close_quietly(response)
                    raise
                except Exception as exc:
                    if response is not None:
                        await _close_quietly(response)
                    transport = self.transport_error(exc, attempt + 1)
                    if transport is None:
                        raise
                    error = transport
                    delay = self.backoff(attempt) if error.retryable and attempt < self.config.max_retries else None
                finally:
                    if held:
                        gate.release()
                if delay is None or (guard is not None and delay >= guard.remaining()):
                    raise error from None
                await self._sleep(delay)
                attempt += 1
        except asyncio.CancelledError:
            if guard is not None and guard.expired_here():
                raise self.deadline_error(guard, attempt + 1) from None
            raise
        finally:
            if guard is not None and not handed_over:
                guard.cancel()

    async def _read_body(self, response: Any) -> bytes:
        """The whole body of ``response``, within ``max_response_bytes`` (else ``ResponseTooLarge``)."""
        limit = self.config.max_response_bytes
        if limit is not None:
            length = response.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > limit:
                await _close_quietly(response)
                raise self.too_large(limit, f"it announced {int(length)} bytes")
        parts = []
        size = 0
        async for part in response.aiter_bytes():
            size += len(part)
            if limit is not None and size > limit:
                await _close_quietly(response)
                raise self.too_large(limit, "")
            parts.append(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def _read_head(self, response: Any, limit: int) -> bytes:
        """Up to ``limit`` bytes of the body (for error messages); the connection is then closed."""
        parts = []
        size = 0
        chunks = response.aiter_bytes()
        try:
            async for part in chunks:
                parts.append(part)
                size += len(part)
                if size >= limit:
                    break
        finally:
            await chunks.aclose()
            await response.aclose()
        return b"".join(parts)[:limit]

    async def _check_media_type(self, response: Any, expect: str) -> None:
        ctype = response.headers.get("content-type", "")
        media = ctype.split(";", 1)[0].strip().lower()
        if not media or media == expect:
            return
        head = await self._read_head(response, 2048)
        excerpt = self.redact(server_message(head, 200))
        raise ProtocolError(
            f"{self.provider} ({self.base_url}) answered a streaming request with content type {media!r}, "
            f"not {expect!r}: {excerpt!r}. Check that base_url points at a compatible API "
            "(a web page or a proxy's login form looks like this)",
            provider=self.provider, status=response.status_code, body=excerpt)

    def _retry_delay(self, error: ProviderError, response: Any, attempt: int) -> Optional[float]:
        if not error.retryable or attempt >= self.config.max_retries:
            return None
        hinted = retry_after(response.headers)
        if hinted is not None:
            return hinted if hinted <= self.config.retry_max_wait else None
        return self.backoff(attempt)

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: ``retry_backoff * 2**attempt`` capped, times 0.5-1.0."""
        import random

        c = self.config
        return min(c.retry_max_backoff, c.retry_backoff * (2 ** attempt)) * (0.5 + random.random() / 2)

    async def _sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)

    def _resolve_limiter(self) -> Optional["RateLimiter"]:
        rpm = self.config.rpm
        kernel = getattr(self.owner, "kernel", None)
        self._limiter = shared_limiter(kernel, f"{self.provider} {self.base_url}", rpm) if rpm else None
        return self._limiter

    # -- errors -----------------------------------------------------------------

    def transport_error(self, exc: BaseException, attempts: int = 1) -> Optional[ProviderError]:
        """The ``ProviderError`` for a connection-level failure, or ``None`` if ``exc`` is not one.

        Connection failures and connect/write/pool timeouts are retryable; a read
        timeout is not unless ``retry_read_timeouts`` (the server may still be
        generating the reply, and a retry would start a second generation).
        """
        mod = self.module()
        tries = f" ({_attempts(attempts)})" if attempts > 1 else ""
        if isinstance(exc, mod.TimeoutException):
            kind = type(exc).__name__
            phase, seconds = self._timeout_of(kind)
            reading = phase == "reply data"
            retryable = self.config.retry_read_timeouts or not reading
            after = ("; not retried: the server may still be generating the abandoned reply "
                     "(retry_read_timeouts=True retries it)") if reading and not retryable else ""
            return ProviderTimeout(
                f"{self.provider} ({self.base_url}) did not answer in time: no {phase} within {seconds}{tries}{after}; "
                "raise timeout=... (seconds, or ZAGENT_TIMEOUT) or check that the server is up",
                provider=self.provider, retryable=retryable)
        if isinstance(exc, getattr(mod, "UnsupportedProtocol", ())):
            return ProviderConfigError(
                f"{self.provider}: cannot use base URL {self.base_url!r} ({exc}); give an http:// or https:// URL",
                provider=self.provider)
        if isinstance(exc, mod.TransportError):
            return ProviderError(
                f"could not reach {self.provider} at {self.base_url}: {type(exc).__name__}: "
                f"{self.redact(str(exc)) or 'connection failed'}{tries}; check the base URL and that the server is running",
                provider=self.provider, retryable=True)
        return None

    def _timeout_of(self, kind: str) -> tuple[str, str]:
        c = self.config
        phase, value = {
            "ConnectTimeout": ("connection", c.connect_timeout), "WriteTimeout": ("request upload", c.write_timeout),
            "PoolTimeout": ("free connection in the pool", c.pool_timeout),
        }.get(kind, ("reply data", c.read_timeout))
        return phase, f"{value:g} s" if value is not None else "the timeout"

    def deadline_error(self, guard: "_Deadline", attempts: int = 1) -> DeadlineExceeded:
        """The error for a call that ran past its whole-call deadline."""
        tries = f", {_attempts(attempts)}" if attempts > 1 else ""
        return DeadlineExceeded(
            f"{self.provider} ({self.base_url}): the call did not finish within deadline={guard.seconds:g} s "
            f"(connection, reply and stream together{tries}); raise deadline=... (seconds; None for no limit) "
            "on the model if such long calls are expected, or check the server",
            provider=self.provider, deadline=guard.seconds)

    def too_large(self, limit: int, detail: str) -> ResponseTooLarge:
        """The error for a reply longer than ``max_response_bytes``."""
        detail = f" ({detail})" if detail else ""
        return ResponseTooLarge(
            f"{self.provider} ({self.base_url}) sent a reply longer than max_response_bytes={limit}{detail}; "
            "a streamed reply counts whole. Raise max_response_bytes=... (bytes; None for no limit) on the model "
            "if such replies are expected", provider=self.provider, status=200, limit=limit)

    def status_error(self, response: Any, attempts: int = 1) -> ProviderError:
        """The typed error for an HTTP error response (its body already read).

        401/403 ``AuthenticationError``, 404 ``NotFoundError``, 429
        ``RateLimitError``, 408/409/5xx a retryable ``ProviderError``, any other
        4xx ``BadRequestError``; a server's ``x-should-retry: true|false``
        header overrides whether it is retryable.
        """
        status = response.status_code
        message = self.redact(server_message(response.content))
        where = f"{self.provider} ({self.base_url})"
        retryable = status in RETRY_STATUSES or status >= 500
        hinted = _should_retry(response.headers)
        if hinted is not None:
            retryable = hinted
        common = dict(provider=self.provider, status=status, body=message, retryable=retryable)
        if status in (401, 403):
            return AuthenticationError(self._auth_hint(status, message, where), **common)
        spent = f"gave up after {_attempts(attempts)}"
        if status == 429:
            wait = retry_after(response.headers)
            if wait is not None and wait > self.config.retry_max_wait:
                spent = f"the server asks to wait {wait:g} s, longer than retry_max_wait={self.config.retry_max_wait:g} s"
            return RateLimitError(
                f"{where} rate-limited the request (HTTP 429: {message}); {spent}. Slow down "
                "(rpm=... on the model), raise max_retries, or check your plan's limits",
                retry_after=wait, **common)
        if status == 404:
            return NotFoundError(f"{where} returned HTTP 404: {message}; check the model name and the base URL",
                                 **common)
        if status in RETRY_STATUSES or status >= 500:
            return ProviderError(f"{where} returned HTTP {status}: {message}; {spent}; try again later", **common)
        return BadRequestError(f"{where} returned HTTP {status}: {message}; "
                               "the request was rejected; check the model options and messages", **common)

    def _auth_hint(self, status: int, message: str, where: str) -> str:
        env = self.key_env or "the provider's API key variable"
        if not self.api_key:
            return (f"{where} needs an API key (HTTP {status}: {message}); set {env} "
                    "or pass api_key=... to k.llm(...)")
        verb = "rejected the API key" if status == 401 else "refused access with this API key"
        return f"{where} {verb} (HTTP {status}: {message}); check {env} (or api_key=...)"

    def redact(self, text: str) -> str:
        """``text`` with the API key and every secret header value (``X-Api-Key``, ``Authorization``,
        ``Cookie``..., see ``zagent.secrets.header_secrets``) replaced by ``***``, e.g. when a server echoes them.
        Whole values only: a dummy key such as ``x`` leaves the text intact."""
        return self.masker()(text)

    def masker(self) -> Any:
        """The ``zagent.secrets.Masker`` of this client's secrets (made once)."""
        found = self._masker
        if found is None:
            from .secrets import Masker, header_secrets

            found = self._masker = Masker([self.api_key, *header_secrets(self.headers)] if self.api_key
                                          else header_secrets(self.headers))
        return found

    def __repr__(self) -> str:
        return f"<HttpClient {self.provider} {self.base_url} clients={len(self._clients)}>"


class StreamReply:
    """A streamed reply being read: its lines, within the call's deadline and ``max_response_bytes``.

    Made by ``HttpClient.post(..., stream=True)``. It holds the call's slot of the
    in-flight limit until ``aclose()``. Other attributes come from the
    underlying response (``status_code``, ``headers``...).
    """

    __slots__ = ("_response", "_http", "_gate", "_guard", "_size", "_closed")

    def __init__(self, http: HttpClient, response: Any, gate: Any, guard: Optional["_Deadline"]):
        self._response = response
        self._http = http
        self._gate = gate
        self._guard = guard
        self._size = 0
        self._closed = False
        if guard is not None:
            guard.armed = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._response, name)

    @property
    def bytes_read(self) -> int:
        return self._size

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's (decoded) bytes as they come; ``DeadlineExceeded``/``ResponseTooLarge`` past a limit."""
        import asyncio

        http, guard = self._http, self._guard
        limit = http.config.max_response_bytes
        chunks = self._response.aiter_bytes()
        try:
            while True:
                if guard is not None:
                    if guard.fired:
                        raise http.deadline_error(guard)
                    guard.arm()
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if guard is not None and guard.expired_here():
                        raise http.deadline_error(guard) from None
                    raise
                finally:
                    if guard is not None:
                        guard.armed = False
                self._size += len(chunk)
                if limit is not None and self._size > limit:
                    raise http.too_large(limit, f"streamed, {self._size} bytes so far")
                yield chunk
        finally:
            await chunks.aclose()

    async def aiter_lines(self) -> AsyncIterator[str]:
        """The body's lines (UTF-8; ends ``\\n``, ``\\r\\n`` or ``\\r`` removed); an unterminated last line too."""
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        skip_lf = False
        async for chunk in self.aiter_bytes():
            text = decoder.decode(chunk)
            if not text:
                continue
            if skip_lf and not pending and text[0] == "\n":
                text = text[1:]
            skip_lf = text.endswith("\r")
            text = pending + text if pending else text
            lines = _NEWLINES.split(text)
            pending = lines.pop()
            for line in lines:
                yield line
        tail = pending + decoder.decode(b"", True)
        if tail:
            yield tail  # the unterminated last line

    async def aclose(self) -> None:
        """Close the response and give back its in-flight slot (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._response.aclose()
        finally:
            if self._gate is not None:
                self._gate.release()
            if self._guard is not None:
                self._guard.cancel()

    def __repr__(self) -> str:
        return f"<StreamReply {getattr(self._response, 'status_code', '?')} read={self._size}>"


_NEWLINES = re.compile(r"\r\n|\r|\n")


class _Deadline:
    """The whole-call deadline of one request: a timer that cancels the waiting task when armed.

    ``armed`` is true while the call awaits the network (send, retry waits, each
    stream read); between stream reads (the caller's own code runs) the timer
    only marks the deadline passed, and the next read raises. Like
    ``asyncio.timeout``, it tells its own cancellation from another one.
    """

    __slots__ = ("seconds", "task", "handle", "armed", "fired", "_cancelled", "_base", "_loop")

    def __init__(self, seconds: float):
        import asyncio

        self._loop = asyncio.get_running_loop()
        self.seconds = seconds
        self.fired = False
        self._cancelled = False
        self.task: Any = None
        self._base = 0
        self.arm()
        self.handle = self._loop.call_later(seconds, self._fire)

    def arm(self) -> None:
        import asyncio

        task = self.task = asyncio.current_task()
        cancelling = getattr(task, "cancelling", None)
        self._base = cancelling() if cancelling is not None else 0
        self.armed = True

    def _fire(self) -> None:
        self.fired = True
        if self.armed and self.task is not None and not self.task.done():
            self._cancelled = True
            self.task.cancel()

    def remaining(self) -> float:
        return self.handle.when() - self._loop.time()

    def expired_here(self) -> bool:
        """Whether the ``CancelledError`` being handled is this deadline's own (then it is absorbed)."""
        if not self._cancelled:
            return False
        self._cancelled = False
        uncancel = getattr(self.task, "uncancel", None)
        return uncancel is None or uncancel() <= self._base

    def cancel(self) -> None:
        self.handle.cancel()


async def _close_quietly(response: Any) -> None:
    try:
        await response.aclose()
    except Exception:  # closing a broken connection: nothing more to learn
        pass


def _should_retry(headers: Any) -> Optional[bool]:
    """A server's ``x-should-retry: true|false`` (the OpenAI and Anthropic APIs send it), else ``None``."""
    value = headers.get("x-should-retry")
    if value is None:
        return None
    value = value.strip().lower()
    return True if value == "true" else False if value == "false" else None


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


def _attempts(n: int) -> str:
    return f"{n} attempt{'s' if n != 1 else ''}"


# -- rate limiting ----------------------------------------------------------------


class RateLimiter:
    """At most ``rpm`` requests start in any 60-second window (a sliding log of reserved start times).

    Safe across event loops and tasks: a slot is reserved synchronously, then
    the caller sleeps until it comes.
    """

    def __init__(self, rpm: float):
        if rpm <= 0:
            raise ConfigError(f"rpm must be a positive number of requests per minute, got {rpm!r}")
        self.rpm = rpm
        self.window = 60.0
        self._size = max(1, int(rpm))
        self._starts: deque[float] = deque()

    def reserve(self) -> float:
        """Reserve the next start time; return seconds to wait for it."""
        now = time.monotonic()
        starts = self._starts
        slot = now if len(starts) < self._size else max(now, starts[0] + self.window * self._size / self.rpm)
        starts.append(slot)
        if len(starts) > self._size:
            starts.popleft()
        return slot - now

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            import asyncio

            await asyncio.sleep(wait)

    def __repr__(self) -> str:
        return f"<RateLimiter {self.rpm:g}/min>"


_limiters: "weakref.WeakKeyDictionary[Any, dict[str, RateLimiter]]" = weakref.WeakKeyDictionary()


def shared_limiter(kernel: Any, key: str, rpm: float) -> RateLimiter:
    """The limiter of ``key`` in ``kernel`` (all agents of a kernel share it); a private one without a kernel."""
    if kernel is None:
        return RateLimiter(rpm)
    per_kernel = _limiters.setdefault(kernel, {})
    limiter = per_kernel.get(key)
    if limiter is None or limiter.rpm != rpm:
        limiter = per_kernel[key] = RateLimiter(rpm)
    return limiter


# -- helpers ------------------------------------------------------------------------


def retry_after(headers: Any) -> Optional[float]:
    """Seconds the server asks to wait: ``retry-after-ms``, ``Retry-After`` seconds or HTTP date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def server_message(body: bytes, limit: int = 500) -> str:
    """The human part of an error body: ``error.message``, ``error``, ``message`` or ``detail``; else the text."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        data = None
    for candidate in _message_candidates(data):
        if isinstance(candidate, str) and candidate:
            return candidate[:limit]
    text = body.decode("utf-8", "replace").strip()
    return (text[:limit] or "(empty body)")


def _message_candidates(data: Any) -> list[Any]:
    if not isinstance(data, dict):
        return []
    err = data.get("error")
    out = [err.get("message") if isinstance(err, dict) else err, data.get("message"), data.get("detail")]
    return out


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """Parse Server-Sent Events from a line iterator: yields ``(event, data)``; ``event`` is "" when unnamed.

    A last event not followed by a blank line is still dispatched when the body
    ends cleanly (a cut connection raises from ``lines`` before that).
    """
    event = ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith("data:"):
            data.append(line[6:] if line[5:6] == " " else line[5:])
        elif line.startswith("event:"):
            event = line[6:].strip()
    if data:  # the body ended cleanly without the closing blank line: dispatched, as the official SDKs do
        yield event, "\n".join(data)


async def iter_ndjson(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The non-empty lines of a newline-delimited JSON stream."""
    async for line in lines:
        if line.strip():
            yield line


# -- a base for network providers ------------------------------------------------------


def _llm_base() -> Any:
    from .llm import LLM

    return LLM


def network_options(
    provider: str, options: dict[str, Any], *, key_env: str, base_env: str, default_base_url: str,
    auth_header: str = "Authorization", auth_prefix: str = "Bearer ",
) -> tuple["HttpClient", dict[str, Any]]:
    """Split a network provider's options: an ``HttpClient`` (key, base URL, HTTP settings) and the rest.

    ``api_key`` comes from the options or ``key_env``; ``base_url`` from the
    options, ``base_env`` or ``default_base_url``. What is left (request
    fields such as ``temperature``) is returned for the provider to send.
    """
    import os

    from .credentials import check_destination, check_options

    options = dict(options)
    check_options(options)
    own_key = options.pop("api_key", None)
    key = Secret.of(own_key or os.environ.get(key_env) or None)
    configured = os.environ.get(base_env) or default_base_url
    base_url = options.pop("base_url", None) or configured
    # A key from the environment goes only where the user configured (not to a spec's base_url).
    check_destination(provider, base_url, configured, key_env=key_env, env_key=key is not None, own_key=bool(own_key))
    http = HttpClient.build(provider, base_url, options, api_key=key, key_env=key_env,
                            auth_header=auth_header, auth_prefix=auth_prefix)
    return http, options


def stream_interrupted(http: HttpClient, exc: BaseException, partial: str, calls: Any = ()) -> Any:
    """The ``StreamInterrupted`` for a stream cut by ``exc`` (a transport error or a premature end)."""
    from .errors import StreamInterrupted

    reason = f"{type(exc).__name__}: {http.redact(str(exc))}" if str(exc) else type(exc).__name__
    return StreamInterrupted(
        f"the {http.provider} stream ({http.base_url}) was cut after {len(partial)} characters ({reason}); "
        "the text received so far is on the error's .partial; retry the call",
        provider=http.provider, partial=partial, partial_tool_calls=list(calls), retryable=True)


def malformed(http: HttpClient, what: str, exc: BaseException, body: bytes | str) -> ProviderError:
    """The ``ProtocolError`` (not retryable) for a reply that is not the JSON the protocol promises."""
    head = body[:200] if isinstance(body, str) else body[:200].decode("utf-8", "replace")
    return ProtocolError(
        f"{http.provider} ({http.base_url}) sent a {what} that is not valid JSON for its protocol ({exc}); "
        f"it starts with {http.redact(head)!r}. Check that base_url points at a compatible server",
        provider=http.provider, status=200, body=http.redact(head))
