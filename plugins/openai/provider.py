"""The OpenAI Chat Completions provider (``OpenAILLM``) over httpx and msgspec, not the openai SDK: per call one
encode, one POST through ``zagent.providerkit.HttpClient`` and one typed decode. A stream yields text deltas as they
come and whole tool calls once their argument deltas are complete.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

import attrs
import msgspec

from zagent.errors import ProtocolError, ProviderError
from zagent.providerkit import HttpClient, iter_sse, malformed, network_options, stream_interrupted
from zagent.providerkit.masking import sealed_fields
from zagent.providerkit import parse_arguments, price_per_million, ProviderLLM, unique_call_ids
from zagent.types import Chunk, Completion, LLMRequest, Message, ModelProfile, ToolCall, Usage

from . import wire
from .profiles import UNKNOWN, profile_for

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@attrs.define(repr=False, eq=False, kw_only=True)
class OpenAILLM(ProviderLLM):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    :ivar http: the shared HTTP machinery (client per loop, retries, errors).
    :ivar fields: request fields sent with every call (``temperature``...; ``extra_body`` merged in).
    :ivar stream_usage: ask for usage in streams (``stream_options.include_usage``).
    """

    tool_name_pattern = r"^[A-Za-z0-9_-]{1,64}$"  # OpenAI's function-name rule; other names are mapped (zagent.providerkit.toolnames)
    input_media = ("image", "file")

    http: HttpClient
    fields: dict[str, Any] = attrs.field(factory=dict)
    stream_usage: bool = True
    _probe_due: Optional[bool] = attrs.field(default=None, init=False)

    @classmethod
    def build(cls, model: str, **options: Any) -> "OpenAILLM":
        http, rest = network_options("openai", options, key_env="OPENAI_API_KEY", base_env="OPENAI_BASE_URL",
                                     default_base_url=DEFAULT_BASE_URL)
        price = price_per_million(rest.pop("prices", None), model)
        stream_usage = bool(rest.pop("stream_usage", True))
        fields = {**(rest.pop("extra_body", None) or {}), **rest}
        return cls(provider="openai", model=model, http=http, fields=sealed_fields(fields), price=price,
                   stream_usage=stream_usage)

    def default_profile(self) -> ModelProfile:
        profile = profile_for(self.model)
        if profile is UNKNOWN and not _user_tool_mode(self.profile_overrides):
            from . import families

            if families.verdict(self.http.base_url, self.model) is False:  # this server answers tools= with text
                profile = msgspec.structs.replace(profile, **families.text_only_fields(self.model))
        elif profile is UNKNOWN and self.profile_overrides.get("native_tools") is False \
                and "tool_format" not in self.profile_overrides:  # prompt mode asked for: the family's format
            from . import families

            fmt = families.family_format(self.model)
            if fmt is not None:
                profile = msgspec.structs.replace(profile, tool_format=fmt)
        return profile

    @property
    def tools_probe_due(self) -> bool:
        """The next tool turn should first probe the server (``families``): an open-weights model with no
        profile of its own, no tool mode set by the user, and no verdict on its server yet."""
        due = self._probe_due
        if due is None:
            from . import families

            due = self._probe_due = (profile_for(self.model) is UNKNOWN and not _user_tool_mode(self.profile_overrides)
                                     and families.family_format(self.model) is not None
                                     and families.verdict(self.http.base_url, self.model) is None)
        return due

    async def aprobe_tools(self) -> None:
        """Probe the server once (``families.probe``); a text-only verdict switches this model to prompt mode."""
        from . import families

        self._probe_due = False
        try:
            await families.probe(self)
        except ProviderError:
            return  # no verdict (network, auth...): native mode stays, the real request reports the problem
        self._profile = None  # recomputed with the verdict, the user's overrides applied again

    def note_text_calls(self) -> None:
        """A native reply's calls were found only in its text: later models on this server start in prompt mode."""
        if profile_for(self.model) is UNKNOWN and not _user_tool_mode(self.profile_overrides):
            from . import families

            if families.verdict(self.http.base_url, self.model) is None:
                families.record(self.http.base_url, self.model, False)

    # -- requests ---------------------------------------------------------------

    def body(self, request: LLMRequest, stream: bool = False) -> bytes:
        """The encoded request body (public for inspection and the bench)."""
        payload: dict[str, Any] = {"model": request.model or self.model,
                                   "messages": wire.encode_messages(request.messages)}
        if self.fields:
            payload.update(self.fields)
        if request.options:
            options = request.options
            if "extra_body" in options:
                options = {**options}
                payload.update(options.pop("extra_body") or {})
            payload.update(options)
        if request.tools:
            payload["tools"] = [wire.encode_tool(t) for t in request.tools]
            if "tool_choice" not in payload:
                payload["tool_choice"] = "auto"  # some local servers (llama-cpp-python) ignore tools without it
        if request.response_format:
            payload["response_format"] = wire.response_format(request.response_format)
        profile = self.profile
        if profile.max_tokens is not None and "max_tokens" not in payload and "max_completion_tokens" not in payload:
            payload["max_tokens"] = profile.max_tokens
        if stream:
            payload["stream"] = True
            if self.stream_usage and profile.stream_usage and "stream_options" not in payload:
                payload["stream_options"] = {"include_usage": True}
        return wire.encoder.encode(payload)

    async def _wire_complete(self, request: LLMRequest) -> Completion:
        response = await self.http.post("/chat/completions", self.body(request))
        content = response.content
        try:
            reply = wire.response_decoder.decode(content)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "reply", exc, content) from None
        if reply.error is not None or not reply.choices:
            raise self._reply_error(reply.error, content)
        choice = reply.choices[0]
        return Completion(message=wire.to_message(choice.message), finish_reason=choice.finish_reason,
                          usage=wire.to_usage(reply.usage, reply.timings), model=reply.model or self.model,
                          id=reply.id if isinstance(reply.id, str) else None, refusal=choice.message.refusal or None)

    def _reply_error(self, error: Any, content: bytes) -> ProviderError:
        from zagent.providerkit import server_message

        message = server_message(content, redact=self.http.redact)
        return ProviderError(f"openai ({self.http.base_url}) answered without a choice: {message}; "
                             "check the model name and request options", provider="openai", status=200, body=message)

    # -- streaming --------------------------------------------------------------

    async def _wire_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        response = await self.http.post("/chat/completions", self.body(request, stream=True), stream=True,
                                        expect="text/event-stream")
        state = _StreamState()
        try:
            async for chunk in self._events(response, state):
                yield chunk
        finally:
            await response.aclose()
        if not state.finished:
            raise stream_interrupted(self.http, EOFError("the stream ended before its end marker"),
                                     state.text(), state.calls())
        for call in state.calls():
            yield Chunk(type="tool_call", tool_call=call)
        message = Message(role="assistant", content=state.text() or None, tool_calls=state.calls(),
                          reasoning="".join(state.reasoning) or None)
        yield Chunk(type="done", completion=Completion(
            message=message, finish_reason=state.finish_reason, usage=state.final_usage(),
            model=state.model or self.model, refusal="".join(state.refusal) or None))

    async def _events(self, response: Any, state: "_StreamState") -> AsyncIterator[Chunk]:
        mod = self.http.module()
        try:
            async for _event, data in iter_sse(response.aiter_lines()):
                if data == "[DONE]" or state.done:  # read on to the body's end (a little: ``StreamReply.ended``)
                    if not state.done:
                        response.ended()
                    state.done = True
                    continue
                text = state.feed(self._decode_chunk(data, state))
                if state.thought:
                    yield Chunk(type="reasoning", text=state.thought)
                if text:
                    yield Chunk(type="text", text=text)
        except (mod.TransportError, mod.TimeoutException) as exc:
            raise stream_interrupted(self.http, exc, state.text(), state.calls()) from None

    def _decode_chunk(self, data: str, state: "_StreamState") -> wire.StreamChunk:
        try:
            chunk = wire.chunk_decoder.decode(data)
        except (msgspec.DecodeError, RecursionError) as exc:  # nested past msgspec's limit too
            raise malformed(self.http, "stream event", exc, data) from None
        if chunk.error is not None:
            message = self.http.redact(str(chunk.error.get("message") if isinstance(chunk.error, dict) else chunk.error))
            raise ProviderError(f"openai ({self.http.base_url}) reported an error mid-stream: {message}",
                                provider="openai", status=200, body=message)
        return chunk

    async def aclose(self) -> None:
        await self.http.aclose()

    async def alist_models(self) -> list[str]:
        """The model ids the server lists (``GET /models``), for ``zagent models``."""
        from zagent.providerkit.listing import get_json, names

        return names(await get_json(self.http, "/models"), "data", "id", self.http)

    def __repr__(self) -> str:
        from zagent import mask_userinfo

        return f"<OpenAILLM {self.name} {mask_userinfo(self.http.base_url)}>"


