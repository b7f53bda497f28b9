"""``zagent.providerkit``: what network LLM providers share, kept out of the kernel core.

The kernel core never imports this package; the HTTP providers (openai,
openai-responses, anthropic, ollama), the offline ones and third-party ones do:

* ``decoding.ProviderLLM``: the base class of the kit's provider models; around the provider's ``_wire_complete``
  and ``_wire_stream`` it maps tool names its wire refuses (``tool_name_pattern``; ``toolnames.WireNames``) and
  moves inline ``<think>`` spans to reasoning (``profile.think_tags``; ``split_reply``, ``think_stream``, and
  ``think.split_think``/``ThinkStream``/``join_reasoning``). A provider subclassing ``zagent.LLM`` directly gets
  its reply taken as it is;
* ``client.HttpClient``: one HTTP client per provider instance and event loop,
  timeouts, a whole-call deadline, a size limit, a fair in-flight limit,
  retries (``errors.HttpErrors`` makes the typed errors);
* ``config.HttpConfig``: the shared HTTP options (docs/http.md) and
  ``default_http_module`` (httpx, or httpx2 when installed);
* ``stream.StreamReply``: a streamed reply read within the deadline and limit;
* ``ratelimit``: ``rpm`` shared by a kernel's models of one provider and URL;
  ``shared_stash()``: the stash of the kernel building a model (``None`` outside a build), where
  what a kernel's models share is found at build time (a model holds no kernel);
* ``wire``: SSE and NDJSON streams, ``Retry-After``, server messages,
  ``network_options``, ``stream_interrupted``, ``malformed``;
* ``b64``, ``data_url`` and ``split_data_url``: a media part's bytes for the wire; ``parse_arguments``, ``new_call_id``,
  ``unique_call_ids``: tool calls read from a reply; ``price_per_million``: a model's ``price`` setting
  (``codec``: ``b64``, ``data_url``, ``split_data_url``, ``parse_arguments``, ``price_per_million``);
* ``encodeonce.encoded_once``: a per-``ToolSpec`` cache of wire bytes; ``messages_once``: per message; ``history_encoder``: a request's messages (cached from eight on).

(One import path per name: the old ``zagent.http`` and ``zagent.encodeonce`` are gone.)
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
