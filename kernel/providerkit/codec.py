"""What a provider encodes for and decodes from its wire, beside HTTP: a media part's bytes (``b64``,
``data_url``, ``split_data_url``), a tool call's arguments (``parse_arguments``) and its ``prices=`` option (``price_per_million``);
``crowded``: JSON holding too many objects, arrays or values (a memory bomb) is not decoded.
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import Any, Optional, Union

import msgspec

from ..errors import ConfigError, ProtocolError
from ..types import Part

__all__ = ["MAX_CONTAINERS", "MAX_VALUES", "b64", "crowded", "data_url", "parse_arguments", "price_per_million",
           "split_data_url"]

#: JSON objects and arrays one reply, stream event or arguments string may hold (once decoded each costs 60 to 230
#: bytes: 32 MiB of ``{},`` made 1.6 GB); brackets inside strings count too, so text only errs on the safe side
MAX_CONTAINERS = 200_000
#: values listed in JSON objects and arrays (counted by their commas) one reply, event or arguments string may hold:
#: a scalar where a reply may hold anything (``content`` parts, ``error``) is an object too (23 MiB of ``"ab",``
#: made 800 MB); commas inside strings count too, so text only errs on the safe side
MAX_VALUES = 1_000_000


def crowded(data: Union[str, bytes]) -> int:
    """How many ``{`` and ``[`` ``data`` holds when that is over ``MAX_CONTAINERS``, or how many ``,`` when that is
    over ``MAX_VALUES``; else 0 (shorter data: at once)."""
    if len(data) <= MAX_CONTAINERS:
        return 0
    n = data.count(b"{") + data.count(b"[") if isinstance(data, bytes) else data.count("{") + data.count("[")
    if n > MAX_CONTAINERS:
        return n
    if len(data) <= MAX_VALUES:
        return 0
    values = data.count(b",") if isinstance(data, bytes) else data.count(",")
    return values if values > MAX_VALUES else 0


def crowded_error(n: int, where: str) -> ProtocolError:
    """The error for a reply or event of ``n`` JSON objects and arrays, or values in them (``where`` names the
    server and a space)."""
    return ProtocolError(
        f"{where}sent JSON holding {n} objects and arrays or values listed in them; zagent decodes at most "
        f"{MAX_CONTAINERS} objects and arrays and {MAX_VALUES} values in one reply or event (each costs memory once "
        "decoded). Check the server or the proxy in front of it; a long honest answer can be streamed (each event "
        "is counted on its own)", status=200)


def b64(part: Part) -> str:
    """The part's bytes, base64."""
    return base64.b64encode(part.data).decode("ascii")


def data_url(part: Part) -> str:
    """The part's URL, or its bytes as a ``data:`` URL."""
    return part.url or f"data:{part.media_type};base64,{b64(part)}"


def split_data_url(url: str) -> tuple[str, str]:
    """A ``data:`` URL's media type (``""`` when it names none) and its payload as base64 text, whether the URL
    held base64 or percent-encoded bytes."""
    head, _, payload = url.partition(",")
    media = head[5:].split(";")[0] if head.startswith("data:") else ""
    if ";base64" in head:
        return media, payload
    return media, base64.b64encode(urllib.parse.unquote_to_bytes(payload)).decode("ascii")


def parse_arguments(text: str) -> Union[dict[str, Any], str]:
    """Tool-call arguments as a provider sent them: the decoded JSON object, ``{}`` for empty text,
    or the raw text unchanged when it is not a JSON object (the tool runner tells the model why)."""
    if not text or text.isspace():
        return {}
    if crowded(text):  # a memory bomb: left as text, which the tool runner refuses
        return text
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # nested past msgspec's limit: the tool runner says so
        return text
    return value if isinstance(value, dict) else text


def price_per_million(prices: Any, model: str) -> Optional[tuple[float, float]]:
    """Resolve a price table once per model: ``(input, output)`` USD per million tokens.

    ``prices`` is ``(in, out)``, ``{"input": .., "output": ..}``, or a table
    ``{model_or_prefix: (in, out) | {...}}`` (longest matching prefix wins).
    """
    if prices is None:
        return None
    if isinstance(prices, (tuple, list)) and len(prices) == 2:
        return (float(prices[0]), float(prices[1]))
    if isinstance(prices, dict) and "input" in prices:
        return (float(prices["input"]), float(prices.get("output", 0.0)))
    if isinstance(prices, dict):
        matches = [k for k in prices if model == k or model.startswith(k)]
        if not matches:
            return None
        return price_per_million(prices[max(matches, key=len)], model)
    raise ConfigError(f"prices must be (input, output) USD per million tokens or a table by model, got {prices!r}")
