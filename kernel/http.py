"""The one place that builds HTTP clients for network providers, and what every request shares.

``HttpClient`` wraps an ``httpx.AsyncClient`` (or an httpx-API-compatible
client such as httpx2) for one provider instance:

* **one client per event loop**, created on first use and reused: an httpx
  client must not cross event loops, and zagent's sync twins run on a
  background loop (``zagent.sync``), so a script mixing ``complete()`` and
  ``await acomplete()`` gets one client on each loop, never one per call;
* explicit **timeouts** (connect/read/write/pool) and **pool limits** sized for
  many concurrent agents; default headers (user agent, JSON, the API key);
* **retries** with exponential backoff and jitter for connection errors,
  timeouts, 408, 409, 429 and 5xx, honouring ``Retry-After`` (seconds or an
  HTTP date) and ``retry-after-ms``, bounded by ``max_retries``; then a typed
  error from ``zagent.errors`` carrying provider, status and the server's
  message (401/403 name the environment variable to set);
* an optional **rate limit** (``rpm``: requests per minute) shared by every
  LLM of one kernel that talks to the same provider and base URL;
* a user's own client (``client=``, never closed by zagent) or a factory
  (``client_factory=``, called once per event loop with ``base_url``,
  ``headers``, ``timeout`` and ``limits`` built from the factory's own module,
  so ``client_factory=httpx2.AsyncClient`` just works). A user's client keeps
  its own ``base_url`` (it wins over ``base_url=``); without one, requests go
  to absolute URLs under ``base_url``.

API keys live in a ``Secret`` and go into the client's default headers only;
they never appear in reprs or errors (a server message echoing the key is
redacted). httpx is imported when the first client is built, never at import.

The helpers ``iter_sse`` and ``iter_ndjson`` parse streamed bodies.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from typing import Any, AsyncIterator, Callable, Optional

import attrs
import msgspec

from .errors import AuthenticationError, ConfigError, ProviderError, ProviderTimeout, RateLimitError
from .secrets import Secret

USER_AGENT = "zagent/0.1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})

#: Options every network provider accepts (``k.llm("openai:x", timeout=30, max_retries=2, rpm=60)``).
HTTP_OPTIONS = (
    "timeout", "connect_timeout", "read_timeout", "write_timeout", "pool_timeout",
    "max_connections", "max_keepalive_connections", "keepalive_expiry",
    "max_retries", "retry_backoff", "retry_max_backoff", "retry_max_wait", "rpm",
    "client", "client_factory", "http_module", "headers",
)


class HttpConfig(msgspec.Struct, kw_only=True, frozen=True):
    """Timeouts (seconds), pool limits and retry policy of one provider's client.

    Defaults: connect 10 s, read 120 s (time between bytes; a streamed reply
    may take longer in total), write 30 s, pool 60 s (waiting for a free
    connection when many agents share the pool); httpx's own pool defaults: up
    to 100 connections, 20 of which stay alive for 30 s idle. Measured with the
    peers' harness (500 concurrent two-call agent tasks on loopback): 100/20
    ran at 1.0-1.2x the bare-httpx loop; 100/100 at 1.6-1.8x and 200-1000
    connections at 1.2-1.7x (httpcore's pool work grows with the connections
    it holds). With slow real models and hundreds of agents in flight, raise
    ``max_connections``: each in-flight HTTP/1.1 request holds one
    connection. 2 retries, backoff 0.5 s doubling up to 8 s with jitter; a server
    asking to wait longer than ``retry_max_wait`` (60 s) is not waited for.
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

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> "HttpConfig":
        """Take the HTTP settings out of a provider's ``options`` (they are removed from it)."""
        values: dict[str, Any] = {}
        timeout = options.pop("timeout", None)
        if isinstance(timeout, (int, float)):
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
        try:
            return msgspec.convert(values, cls)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"bad HTTP option: {exc}") from None


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
    _clients: dict[Any, Any] = attrs.field(factory=dict, init=False)
    _last: tuple[Any, Any] = attrs.field(default=(None, None), init=False)
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
        import asyncio

        loop = asyncio.get_running_loop()
        last_loop, last_client = self._last
        if last_loop is loop:
            return last_client
        client = self._clients.get(loop)
        if client is None:
            client = self.user_client if self.user_client is not None else self._new_client()
            self._forget_closed_loops()
            self._clients[loop] = client
        self._last = (loop, client)
        return client

    def module(self) -> Any:
        """The httpx-compatible module whose exceptions and types apply (httpx unless told otherwise)."""
        if self._mod is None:
            import importlib

            name = self.http_module
            if name is None:
                source = self.user_client if self.user_client is not None else self.client_factory
                owner = type(source).__module__ if self.user_client is not None else getattr(source, "__module__", "")
                name = (owner or "httpx").split(".")[0]
            try:
                mod = importlib.import_module(name)
            except ImportError:
                mod = None
            if mod is None or not hasattr(mod, "TransportError"):
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

        clients, self._clients, self._last = self._clients, {}, (None, None)
        current = asyncio.get_running_loop()
        for loop, client in clients.items():
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

    async def post(self, path: str, body: bytes, *, stream: bool = False) -> Any:
        """POST ``body`` (JSON bytes) to ``path``; retry what is retryable; raise typed errors.

        Returns the response with status < 400. With ``stream=True`` its body
        is not read yet: iterate it, then ``await response.aclose()``.
        """
        client = self.client()
        headers = self.request_headers()
        if self._prefix:  # a user's client without base_url: send absolute URLs
            path = self._prefix + path
        limiter = self._limiter if self._limiter is not False else self._resolve_limiter()
        attempt = 0
        while True:
            if limiter is not None:
                await limiter.acquire()
            try:
                if stream:
                    request = client.build_request("POST", path, content=body, headers=headers)
                    response = await client.send(request, stream=True)
                else:
                    response = await client.post(path, content=body, headers=headers)
            except Exception as exc:
                error = self.transport_error(exc, attempt + 1)
                if error is None:
                    raise
                if not error.retryable or attempt >= self.config.max_retries:
                    raise error from None
                await self._sleep(self.backoff(attempt))
                attempt += 1
                continue
            if response.status_code < 400:
                return response
            if stream:
                await response.aread()
                await response.aclose()
            error = self.status_error(response, attempt + 1)
            delay = self._retry_delay(error, response, attempt)
            if delay is None:
                raise error
            await self._sleep(delay)
            attempt += 1

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
        """The ``ProviderError`` for a connection-level failure, or ``None`` if ``exc`` is not one."""
        mod = self.module()
        tries = f" ({_attempts(attempts)})" if attempts > 1 else ""
        if isinstance(exc, mod.TimeoutException):
            phase, seconds = self._timeout_of(type(exc).__name__)
            return ProviderTimeout(
                f"{self.provider} ({self.base_url}) did not answer in time: no {phase} within {seconds}{tries}; "
                "raise timeout=... (seconds) or check that the server is up",
                provider=self.provider, retryable=True)
        if isinstance(exc, getattr(mod, "UnsupportedProtocol", ())):
            return ProviderError(
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

    def status_error(self, response: Any, attempts: int = 1) -> ProviderError:
        """The typed error for an HTTP error response (its body already read)."""
        status = response.status_code
        message = self.redact(server_message(response.content))
        where = f"{self.provider} ({self.base_url})"
        retryable = status in RETRY_STATUSES or status >= 500
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
        if retryable:
            hint = f"{spent}; try again later"
        elif status == 404:
            hint = "check the model name and the base URL"
        else:
            hint = "the request was rejected; check the model options and messages"
        return ProviderError(f"{where} returned HTTP {status}: {message}; {hint}", **common)

    def _auth_hint(self, status: int, message: str, where: str) -> str:
        env = self.key_env or "the provider's API key variable"
        if not self.api_key:
            return (f"{where} needs an API key (HTTP {status}: {message}); set {env} "
                    "or pass api_key=... to k.llm(...)")
        verb = "rejected the API key" if status == 401 else "refused access with this API key"
        return f"{where} {verb} (HTTP {status}: {message}); check {env} (or api_key=...)"

    def redact(self, text: str) -> str:
        """``text`` with the API key and every secret header value (``X-Api-Key``, ``Authorization``,
        ``Cookie``..., see ``zagent.secrets.header_secrets``) replaced by ``***``, e.g. when a server echoes them."""
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
    """Parse Server-Sent Events from a line iterator: yields ``(event, data)``; ``event`` is "" when unnamed."""
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
    # an event not closed by a blank line is incomplete (the stream was cut): dropped, as the SSE spec says


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
    """The error for a reply that is not the JSON the protocol promises."""
    head = body[:200] if isinstance(body, str) else body[:200].decode("utf-8", "replace")
    return ProviderError(
        f"{http.provider} ({http.base_url}) sent a {what} that is not valid JSON for its protocol ({exc}); "
        f"it starts with {http.redact(head)!r}. Check that base_url points at a compatible server",
        provider=http.provider, status=200, body=http.redact(head))
