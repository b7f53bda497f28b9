"""Data that crosses a boundary: chat messages, tool calls, completions, stream chunks, as msgspec
``Struct``s; a new field always has a default. Imports only msgspec and the standard library.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, Optional, Union

import msgspec

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One call of a tool, as asked for by a model; ``arguments``: the decoded JSON object, or the model's raw
    text unchanged when it is not one (the tool runner tells the model what was wrong)."""

    id: str
    name: str
    arguments: Union[dict[str, Any], str] = {}
    refused: Optional[str] = None
    """Why the kernel will not run this call (past ``max_tool_calls_per_reply``, a made-up required value);
    it gets a ``blocked`` result saying so. ``None``: it may run."""


PartType = Literal["text", "image", "file"]


class Part(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """An image (by ``url`` or inline ``data``) or a file (``data``) of a message; ``data`` is raw bytes (base64
    only on the wire). Build with ``Part.image``/``Part.file``, which check ``media_type`` and bound sizes."""

    type: PartType
    text: str = ""
    url: Optional[str] = None
    data: bytes = b""
    media_type: str = ""
    name: Optional[str] = None

    @classmethod
    def image(cls, source: Union[bytes, str], media_type: Optional[str] = None,
              max_bytes: Optional[int] = None) -> "Part":
        """An image: ``bytes`` (``media_type`` guessed from the magic number when absent) or an
        ``https://``/``data:`` URL."""
        return image_part(source, media_type, max_bytes)

    @classmethod
    def file(cls, data: bytes, media_type: str = "application/pdf", name: Optional[str] = None,
             max_bytes: Optional[int] = None) -> "Part":
        """A file given as bytes (a PDF by default), with an optional file name."""
        return file_part(data, media_type, name, max_bytes)

    def __repr__(self) -> str:
        return f"Part({placeholder(self)})"


def _config_error(message: str) -> Exception:
    from .errors import ConfigError

    return ConfigError(message)


#: default bound on one part's inline bytes (the APIs take about 20 MB per image, 32 MB per PDF request)
MAX_INLINE_BYTES = 20 * 1024 * 1024

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
          (b"GIF89a", "image/gif"), (b"%PDF-", "application/pdf"))


def sniff(data: bytes) -> Optional[str]:
    """The media type the bytes' magic number shows (PNG, JPEG, GIF, WebP, PDF), or ``None``."""
    for magic, media in _MAGIC:
        if data.startswith(magic):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _bounded(data: bytes, what: str, max_bytes: Optional[int]) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _config_error(f"{what} data must be bytes, got {type(data).__name__}; read the file in your code "
                          f"(or use zagent.agentkit.media.read_part(path))")
    data = bytes(data)
    limit = MAX_INLINE_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise _config_error(f"{what} is {len(data)} bytes, over the {limit}-byte limit for inline parts; "
                          f"shrink it, send it by URL, or pass max_bytes= to raise the limit")
    return data


#: the longest http(s) image URL taken (a longer one is no image's address)
MAX_IMAGE_URL = 8192


def _same_media(a: str, b: str) -> bool:
    return a.lower().replace("image/jpg", "image/jpeg") == b.lower().replace("image/jpg", "image/jpeg")


