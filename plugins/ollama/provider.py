"""The Ollama provider over its native ``/api/chat``: JSON replies and NDJSON streams.

Ollama sends tool calls whole (arguments already an object) and without ids,
so ids are generated. A thinking model's ``message.thinking`` becomes
``reasoning`` (streamed as ``reasoning`` chunks). Token usage comes from ``prompt_eval_count`` and
``eval_count`` of the final (``done: true``) object.
"""

from __future__ import annotations

import os
from typing import Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent.providerkit import encoded_once
from zagent.providerkit.masking import sealed_fields
from zagent.errors import ProviderConfigError, ProviderError
from zagent.providerkit import HttpClient, iter_ndjson, malformed, network_options, stream_interrupted
from zagent.providerkit import new_call_id, parse_arguments, price_per_million, ProviderLLM
from zagent.types import Chunk, Completion, LLMRequest, Message, ModelProfile, ToolCall, ToolSpec, Usage

DEFAULT_HOST = "http://127.0.0.1:11434"
TOP_LEVEL = frozenset({"format", "keep_alive", "think", "options"})


class OllamaFunction(msgspec.Struct):
    name: str = ""
    arguments: Any = None


class OllamaToolCall(msgspec.Struct):
    function: OllamaFunction
    id: str = ""


class OllamaMessage(msgspec.Struct):
    role: str = "assistant"
    content: str = ""
    tool_calls: Optional[list[OllamaToolCall]] = None
    thinking: str = ""  # reasoning of thinking models (``think: true``, or by default for some)


class ChatReply(msgspec.Struct):
    model: str = ""
    message: Optional[OllamaMessage] = None
    done: bool = False
    done_reason: Optional[str] = None
    prompt_eval_count: int = 0
    eval_count: int = 0
    error: Optional[str] = None


_decoder = msgspec.json.Decoder(ChatReply)
_encoder = msgspec.json.Encoder()


def host_url(value: Optional[str]) -> str:
    """``OLLAMA_HOST`` as a URL, as Ollama's own client reads it: ``host[:port]`` gets http:// and
    port 11434 when missing; a URL with a scheme keeps its scheme's default port; 0.0.0.0 means 127.0.0.1."""
    if not value:
        return DEFAULT_HOST
    explicit = "://" in value
    url = value if explicit else f"http://{value}"
    scheme, rest = url.split("://", 1)
    host, _, path = rest.partition("/")
    if not explicit and ":" not in host.rsplit("]", 1)[-1]:
        host += ":11434"
    host = host.replace("0.0.0.0", "127.0.0.1")
    return f"{scheme}://{host}" + (f"/{path}" if path else "")


@attrs.define(repr=False, eq=False, kw_only=True)
class OllamaLLM(ProviderLLM):
    """A model served by Ollama (``POST /api/chat``)."""

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"  # what Ollama's templates handle reliably; other names are mapped (zagent.providerkit.toolnames)
    input_media = ("image",)

    http: HttpClient
    fields: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def build(cls, model: str, **options: Any) -> "OllamaLLM":
        http, rest = network_options("ollama", options, key_env="OLLAMA_API_KEY", base_env="OLLAMA_BASE_URL",
                                     default_base_url=host_url(os.environ.get("OLLAMA_HOST")))
        price = price_per_million(rest.pop("prices", None), model)
        fields = split_fields({**(rest.pop("extra_body", None) or {}), **rest})
        return cls(provider="ollama", model=model, http=http, fields=sealed_fields(fields), price=price)

    def call_settings(self) -> dict[str, Any]:
        """The sampling settings given at build time, which Ollama takes inside ``options``; ``num_predict``
        is its ``max_tokens``."""
        sampling = dict(self.fields.get("options") or {})
        if "max_tokens" not in sampling and isinstance(sampling.get("num_predict"), int):
            sampling["max_tokens"] = sampling["num_predict"]
        return sampling

    def default_profile(self) -> ModelProfile:
        return ModelProfile(native_tools=True, parallel_tool_calls=True, json_schema_output=True, streaming_tools=True)

    def body(self, request: LLMRequest, stream: bool) -> bytes:
        payload: dict[str, Any] = {"model": request.model or self.model,
                                   "messages": [_message(m) for m in request.messages], "stream": stream}
        fields = self.fields
        if request.options:
            opts = dict(request.options)
            fields = merge_fields(fields, split_fields({**(opts.pop("extra_body", None) or {}), **opts}))
        payload.update(fields)
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
        if request.response_format:
            payload["format"] = _format(request.response_format)
        return _encoder.encode(payload)

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        response = await self.http.post("/api/chat", self.body(request, False))
        reply = self._decode(response.content)
        message = _to_message(reply.message)
        return Completion(message=message, finish_reason=_finish(reply, message),
                          usage=Usage(input_tokens=reply.prompt_eval_count, output_tokens=reply.eval_count, calls=1),
                          model=reply.model or self.model)

    def _decode(self, data: Any) -> ChatReply:
        try:
            reply = _decoder.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "reply", exc, data) from None
        if reply.error:
            message = self.http.redact(reply.error)
            raise ProviderError(f"ollama ({self.http.base_url}) reported an error: {message}",
                                provider="ollama", status=200, body=message)
        return reply

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        response = await self.http.post("/api/chat", self.body(request, True), stream=True)
        parts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        ids: set[str] = set()  # the calls' ids (a list scan per call was quadratic in a reply of 100,000 calls)
        final: Optional[ChatReply] = None
        mod = self.http.module()
        try:
            async for line in iter_ndjson(response.aiter_lines()):
                if final is not None:  # read on to the body's end: the connection is then reused
                    continue
                reply = self._decode(line)
                if reply.message is not None:
                    if reply.message.thinking:
                        thoughts.append(reply.message.thinking)
                        yield Chunk(type="reasoning", text=reply.message.thinking)
                    if reply.message.content:
                        parts.append(reply.message.content)
                        yield Chunk(type="text", text=reply.message.content)
                    for call in _to_message(reply.message).tool_calls:
                        if call.id in ids:
                            call = msgspec.structs.replace(call, id=new_call_id())
                        ids.add(call.id)
                        calls.append(call)
                        yield Chunk(type="tool_call", tool_call=call)
                if reply.done:
                    final = reply
                    response.ended()  # read on a little only (``StreamReply.ended``)
        except (mod.TransportError, mod.TimeoutException) as exc:
            raise stream_interrupted(self.http, exc, "".join(parts), calls) from None
        finally:
            await response.aclose()
        if final is None:
            raise stream_interrupted(self.http, EOFError("the stream ended before its done object"), "".join(parts), calls)
        message = Message(role="assistant", content="".join(parts) or None, tool_calls=calls,
                          reasoning="".join(thoughts) or None)
        yield Chunk(type="done", completion=Completion(
            message=message, finish_reason=_finish(final, message),
            usage=Usage(input_tokens=final.prompt_eval_count, output_tokens=final.eval_count, calls=1),
            model=final.model or self.model))

    async def aclose(self) -> None:
        await self.http.aclose()

    async def alist_models(self) -> list[str]:
        """The models pulled on the server (``GET /api/tags``), for ``zagent models``."""
        from zagent.providerkit.listing import get_json, names

        return names(await get_json(self.http, "/api/tags"), "models", "name", self.http)

    def __repr__(self) -> str:
        from zagent import mask_userinfo

        return f"<OllamaLLM {self.name} {mask_userinfo(self.http.base_url)}>"


