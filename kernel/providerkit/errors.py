"""``HttpErrors``: how ``HttpClient`` turns transport failures, HTTP statuses and limits into typed errors.

A mixin of ``HttpClient``: every message names the provider, the status and the
server's own words (secrets masked, ``zagent.agentkit.secrets.Masker``), and 401/403 say
which key to set; ``retryable`` follows docs/http.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..errors import (
    AuthenticationError,
    BadRequestError,
    DeadlineExceeded,
    NotFoundError,
    ProviderConfigError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseTooLarge,
)
from .config import RETRY_STATUSES
from .stream import _Deadline, _should_retry
from .wire import retry_after, server_message, shown

if TYPE_CHECKING:  # pragma: no cover
    from types import ModuleType

    from ..agentkit.secrets import Masker
    from .._trust.secrets import Secret
    from .config import HttpConfig


class HttpErrors:
    """The error side of ``HttpClient`` (a mixin; see the module docstring)."""

    if TYPE_CHECKING:  # what the mixin reads of ``HttpClient`` (its attrs fields and ``module``)
        provider: str
        base_url: str
        config: HttpConfig
        api_key: Optional[Secret]
        key_env: str
        headers: dict[str, Any]
        secrets: tuple[str, ...]
        _masker: Optional[Masker]

        def module(self) -> ModuleType: ...

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

    def cut_off(self, exc: BaseException, size: int, attempts: int = 1) -> Optional[ProviderError]:
        """The error for a 200 whose body broke off after ``size`` decoded bytes (``None``: not a transport error).

        Not retried, unlike a connection failure: the server had started (and maybe finished) the work, so a
        retry could run a generation twice (docs/http.md)."""
        mod = self.module()
        if not isinstance(exc, mod.TransportError) or isinstance(exc, mod.TimeoutException):
            return None
        tries = f" ({_attempts(attempts)})" if attempts > 1 else ""
        return ProviderError(
            f"{self.provider} ({self.base_url}) answered, but its reply was cut off after {size} bytes of the body "
            f"({type(exc).__name__}: {self.redact(str(exc)) or 'connection closed'}){tries}; not retried: the server "
            "had already done the work, and a retry could run it twice. Retry the call if that is fine",
            provider=self.provider, status=200, retryable=False)

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

    def redirect_error(self, response: Any) -> ProviderError:
        """The error for a 3xx: redirects are never followed (the key would go to wherever ``Location`` says)."""
        status = response.status_code
        location = self.redact(str(response.headers.get("location") or "(no Location)"))[:300]
        return ProviderError(
            f"{self.provider} ({self.base_url}) answered HTTP {status}, a redirect to {location!r}; zagent does not "
            "follow redirects (the API key would be sent along). Set base_url to the address that really serves "
            "the API if you trust it", provider=self.provider, status=status, retryable=False)

    def status_error(self, response: Any, attempts: int = 1) -> ProviderError:
        """The typed error for an HTTP error response (its body already read).

        401/403 ``AuthenticationError``, 404 ``NotFoundError``, 429
        ``RateLimitError``, 408/409/5xx a retryable ``ProviderError``, any other
        4xx ``BadRequestError``; a server's ``x-should-retry: true|false``
        header overrides whether it is retryable.
        """
        status = response.status_code
        message = server_message(response.content, redact=self.redact)
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
        ``Cookie``..., see ``zagent.providerkit.masking.header_secrets``) replaced by ``***``, e.g. when a server echoes them.
        Whole values, and runs holding 16 characters of one (cut short, upper-cased: ``mask_pieces``): a dummy key
        such as ``x`` leaves the text intact. Server text goes into one-line error messages, so its line breaks
        become spaces (a server cannot start a fake log or ``zagent:`` line), and its control and bidi characters
        are shown escaped (``wire.shown``: no terminal escape or reordered text reaches a log)."""
        from .masking import mask_pieces

        masker = self.masker()
        return shown(" ".join(mask_pieces(masker(text), masker.values).splitlines()))

    def masker(self) -> "Masker":
        """The ``zagent.agentkit.secrets.Masker`` of this client's secrets (made once)."""
        found = self._masker
        if found is None:
            from ..agentkit.secrets import Masker
            from .masking import header_secrets, url_secrets

            found = self._masker = Masker([*([self.api_key] if self.api_key else []), *header_secrets(self.headers),
                                           *url_secrets(self.base_url), *self.secrets])
        return found


def _attempts(n: int) -> str:
    return f"{n} attempt{'s' if n != 1 else ''}"