def _checked_url(url: str, media_type: Optional[str], max_bytes: Optional[int]) -> str:
    """The media type of image URL ``url`` once it holds up: an http(s) URL without spaces or control characters,
    or a data URL whose decoded bytes (bounded) are the PNG, JPEG, GIF or WebP image it names."""
    if not url.startswith("data:"):
        if len(url) > MAX_IMAGE_URL or any(c <= " " or "\x7f" <= c <= "\x9f" for c in url):
            from ._trust.secrets import mask_userinfo  # masked before cut: a cut may end inside the password

            raise _config_error(f"image URL {mask_userinfo(url)[:60]!r}... is over {MAX_IMAGE_URL} characters or holds spaces or "
                                "control characters; pass the image's address as a plain URL, or its bytes")
        return media_type or ""
    import base64
    import binascii
    import urllib.parse

    limit = MAX_INLINE_BYTES if max_bytes is None else max_bytes
    head, _, payload = url[:3 * limit + 256].partition(",")
    declared = head[5:].split(";")[0].lower()
    b64 = head.lower().endswith(";base64")
    if len(url) > 3 * limit + 256 or (b64 and len(payload) > (limit + 2) // 3 * 4):  # refused before decoding
        raise _config_error(f"data URL image is {len(url)} characters, over the {limit}-byte limit for inline "
                            "parts; shrink it, send it by http(s) URL, or pass max_bytes= to raise the limit")
    try:
        data = base64.b64decode(payload, validate=True) if b64 else urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        raise _config_error(f"data URL image ({head[:40]!r}) does not hold valid base64; pass the image's "
                            "bytes (Part.image(data)) instead") from None
    _bounded(data, "data URL image", max_bytes)
    found = sniff(data)
    if not found or not found.startswith("image/") or not _same_media(found, declared) or (
            media_type and not _same_media(media_type, found)):
        raise _config_error(f"data URL says {declared or 'no media type'} but holds {found or 'unknown bytes'}: "
                            "a data URL image must be a PNG, JPEG, GIF or WebP image of the type it names")
    return found


def image_part(source: Union[bytes, str], media_type: Optional[str] = None,
               max_bytes: Optional[int] = None) -> Part:
    """``Part.image``: bytes (bounded; the media type sniffed when not given) or an http(s)/data URL (checked by
    ``_checked_url``: a data URL is often handed on from elsewhere)."""
    if isinstance(source, str):
        if not source.startswith(("https://", "http://", "data:image/")):
            from ._trust.secrets import mask_userinfo  # masked before cut: a cut may end inside the password

            raise _config_error(f"image URL {mask_userinfo(source)[:60]!r} is not an http(s):// or data:image/ URL; "
                              f"pass the image's bytes for a local file")
        return Part(type="image", url=source, media_type=_checked_url(source, media_type, max_bytes))
    data = _bounded(source, "image", max_bytes)
    media = media_type or sniff(data)  # the app's own media_type for its bytes is taken as it is
    if not media or not media.startswith("image/"):
        raise _config_error(f"cannot tell the image's media type ({media or 'unknown bytes'}); pass "
                          f"media_type='image/png' (or jpeg, gif, webp)")
    return Part(type="image", data=data, media_type=media)


def file_part(data: bytes, media_type: str = "application/pdf", name: Optional[str] = None,
              max_bytes: Optional[int] = None) -> Part:
    """``Part.file``: a document's bytes (bounded), its media type and an optional file name."""
    return Part(type="file", data=_bounded(data, "file", max_bytes), media_type=media_type, name=name)


def parts_of(image: Any = None, file: Any = None) -> list[Part]:
    """``Message.user``'s ``image=``/``file=`` values (a ``Part``, bytes, a URL, or a list) as parts."""
    out: list[Part] = []
    for value, build in ((image, image_part), (file, file_part)):
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else (value,):
            out.append(v if isinstance(v, Part) else build(v))
    return out


def placeholder(part: Part) -> str:
    """What logs, events and trajectories keep of a part: ``<image/png 12345 bytes sha256:…>`` or its URL
    (a ``data:`` URL is summarised the same way), its password and credential parameters masked
    (``https://***@cdn/a.png?X-Amz-Signature=***``)."""
    if part.url and not part.url.startswith("data:"):
        from ._trust.secrets import mask_userinfo

        return f"<{part.type} {mask_userinfo(part.url)}>"
    data = part.data or (part.url or "").encode()
    return f"<{part.media_type or part.type} {len(data)} bytes sha256:{hashlib.sha256(data).hexdigest()[:16]}>"


class Message(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A chat message: ``system``, ``user``, ``assistant`` (maybe with tool calls) or ``tool``."""

    role: Role
    content: Optional[str] = None
    tool_calls: list[ToolCall] = []
    tool_call_id: Optional[str] = None
    name: Optional[str] = None
    metadata: dict[str, Any] = {}
    reasoning: Optional[str] = None
    """The model's reasoning (``<think>`` spans, thinking blocks), never answer text nor sent back as text."""
    reasoning_blocks: list[dict[str, Any]] = []
    """The provider's opaque reasoning items (JSON objects), sent back unchanged on the next turn."""
    parts: list[Part] = []
    """Images and files sent with ``content`` (which stays the message's text); empty for plain text."""

    @classmethod
    def system(cls, content: str) -> "Message":
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str, *, image: Any = None, file: Any = None) -> "Message":
        """A user turn; ``image=``/``file=`` take a ``Part``, bytes, a URL (images) or a list of them."""
        if image is None and file is None:
            return cls(role="user", content=content)
        return cls(role="user", content=content, parts=parts_of(image, file))

    @classmethod
    def assistant(cls, content: Optional[str] = None, tool_calls: Optional[list[ToolCall]] = None) -> "Message":
        return cls(role="assistant", content=content, tool_calls=tool_calls or [])

    @classmethod
    def tool(cls, content: str, tool_call_id: str, name: Optional[str] = None) -> "Message":
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)


