"""Credentials follow the user (docs/security.md, 3). Inside ``spec_options`` (an untrusted spec's LLM options),
``check_destination`` refuses with a ``ConfigError``, before any request, an LLM that would send the user's key from
the environment to a ``base_url`` the user did not configure or list in ``trusted_base_urls`` (a spec's own
``api_key`` may go anywhere); ``check_options`` refuses ``CODE_OPTIONS``, ``TOOL_OPTIONS`` and a ``Host`` header;
``check_http_settings`` an ``api_key`` and headers HTTP cannot carry.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

import attrs

from .._trust.secrets import mask_userinfo
from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["CODE_OPTIONS", "TOOL_OPTIONS", "SpecOrigin", "check_destination", "check_http_settings", "check_options",
           "spec_options"]


@attrs.frozen
class SpecOrigin:
    """Where the LLM options being built come from: ``what`` (e.g. ``agent 'x'``) and the URLs the kernel trusts."""

    what: str
    trusted_urls: tuple[str, ...] = ()


_origin: "contextvars.ContextVar[Optional[SpecOrigin]]" = contextvars.ContextVar("zagent_spec_llm", default=None)


@contextlib.contextmanager
def spec_options(what: str, kernel: Optional["Kernel"] = None) -> Iterator[None]:
    """LLMs made inside the block take their options from an untrusted spec (``what`` names it),
    unless the spec is trusted (``zagent.speckit.current_trust().everything``)."""
    from ..speckit.trust import current_trust
    from ..speckit.paths import untrusted_options

    if current_trust().everything:
        with untrusted_options(trusted=True):  # its relative paths still lie next to its file
            yield
        return

    urls = (kernel.config.get("trusted_base_urls") or ()) if kernel is not None else ()
    token = _origin.set(SpecOrigin(what, tuple(_norm(u) for u in ([urls] if isinstance(urls, str) else urls))))
    try:
        with untrusted_options():  # its path options stay in its folder too (zagent.speckit.paths)
            yield
    finally:
        _origin.reset(token)


def check_destination(provider: str, base_url: Optional[str], configured: str, *, key_env: str,
                      env_key: bool, own_key: bool) -> None:
    """Refuse to build an LLM that would send the user's key (``env_key``: one is set in ``key_env``) to a
    ``base_url`` an untrusted spec chose; no-op outside ``spec_options`` or when there is nothing to leak."""
    origin = _origin.get()
    if origin is None or not base_url or own_key or not env_key:
        return
    wanted = _norm(base_url)
    if wanted == _norm(configured) or wanted in origin.trusted_urls:
        return
    raise ConfigError(
        f"{origin.what} sets llm_config base_url {base_url!r}, which is not the {provider} base URL you configured "
        f"({configured}); your key from {key_env} is sent only there, so this LLM was not made and nothing was "
        f"sent. Give the spec its own api_key, list the URL in Kernel(config={{'trusted_base_urls': [...]}}), or "
        f"trust the spec (k.agent(spec, trust=True); zagent ... --trust)")


def check_one_authorization(provider: str, base_url: str, *, own_key: bool, headers: Any, auth_header: str) -> None:
    """Refuse a ``user:password@`` in ``base_url`` (httpx's Basic ``Authorization``) next to an ``api_key`` or an
    ``Authorization`` header the caller gave: httpx would send the URL's credentials and silently drop theirs."""
    from urllib.parse import urlsplit

    if auth_header.lower() != "authorization" or urlsplit(base_url).username is None:
        return
    header = isinstance(headers, dict) and any(str(name).lower() == "authorization" for name in headers)
    given = "api_key" if own_key else "an Authorization header" if header else None
    if given is not None:
        raise ConfigError(f"{provider}: base_url {mask_userinfo(base_url)!r} carries credentials (user:password@) "
                          f"and {given} is given: httpx would send the URL's Basic credentials instead; remove the "
                          f"credentials from base_url, or leave out {given}")


#: LLM options that name code to import or objects to call: never taken from an untrusted spec.
CODE_OPTIONS = ("http_module", "client", "client_factory")


#: ``llm_config`` keys read by the kernel's network providers themselves (besides ``HttpConfig``'s fields and
#: ``CODE_OPTIONS``); other keys are the provider's request fields (docs/security.md classes each).
LLM_CONFIG_KEYS = ("model", "base_url", "api_key", "profile", "headers", "timeout", "prices")


#: request fields that give the model tools (run by the provider's servers: an MCP connector, hosted search or
#: fetch; or functions the run never offered): never taken from an untrusted spec, also inside ``extra_body``.
TOOL_OPTIONS = ("tools", "functions", "function_call", "mcp_servers", "tool_resources", "tool_config",
                "web_search_options", "plugins", "container")


def check_options(options: dict[str, Any]) -> None:
    """Refuse options an untrusted spec must not set (``http_module`` imports a module by name; ``TOOL_OPTIONS``)."""
    origin = _origin.get()
    if origin is None:
        return
    extra = options.get("extra_body")
    for key in TOOL_OPTIONS:
        if options.get(key) is not None or (isinstance(extra, dict) and extra.get(key) is not None):
            raise ConfigError(f"{origin.what} sets llm_config {key!r}, a request field that gives the model tools "
                              "the agent does not offer (run by the provider's servers, out of reach of your rails); "
                              "a spec file may not add tools this way, so it was refused. List the agent's tools "
                              "in its 'tools', pass the field to k.llm(...) in Python, or trust the spec "
                              "(k.agent(spec, trust=True); zagent ... --trust)")
    for key in CODE_OPTIONS:
        if options.get(key) is not None:
            raise ConfigError(f"{origin.what} sets llm_config {key!r}, which names code to import or run; a spec "
                              "file is data, so it was refused. Pass it to k.llm(...) in Python, or trust the spec "
                              "(k.agent(spec, trust=True); zagent ... --trust)")
    headers = options.get("headers")
    if isinstance(headers, dict) and any(str(h).strip().lower() == "host" for h in headers):
        raise ConfigError(f"{origin.what} sets a 'Host' header in llm_config headers, which would send the request "
                          "(and your key) to another site behind the same address; a spec file may not choose it. "
                          "Set it in Python (k.llm(..., headers=...)) or trust the spec (k.agent(spec, trust=True); "
                          "zagent ... --trust)")


#: a header name HTTP carries: an RFC 9110 token
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_http_settings(provider: str, options: dict[str, Any]) -> None:
    """``ConfigError`` (before any client or request) for an ``api_key`` that is not text and ``headers`` that are
    not a mapping (or ``[name, value]`` pairs, as the HTTP client takes them) of token names to text or bytes
    without CR, LF or NUL; no value is quoted."""
    from .._trust.secrets import Secret

    key = options.get("api_key")
    if key is not None and not isinstance(key, (str, Secret)):
        raise ConfigError(f"{provider}: llm_config api_key must be text, got {type(key).__name__}; quote it "
                          "(YAML reads a key of digits as a number)")
    headers = options.get("headers")
    if headers is None:
        return
    pairs = list(headers.items()) if isinstance(headers, Mapping) else headers  # a dict, httpx.Headers
    if not isinstance(pairs, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise ConfigError(f"{provider}: llm_config headers must be a mapping of header names to text (or a list of "
                          f"[name, value] pairs), got {type(headers).__name__}")
    for name, value in pairs:
        shown = name.decode("latin-1") if isinstance(name, (bytes, bytearray)) else name
        if not isinstance(shown, str) or not shown or not _TOKEN.issuperset(shown):
            raise ConfigError(f"{provider}: llm_config headers name {shown!r:.60}, which is no HTTP header name "
                              "(letters, digits and !#$%&'*+-.^_`|~ only, no space or colon); fix the name")
        text = value.reveal() if isinstance(value, Secret) else value
        if isinstance(text, (bytes, bytearray)):  # the app's own bytes (httpx sends them as they are)
            text = bytes(text).decode("latin-1")
        if not isinstance(text, str):
            raise ConfigError(f"{provider}: llm_config headers {shown!r} must be text, got {type(text).__name__}; "
                              "quote the value")
        bad = next((i for i, ch in enumerate(text) if ch in "\r\n\x00"), None)
        if bad is not None:
            raise ConfigError(f"{provider}: llm_config headers {shown!r} holds a line break or NUL at position "
                              f"{bad}, which HTTP headers cannot carry (it would end the header); remove it")


def _norm(url: Any) -> str:
    return str(url).strip().rstrip("/").lower()
