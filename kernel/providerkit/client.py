"""``HttpClient``: one network provider instance's HTTP access (``HttpClient.build``), an httpx client per event
loop. ``post`` applies timeouts, the deadline, the size limit, the in-flight limit, ``rpm`` and retries, raising the
typed errors of docs/http.md; keys never show in reprs or errors. A user's ``client=`` keeps its own ``base_url``;
httpx is imported with the first client, never at import.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, cast

import attrs

from ..errors import ProtocolError, ProviderError
from .._model.resolve import shared_stash
from ..agentkit.secrets import Masker, looks_secret_header
from .._trust.secrets import Secret, mask_userinfo
from .config import ERROR_BODY_BYTES, HttpConfig
from .codec import crowded, crowded_error
from .decode import PIECES_FROM, body_chunks, fragmented
from .clients import LoopClients
from .entry import Claim
from .errors import HttpErrors
from .ratelimit import RateLimiter, shared_limiter
from .stream import Deadlines, StreamReply, _close_quietly, _Deadline, release
from .wire import retry_after, server_message


@attrs.define(repr=False, eq=False, kw_only=True)
class HttpClient(LoopClients, HttpErrors):
    """HTTP access for one provider instance. Create with ``HttpClient.build(...)``.

    :ivar provider: provider name, used in errors (``openai``); ``base_url``: the root requests are relative to.
    :ivar key_env: environment variable that holds the key (named in 401 errors).
    :ivar limiter: the ``rpm`` limiter (``None``: no ``rpm``); by default the one the building kernel's models of
        this provider and URL share.
    :ivar secrets: other secret values the requests carry (``extra_body``'s ``api_key``...), masked in errors too.

    Built by ``build``, it holds no secret as plain text (``attrs.asdict`` of it shows none): ``base_url`` is
    masked (``mask_userinfo``), secret-named headers and ``secrets`` are ``Secret``; the real URL is revealed
    where a client or a URL is made (once per loop or path, not per request).
    """

    provider: str
    base_url: str
    config: HttpConfig = HttpConfig()
    api_key: Optional[Secret] = None
    key_env: str = ""
    auth_header: str = "Authorization"
    auth_prefix: str = "Bearer "
    headers: dict[str, Any] = attrs.field(factory=dict)  # a secret-named header's value a ``Secret``
    user_client: Any = None
    client_factory: Optional[Callable[..., Any]] = None
    http_module: Optional[str] = None
    limiter: Optional[RateLimiter] = None
    secrets: tuple[Any, ...] = ()
    _clients: dict[Any, tuple[Any, Any, Any]] = attrs.field(factory=dict, init=False)
    _last: tuple[Any, Any, Any, Any] = attrs.field(default=(None, None, None, None), init=False)
    _request_headers: Optional[Secret] = attrs.field(default=None, init=False)  # a ``dict``, revealed per request
    _mod: Any = attrs.field(default=None, init=False)
    _prefix: Optional[Secret] = attrs.field(default=None, init=False)
    _root: Optional[Secret] = attrs.field(default=None, init=False)  # ``base_url`` without its query
    _query: Optional[Secret] = attrs.field(default=None, init=False)
    _real_url: Optional[Secret] = attrs.field(default=None, init=False)  # ``base_url`` as given, when masked
    _masker: Optional["Masker"] = attrs.field(default=None, init=False)
    _timers: dict[Any, Deadlines] = attrs.field(factory=dict, init=False)
    _urls: dict[tuple[int, str], Any] = attrs.field(factory=lambda: UrlCache(), init=False)

    def __attrs_post_init__(self) -> None:
        rpm = self.config.rpm
        if rpm and self.limiter is None:
            self.limiter = shared_limiter(shared_stash(), f"{self.provider} {self.base_url}", rpm)

    @classmethod
    def build(cls, provider: str, base_url: str, options: dict[str, Any], **fields: Any) -> "HttpClient":
        """Make the client of one provider instance, taking ``HTTP_OPTIONS`` out of ``options``."""
        client = options.pop("client", None)
        factory = options.pop("client_factory", None)
        module = options.pop("http_module", None)
        headers = {k: Secret(cast(str, v)) if isinstance(v, (str, bytes, bytearray)) and looks_secret_header(str(k))
                   else v for k, v in dict(options.pop("headers", None) or {}).items()}  # bytes revealed as given
        config = HttpConfig.from_options(options)
        own_base = str(getattr(client, "base_url", "") or "") if client is not None else ""
        root, query = (own_base, "") if own_base else _split_query(base_url)
        if query:  # ``?api-version=...``/``?key=...``: sent after each path (appended, it would swallow them)
            fields["secrets"] = (*fields.get("secrets", ()), *_secret_values(query))
        if client is not None:  # its own headers, ``params``, cookies and ``auth`` go with every request too
            from .masking import client_secrets

            fields["secrets"] = (*fields.get("secrets", ()), *client_secrets(client))
        http = cls(provider=provider, base_url=(own_base or base_url).rstrip("/"), config=config, headers=headers,
                   user_client=client, client_factory=factory, http_module=module, **fields)
        http._root, http._query = Secret.of(root.rstrip("/")), Secret.of(query)
        http._prefix = None if client is None or own_base else http._root
        http.secrets = tuple(Secret.of(v) or v for v in http.secrets)
        shown = mask_userinfo(http.base_url)
        if shown != http.base_url:  # the limiter and the masker were made with the real one (post-init, masker())
            http.masker()
            http._real_url, http.base_url = Secret(http.base_url), shown
        return http

    def real_base_url(self) -> str:
        """``base_url`` as given, credentials and all (``base_url`` shows it masked): for making clients."""
        return self._real_url.reveal() if self._real_url is not None else self.base_url

    def endpoint(self, path: str) -> str:
        """The absolute URL of ``path`` under ``base_url``, with the query ``base_url`` was given after it."""
        root = self._root.reveal() if self._root is not None else self.real_base_url()
        return f"{root}{path}?{self._query.reveal()}" if self._query is not None else root + path

    # -- sending ----------------------------------------------------------------

    async def post(self, path: str, body: bytes, *, stream: bool = False, expect: Optional[str] = None) -> Any:
        """POST ``body`` (JSON bytes) to ``path``; retry what is retryable; raise typed errors.

        Returns the response with status < 400, its body read (within ``max_response_bytes``). With
        ``stream=True``, a ``StreamReply`` whose body is not read yet: iterate ``aiter_lines()``, then ``await
        reply.aclose()``; the deadline and the size limit go on applying. ``expect`` is the media type a
        streamed reply must have (``text/event-stream``); another one raises ``ProtocolError`` naming it.
        """
        import asyncio

        client, gate, entry = self._slot()
        headers = self.request_headers()
        url = self._urls.get((id(client), path))
        if url is None:
            url = self._url(client, path)
        limiter = self.limiter
        seconds = self.config.deadline
        guard = _Deadline(seconds, self._deadlines(seconds)) if seconds else None
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
                    request = client.build_request("POST", url, content=body, headers=headers)
                    if entry is None:
                        response = await client.send(request, stream=True, follow_redirects=False)
                    else:  # into the pool once the request before has its connection (providerkit.entry)
                        await entry.acquire()
                        claim = Claim(entry, request.extensions)
                        try:
                            response = await client.send(request, stream=True, follow_redirects=False)
                        finally:
                            untraced = claim.finish()
                        if untraced:
                            self._unguard(client)
                    status = response.status_code
                    if 300 <= status < 400:  # never followed, even by an app's client that would (the key...)
                        await _close_quietly(response)
                        raise self.redirect_error(response)
                    if status < 400:
                        if not stream:  # the body read here, not in a coroutine of its own (awaited per chunk)
                            limit = self.config.max_response_bytes
                            if limit is not None and (announced := _announced_over(response, limit)) is not None:
                                await _close_quietly(response)
                                raise self.too_large(limit, f"it announced {announced} bytes")
                            parts = []
                            size = 0
                            try:
                                async for part in body_chunks(response, limit, self):
                                    size += len(part)
                                    if limit is not None and size > limit:
                                        await _close_quietly(response)
                                        raise self.too_large(limit, "")
                                    parts.append(part)
                                    if len(parts) > PIECES_FROM and (thin := fragmented(
                                            len(parts), size, f"{self.provider} ({self.base_url}) ")) is not None:
                                        await _close_quietly(response)
                                        raise thin
                            except Exception as exc:  # the server had answered: a cut body is not retried
                                cut = self.cut_off(exc, size, attempt + 1)
                                if cut is None:
                                    raise
                                raise cut from None
                            release(response)  # aiter_bytes closed it at the end of the body
                            response._content = parts[0] if len(parts) == 1 else b"".join(parts)
                            if n := crowded(response._content):  # a memory bomb once decoded: not retried
                                raise crowded_error(n, f"{self.provider} ({self.base_url}) ")
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

    def _unguard(self, client: Any) -> None:
        """Stop guarding pool entry for ``client``: a request went through it without a trace event."""
        for loop, (known, gate, _entry) in list(self._clients.items()):
            if known is client:
                self._clients[loop] = (known, gate, None)
        self._last = (None, None, None, None)

    def _url(self, client: Any, path: str) -> Any:
        """The URL ``client`` posts ``path`` to, merged with its ``base_url`` (and our prefix) once.

        httpx parses a relative URL and merges it with the client's base URL on every request (two URL
        parses, the most expensive part of building a request); an absolute ``URL`` object is used as it
        is. So the merged URL, as the client itself computes it (``build_request(...).url``), is kept per
        client and path; a client with query ``params`` of its own is left to merge them each time."""
        full = self._prefix.reveal() + path if self._prefix else path  # a user's client without base_url: absolute
        if self._query is not None:
            full = f"{full}?{self._query.reveal()}"
        if getattr(client, "params", None):
            return full
        url = client.build_request("POST", full).url
        if len(self._urls) >= 64:  # paths are few (one or two per provider); clients come and go with loops
            self._urls.clear()
        self._urls[(id(client), path)] = url
        return url

    async def _read_head(self, response: Any, limit: int) -> bytes:
        """Up to ``limit`` bytes of the body (for error messages); the connection is then closed."""
        parts = []
        size = 0
        chunks = body_chunks(response, None, self)  # lazy: stops inflating at ``limit``
        try:
            async for part in chunks:
                parts.append(part)
                size += len(part)
                if size >= limit:
                    break
        except ProtocolError:  # a compressed error body cut or padded: what inflated tells the status's reason
            pass
        finally:
            await chunks.aclose()
            await response.aclose()
            release(response)
        return b"".join(parts)[:limit]

    async def _check_media_type(self, response: Any, expect: str) -> None:
        ctype = response.headers.get("content-type", "")
        media = ctype.split(";", 1)[0].strip().lower()
        if not media or media == expect:
            return
        head = await self._read_head(response, 2048)
        excerpt = server_message(head, 200, redact=self.redact)
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
        return min(c.retry_max_backoff, c.retry_backoff * (2.0 ** attempt)) * (0.5 + random.random() / 2)

    async def _sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)

    def __repr__(self) -> str:
        return f"<HttpClient {self.provider} {mask_userinfo(self.base_url)} clients={len(self._clients)}>"


class UrlCache(dict):  # type: ignore[type-arg]
    """``HttpClient``'s URLs per client and path (their query may hold a ``?key=``): a ``dict`` that lists no
    value to ``items()``/``values()`` or its repr, so ``attrs.asdict`` of the client shows none; ``get`` is a
    ``dict``'s."""

    __slots__ = ()

    def items(self) -> Any:
        return iter(())

    def values(self) -> Any:
        return iter(())

    def __repr__(self) -> str:
        return f"<{len(self)} URL(s)>"


def _announced_over(response: Any, limit: int) -> Optional[int]:
    """The ``content-length`` a response announces when it is over ``limit`` (``None``: within it, or unknown)."""
    length = response.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        return int(length)
    return None


def _split_query(url: str) -> tuple[str, str]:
    """``url`` without its query (and fragment), and the query."""
    root, _, rest = url.partition("?")
    return root, rest.partition("#")[0]


def _secret_values(query: str) -> list[str]:
    """The values of the query's parameters named like a secret (``key``, ``api_key``, ``token``...)."""
    from urllib.parse import parse_qsl

    from .._trust.secrets import looks_secret_param

    return [v for k, v in parse_qsl(query) if v and looks_secret_param(k)]