def split_fields(options: dict[str, Any]) -> dict[str, Any]:
    """Top-level request fields stay; everything else (temperature, num_ctx...) goes into ``options``."""
    out = {k: v for k, v in options.items() if k in TOP_LEVEL}
    sampling = {k: v for k, v in options.items() if k not in TOP_LEVEL}
    if sampling:
        out["options"] = {**(out.get("options") or {}), **sampling}
    return out


def merge_fields(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **extra}
    if "options" in base and "options" in extra:
        merged["options"] = {**base["options"], **extra["options"]}
    return merged


def _message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content or ""}
    if m.parts:
        out["images"] = _images(m)
    if m.tool_calls:
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, dict)
                                           else parse_arguments(c.arguments)}} for c in m.tool_calls]
    if m.role == "tool" and m.name:
        out["tool_name"] = m.name
    return out


def _images(m: Message) -> list[str]:
    """Ollama's ``images``: each image part's bytes as base64 (Ollama fetches no URLs)."""
    from zagent.providerkit import b64, split_data_url

    out = []
    for p in m.parts:
        if p.type == "image" and p.data:
            out.append(b64(p))
        elif p.type == "image" and p.url and p.url.startswith("data:"):
            out.append(split_data_url(p.url)[1])
        elif p.type != "text":
            raise ProviderConfigError(f"ollama takes images as bytes only, not a {p.type} part "
                                      f"({p.url or p.media_type}); read the image's bytes and pass those",
                                      provider="ollama")
    return out


def _tool_dict(spec: ToolSpec) -> dict[str, Any]:
    """Ollama's ``{"type": "function", "function": ...}`` of ``spec``, encoded once per spec object."""
    return {"type": "function", "function": {
        "name": spec.name, "description": spec.description,
        "parameters": spec.parameters or {"type": "object", "properties": {}}}}


_tool = encoded_once(_tool_dict)


def _format(fmt: dict[str, Any]) -> Any:
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or "json"
    if fmt.get("type") == "json_object":
        return "json"
    return fmt


def _to_message(wire: Optional[OllamaMessage]) -> Message:
    if wire is None:
        return Message(role="assistant")
    calls = []
    for c in wire.tool_calls or ():
        args = c.function.arguments
        if isinstance(args, str):
            args = parse_arguments(args)
        elif not isinstance(args, dict):  # a list, a number: its JSON text, refused by the tool runner (never ``{}``)
            args = {} if args is None else _encoder.encode(args).decode()
        calls.append(ToolCall(id=c.id or new_call_id(), name=c.function.name, arguments=args))
    return Message(role="assistant", content=wire.content or None, tool_calls=calls, reasoning=wire.thinking or None)


def _finish(reply: ChatReply, message: Message) -> Optional[str]:
    if message.tool_calls:
        return "tool_calls"
    return reply.done_reason or ("stop" if reply.done else None)