#: the longest tool name a stream may assemble from its pieces
MAX_TOOL_NAME = 1024


def _user_tool_mode(overrides: dict[str, Any]) -> bool:
    return "native_tools" in overrides or "tool_format" in overrides


class _StreamState:
    """What a stream has delivered so far: text parts, tool-call deltas by index, finish, usage."""

    __slots__ = ("parts", "pending", "finish_reason", "usage", "model", "done", "_calls", "reasoning", "refusal",
                 "thought", "timings")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending: dict[int, list[Any]] = {}
        self.finish_reason: Optional[str] = None
        self.usage: Optional[Usage] = None
        self.model = ""
        self.done = False
        self._calls: Optional[list[ToolCall]] = None
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.thought = ""  # the reasoning delta of the last event fed
        self.timings: Optional[wire.Timings] = None

    def final_usage(self) -> Usage:
        """The stream's usage: its ``usage`` event, else llama.cpp's ``timings``, else zeros (one call)."""
        if self.usage is not None:
            return self.usage
        return wire.to_usage(None, self.timings)

    @property
    def finished(self) -> bool:
        return self.done or self.finish_reason is not None

    def feed(self, chunk: wire.StreamChunk) -> str:
        """Take one event in; return its text delta."""
        if chunk.usage is not None:
            self.usage = wire.to_usage(chunk.usage)
        if chunk.timings is not None:
            self.timings = chunk.timings
        if chunk.model:
            self.model = chunk.model
        text = ""
        self.thought = ""
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    text += delta.content
                if delta.reasoning_content or delta.reasoning:
                    thought = wire.reasoning_of(delta) or ""
                    self.thought += thought
                    self.reasoning.append(thought)
                if delta.refusal:
                    self.refusal.append(delta.refusal)
                for tc in delta.tool_calls or ():
                    self._add_call_delta(tc)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        if text:
            self.parts.append(text)
        return text

    def _add_call_delta(self, tc: wire.DeltaToolCall) -> None:
        entry = self.pending.get(tc.index)
        if entry is None:
            entry = self.pending[tc.index] = ["", "", []]
        if tc.id:
            entry[0] = tc.id
        if tc.function is not None:
            if tc.function.name:
                if len(entry[1]) + len(tc.function.name) > MAX_TOOL_NAME:  # pieces joined by += cost the square
                    raise ProtocolError(f"the stream's tool call at index {tc.index} has a name of more than "
                                        f"{MAX_TOOL_NAME:,} characters (providers allow 64-128); the server sends "
                                        "malformed calls: check its model and version", provider="openai")
                entry[1] += tc.function.name
            if tc.function.arguments:
                entry[2].append(tc.function.arguments)
        self._calls = None

    def text(self) -> str:
        return "".join(self.parts)

    def calls(self) -> list[ToolCall]:
        if self._calls is None:
            self._calls = unique_call_ids([ToolCall(id=i, name=name, arguments=parse_arguments("".join(args)))
                                           for (i, name, args) in (v for _, v in sorted(self.pending.items()))])
        return self._calls