class Usage(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Token counts of one call, or a running total (``+`` adds them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    estimated: bool = False  # a count the server left out or under-reported, estimated from the text

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            calls=self.calls + other.calls,
            estimated=self.estimated or other.estimated,
        )


class Completion(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A model's whole reply: the assistant message, why it stopped, and token usage."""

    message: Message
    finish_reason: Optional[str] = None
    usage: Usage = Usage()
    model: str = ""
    id: Optional[str] = None  # the provider's id of this reply, when it gives one
    refusal: Optional[str] = None
    """The model's refusal text; with structured output asked for, the kernel raises ``zagent.Refusal``."""

    @property
    def text(self) -> str:
        return self.message.content or ""

    @property
    def reasoning(self) -> str:
        """The model's reasoning (``message.reasoning``), ``""`` when it gave none; never part of ``text``."""
        return self.message.reasoning or ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


class Chunk(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One streaming event: ``text``/``reasoning`` (``text``: a delta of the answer or of the reasoning),
    ``tool_call`` (one *whole* call, assembled) or ``done`` (the last; ``completion``: the assembled reply)."""

    type: Literal["text", "reasoning", "tool_call", "done"]
    text: str = ""
    tool_call: Optional[ToolCall] = None
    completion: Optional[Completion] = None


class ToolSpec(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """What a model is told about a tool: name, description and JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = {}


class LLMRequest(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Everything one model call sends; what the LLM-call rails see and may replace."""

    model: str
    messages: list[Message]
    tools: list[ToolSpec] = []
    response_format: Optional[dict[str, Any]] = None
    options: dict[str, Any] = {}
    stream: bool = False
    output_spec: Optional[dict[str, Any]] = None
    """What the reply will be parsed as (``{"mode": "json", "fields": [...]}``), for the offline test model."""

    def __repr__(self) -> str:  # a rail's or an app's log line: a call's own ``extra_body={"api_key": ...}``
        from msgspec.structs import replace

        from ._trust.settings import masked_settings

        return msgspec.Struct.__repr__(replace(self, options=masked_settings(self.options)))


ToolState = Literal["success", "error", "timeout", "blocked"]


class ToolResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The outcome of one ``ToolCall``: ``content`` for the model, ``value`` (the tool's return value) for the
    program, ``error`` explaining an ``error``/``timeout``/``blocked`` state."""

    call_id: str
    name: str
    state: ToolState
    content: str = ""
    value: Any = None
    error: Optional[str] = None
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.state == "success"

    def to_message(self) -> Message:
        """The ``tool`` message that carries this result back to the model."""
        return Message(role="tool", content=self.content, tool_call_id=self.call_id, name=self.name)


class ModelProfile(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """What a model can do, so agents choose native or prompt-based strategies; providers report one per model,
    ``config["profiles"]`` (per model) and ``k.llm(..., profile={...})`` override fields."""

    native_tools: bool = True
    parallel_tool_calls: bool = True
    json_schema_output: bool = False
    streaming_tools: bool = True
    max_context_tokens: Optional[int] = None
    think_tags: bool = True
    """A kit provider (``zagent.providerkit.ProviderLLM``) moves inline ``<think>`` spans to ``reasoning``."""
    stream_usage: bool = True  # the server reports usage in streams when asked
    max_tokens: Optional[int] = None  # sent when a call gives no ``max_tokens``
    api: str = "chat"
    """The OpenAI protocol an ``openai:`` model speaks: ``chat`` (Chat Completions) or ``responses``."""
    tool_format: Optional[str] = None
    """The text tool-call format (a parser: ``pycall``, ``hermes``...) for an agent on ``tool_call``; ``None``:
    the agent's own."""
    text_tool_fallback: bool = True
    """Native mode: a reply with no native calls but a well-formed text call of an offered tool runs it."""
    max_tool_calls_per_reply: int = 64
    """The most tool calls one reply may run; the rest get one ``blocked`` result (rails may lower it)."""
    ground_arguments: Optional[str] = None
    """Refuse calls with made-up required values: ``"schema"``, ``"words"``, ``"off"``; ``None``: ``"schema"`` for
    calls read from text, ``"off"`` for native calls."""
    input_media: Optional[tuple[str, ...]] = None
    """Part kinds the model takes (``"image"``, ``"file"``); ``None``: what the provider's wire accepts."""


class Event(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Something observable happened (``run_start``, ``tool_end``...); a start and its end share ``span_id``,
    ``parent_id`` nests them; ``data`` never holds secrets and summarises payloads."""

    type: str
    time: float
    run_id: Optional[str] = None
    agent: Optional[str] = None
    span_id: Optional[str] = None  # the same on a ``<kind>_start`` and its ``<kind>_end`` (zagent._runs.spans)
    parent_id: Optional[str] = None  # the span open around this event (None at the top)
    data: dict[str, Any] = {}


class Field(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A named, typed input or output of an action: ``type`` is ``string``, ``integer``, ``number``, ``boolean``,
    ``object``, ``array`` (``items``: the element) or nested (``fields``); ``required`` without ``default``: must
    be present; ``examples`` are shown to models (the offline test model answers the first)."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = True
    default: Any = None
    items: Optional[Field] = None
    fields: list[Field] = []
    examples: list[Any] = []
