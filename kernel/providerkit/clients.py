"""``LoopClients``, a mixin of ``HttpClient``: one httpx client per event loop, made on first use from the options
(or the user's ``client=``, never closed here, or ``client_factory=``), with its in-flight gate and pool-entry lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from ..errors import ProviderConfigError
from .._trust.secrets import Secret
from .config import USER_AGENT, default_http_module
from .entry import guard_for
from .logmask import mask_http_logs
from .stream import Deadlines

if TYPE_CHECKING:  # pragma: no cover
    from .config import HttpConfig


class LoopClients:
    """The clients side of ``HttpClient`` (a mixin; see the module docstring)."""

    if TYPE_CHECKING:  # what the mixin reads of ``HttpClient`` (its attrs fields)
        provider: str
        base_url: str
        config: HttpConfig
        api_key: Optional[Secret]
        auth_header: str
        auth_prefix: str
        headers: dict[str, Any]  # a secret-named header's value a ``Secret``
        user_client: Any
        client_factory: Optional[Callable[..., Any]]
        http_module: Optional[str]
        _clients: dict[Any, tuple[Any, Any, Any]]
        _last: tuple[Any, Any, Any, Any]
        _request_headers: Optional[Secret]
        _mod: Any
        _timers: dict[Any, Deadlines]
        _urls: dict[tuple[int, str], Any]
        secrets: tuple[Any, ...]
        _masker: Any

        def real_base_url(self) -> str: ...

    def client(self) -> Any:
        """The client for the running event loop (created on first use)."""
        return self._slot()[0]

    def _slot(self) -> tuple[Any, Any, Any]:
        """The running loop's client, in-flight gate (an ``asyncio.Semaphore`` or ``None``) and pool entry
        lock (``providerkit.entry``; ``None`` for a client it does not apply to)."""
        import asyncio

        loop = asyncio.get_running_loop()
        last = self._last
        if last[0] is loop:
            return last[1], last[2], last[3]
        entry = self._clients.get(loop)
        if entry is None:
            mask_http_logs(self, getattr(self.module(), "__name__", "httpx"))  # a user's ``client=`` logs too
            client = self.user_client if self.user_client is not None else self._new_client()
            size = self.config.in_flight
            entry = (client, asyncio.Semaphore(size) if size else None, guard_for(self.module(), client))
            self._forget_closed_loops()
            self._clients[loop] = entry
        self._last = (loop, *entry)
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
                import httpx as mod
            self._mod = mod
        return self._mod

    def _new_client(self) -> Any:
        mod = self.module()
        c = self.config
        kwargs = dict(
            base_url=self.real_base_url().partition("?")[0],  # its query follows each path (``HttpClient._url``)
            headers=self._default_headers(),
            timeout=mod.Timeout(connect=c.connect_timeout, read=c.read_timeout,
                                write=c.write_timeout, pool=c.pool_timeout),
            limits=mod.Limits(max_connections=c.max_connections,
                              max_keepalive_connections=c.max_keepalive_connections,
                              keepalive_expiry=c.keepalive_expiry),
        )
        if self.client_factory is None and _plain_http(mod, self.base_url):
            kwargs["verify"] = _no_tls()
        factory = self.client_factory or mod.AsyncClient
        try:
            client = factory(**kwargs)
        except UnicodeEncodeError:
            pass
        else:
            if self.client_factory is not None:  # the params, cookies and headers it added go with every request
                from .masking import client_secrets

                self.secrets, self._masker = (*self.secrets, *map(Secret, client_secrets(client))), None
            return client
        raise self._refused_header(kwargs["headers"])  # outside ``except``: no context holding the value

    def _default_headers(self) -> dict[str, str]:
        headers = {"user-agent": USER_AGENT, "content-type": "application/json", "accept": "application/json"}
        headers.update({k: v.reveal() if isinstance(v, Secret) else v for k, v in self.headers.items()})
        if self.api_key:
            headers[self.auth_header] = self.auth_prefix + self.api_key.reveal()
        return headers

    def _refused_header(self, headers: dict[str, str]) -> ProviderConfigError:
        """The error for headers the HTTP module refused to encode (its ``UnicodeEncodeError`` would carry the
        whole value, a key too): which header, which character, never the value."""
        for name, value in headers.items():
            bad = next((i for i, ch in enumerate(str(value)) if ord(ch) > 127), None)
            if bad is not None:
                what = "the API key" if name == self.auth_header and self.api_key else f"header {name!r}"
                return ProviderConfigError(
                    f"{self.provider}: {what} holds U+{ord(str(value)[bad]):04X}, a character HTTP headers cannot "
                    f"carry, at position {bad}; copy the value again without it", provider=self.provider)
        return ProviderConfigError(f"{self.provider}: a header value cannot be encoded", provider=self.provider)

    def request_headers(self) -> Optional[dict[str, str]]:
        """Per-request headers: only needed for a user's own client, which lacks our defaults."""
        if self.user_client is None:
            return None
        held = self._request_headers
        if held is None:
            headers = self._default_headers()
            if not all(str(v).isascii() for v in headers.values()):  # as httpx encodes them, naming no value
                raise self._refused_header(headers)
            held = self._request_headers = Secret(headers)  # type: ignore[arg-type]  # shown by nothing
        return held.reveal()  # type: ignore[return-value]

    def _forget_closed_loops(self) -> None:
        for loop in [lp for lp in self._clients if lp.is_closed()]:
            del self._clients[loop]
            self._urls.clear()  # an id of a closed loop's client may be reused
        for loop in [lp for lp in self._timers if lp.is_closed()]:
            del self._timers[loop]

    def _deadlines(self, seconds: float) -> Deadlines:
        """The running loop's ``Deadlines`` of this client (one timer for all its pending calls)."""
        import asyncio

        loop = asyncio.get_running_loop()
        timers = self._timers.get(loop)
        if timers is None or timers.seconds != seconds:
            timers = self._timers[loop] = Deadlines(loop, seconds)
        return timers

    async def aclose(self) -> None:
        """Close the clients this object made (a user's ``client=`` is left open: it is theirs)."""
        import asyncio

        clients, self._clients, self._last = self._clients, {}, (None, None, None, None)
        self._urls.clear()
        current = asyncio.get_running_loop()
        for loop, (client, _gate, _entry) in clients.items():
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


def _plain_http(mod: Any, base_url: str) -> bool:
    """True when a client of ``mod`` for ``base_url`` can never speak TLS: an ``http://`` URL, httpx or httpx2
    (both take an ``ssl.SSLContext`` as ``verify``), no proxy.

    Every request goes to a path under ``base_url`` and redirects are not followed, so only a proxy from the
    environment (``HTTP_PROXY``, ``ALL_PROXY``..., possibly an ``https://`` one) could bring TLS in."""
    if getattr(mod, "__name__", "") not in ("httpx", "httpx2") or not base_url.lower().startswith("http://"):
        return False
    from urllib.request import getproxies  # httpx imports urllib.request: nothing new is loaded

    return not getproxies()


def _no_tls() -> Any:
    """An SSL context that trusts no certificate: any TLS handshake fails (closed), and nothing is loaded.

    httpx otherwise loads the whole CA bundle for every client it builds (about 20 ms, 90 ms for the first;
    httpx2 about 70 ms), which a client of a local ``http://`` model never uses."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # hostname checks and CERT_REQUIRED on, no CA at all
