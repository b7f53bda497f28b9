"""``get_json``: one bounded GET on a provider's HTTP client, for what is not a model call (listing models).

No retries and a short timeout: it answers "is the server there, and what does it
serve" (``zagent models``). Errors are the provider kit's typed ``ProviderError``s.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import ProtocolError, ProviderError
from .._trust.secrets import mask_userinfo
from .codec import crowded, crowded_error
from .config import ERROR_BODY_BYTES
from .decode import body_chunks
from .stream import release

LIMIT = 4 << 20
"""Bytes a listing may take (a server with thousands of models stays well below)."""


async def get_json(http: Any, path: str, *, timeout: float = 5.0) -> Any:
    """GET ``base_url + path`` with the client's own headers (key included) and decode the JSON reply.

    Bounded like a model call: the whole call within ``timeout`` seconds (a server trickling bytes does not hold
    it), the body decoded within ``LIMIT`` bytes as it is read (``body_chunks``: an endless or compressed body
    is cut, never held whole), a redirect refused (``HttpClient.redirect_error``)."""
    import asyncio

    try:
        return await asyncio.wait_for(_get_json(http, path, timeout), timeout)
    except ProviderError as exc:  # a server's header quoted as it was (a Content-Encoding naming the key)
        from .masking import masked_error

        raise masked_error(exc, http.masker())
    except asyncio.TimeoutError:
        raise ProviderError(f"{http.provider} ({http.base_url}{path}) did not finish answering a model listing "
                            f"within {timeout:g} s; check that the server is up and is the API it should be",
                            provider=http.provider, retryable=True) from None


async def _get_json(http: Any, path: str, timeout: float) -> Any:
    client = http.client()
    try:
        request = client.build_request("GET", http.endpoint(path), headers=http.request_headers(), timeout=timeout)
        response = await client.send(request, stream=True, follow_redirects=False)
    except Exception as exc:
        error = http.transport_error(exc, 1)
        if error is None:
            raise
        raise error from None
    try:
        if 300 <= response.status_code < 400:
            raise http.redirect_error(response)
        if response.status_code >= 400:
            response._content = await http._read_head(response, ERROR_BODY_BYTES)
            raise http.status_error(response, 1)
        parts, size = [], 0
        try:
            async for part in body_chunks(response, LIMIT, http):
                size += len(part)
                if size > LIMIT:
                    raise http.too_large(LIMIT, "a model listing")
                parts.append(part)
        except ProviderError:
            raise
        except Exception as exc:
            error = http.cut_off(exc, size, 1)
            if error is None:
                raise
            raise error from None
    finally:
        await response.aclose()
        release(response)  # a reply smuggled after this one never becomes the next call's (``release``)
    body = b"".join(parts)
    if n := crowded(body):
        raise crowded_error(n, f"{http.provider} ({http.base_url}{path}) ")
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: [[[[... past the decoder's limit
        raise ProtocolError(f"{http.provider} ({http.base_url}{path}) did not answer with JSON: {exc}",
                            provider=http.provider, status=response.status_code) from None


def names(data: Any, list_key: str, name_key: str, http: Any = None) -> list[str]:
    """``data[list_key][*][name_key]`` as strings (what a listing reply holds), sorted, with ``http``'s secrets
    masked (``HttpClient.redact``: a server may echo the key it was sent); a ``ProviderError`` for another shape."""
    redact = http.redact if http is not None else mask_userinfo
    items = data.get(list_key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        where = f"{http.provider} ({http.base_url})" if http is not None else "the server"
        raise ProviderError(f"{where} answered a model listing without '{list_key}': {redact(str(data))[:200]}",
                            provider=http.provider if http is not None else "?", status=200)
    return sorted(redact(str(i[name_key])) for i in items if isinstance(i, dict) and i.get(name_key) is not None)
