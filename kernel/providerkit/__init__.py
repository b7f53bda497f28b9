"""``zagent.providerkit``: what network LLM providers share; the kernel core never imports it. ``ProviderLLM``
(the kit's base class, decoding replies), the HTTP client and its options (``HttpClient``, ``HttpConfig``,
docs/http.md), streams, rate limits, wire encoding and reply helpers; ``__all__`` is the public list.
"""

from __future__ import annotations

from .._model.replies import new_call_id, unique_call_ids
from .client import HttpClient
from .codec import b64, data_url, parse_arguments, price_per_million, split_data_url
from .decoding import ProviderLLM, split_reply, think_stream
from .config import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RESPONSE_BYTES,
    ERROR_BODY_BYTES,
    HTTP_OPTIONS,
    RETRY_STATUSES,
    USER_AGENT,
    HttpConfig,
    default_http_module,
)
from .encodeonce import encoded_once, history_encoder, messages_once
from .errors import HttpErrors
from .._model.resolve import shared_stash
from .ratelimit import RateLimiter, shared_limiter
from .stream import StreamReply
from .think import ThinkStream, join_reasoning, split_think
from .toolnames import WireNames, renamed_stream
from .wire import (
    iter_ndjson,
    iter_sse,
    malformed,
    network_options,
    retry_after,
    server_message,
    stream_interrupted,
)

__all__ = [
    "ProviderLLM", "ThinkStream", "WireNames", "join_reasoning", "renamed_stream", "split_reply", "split_think",
    "think_stream",
    "DEFAULT_DEADLINE", "DEFAULT_MAX_RESPONSE_BYTES", "ERROR_BODY_BYTES", "HTTP_OPTIONS", "RETRY_STATUSES",
    "USER_AGENT", "HttpClient", "HttpConfig", "HttpErrors", "RateLimiter", "StreamReply", "default_http_module",
    "encoded_once", "history_encoder", "messages_once", "iter_ndjson", "iter_sse", "malformed", "network_options",
    "retry_after", "server_message",
    "shared_limiter", "shared_stash", "stream_interrupted",
]
__all__ += ["b64", "data_url", "new_call_id", "parse_arguments", "price_per_million", "split_data_url",
            "unique_call_ids"]
