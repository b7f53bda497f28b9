"""The LLM interface every provider plugin implements.

A provider subclasses ``LLM`` and implements two coroutines:

* ``_acomplete(request: LLMRequest) -> Completion``
* ``_astream(request: LLMRequest)``, an async generator of ``Chunk``; the last
  chunk is ``Chunk(type="done", completion=...)``. The default falls back to
  ``_acomplete`` and yields the whole text at once.

and may override ``default_profile()`` and ``aclose()``. A provider that wraps
another one (``record:``) calls the inner model's ``_send``/``_send_stream``,
not its ``_acomplete``/``_astream``, so tool names are mapped for the wire
exactly as in a direct call, and gets the reply settled the same way
(``settle``: inline ``<think>`` spans moved to ``Message.reasoning``, each
tool call with a unique id, a refusal to a structured-output request raised
as ``Refusal``; streamed think spans become ``reasoning`` chunks). The public methods
(``acomplete``/``complete``, ``astream``/``stream``) are defined here once:
they normalise inputs, run the LLM-call rails, emit events and account usage,
so every provider behaves the same. They cost nothing when no rail or event
plugin is installed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, ClassVar, Iterable, Iterator, Optional

import attrs
import msgspec

from ..errors import ConfigError, ProtocolError
from .._trust.limits import MAX_USAGE, bound_calls, usage_problem
from .inputs import MessagesIn, price_per_million, to_messages, to_tool_specs
from .replies import (
    aclose_stream, counted, new_call_id, parse_arguments, renamed_stream, settle, settled_stream, unique_call_ids,
)
from .._runs.sync import run_sync
from .toolnames import WireNames
from ..types import Chunk, Completion, LLMRequest, ModelProfile, Usage

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel

COST_KEY = "zagent.cost_usd"

# moved to replies.py / inputs.py; importable from here as before
__all__ = [
    "COST_KEY", "LLM", "MessagesIn", "counted", "new_call_id", "parse_arguments", "price_per_million", "settle",
    "to_messages", "to_tool_specs", "unique_call_ids",
]


@attrs.define(repr=False, eq=False, kw_only=True)
class LLM:
    """Base class of provider models. ``provider`` and ``model`` name it (``openai``, ``gpt-4o-mini``).

    :ivar profile_overrides: fields of ``ModelProfile`` forced by the user.
    :ivar kernel: set by ``Kernel.llm``; rails and events come from it.
    :ivar price: USD per million ``(input, output)`` tokens, when a price table
        was given; ``cost(usage)`` turns usage into money and each run's total
        is kept in ``ctx.stash["zagent.cost_usd"]``.
    """

    provider: str = ""
    model: str = ""
    profile_overrides: dict[str, Any] = attrs.field(factory=dict)
    kernel: Optional["Kernel"] = None
    price: Optional[tuple[float, float]] = None
    _profile: Optional[ModelProfile] = attrs.field(default=None, init=False)

    #: regex every tool name must match on this provider's wire (``None``: any name); offered
    #: tools that don't match are renamed for the request and mapped back (``zagent._model.toolnames``)
    tool_name_pattern: ClassVar[Optional[str]] = None
    #: kinds of message parts this provider's wire carries (``"image"``, ``"file"`` or a file media type);
    #: ``ModelProfile.input_media`` narrows or widens it per model
    input_media: ClassVar[tuple[str, ...]] = ()

    # -- to implement -------------------------------------------------------

    async def _acomplete(self, request: LLMRequest) -> Completion:
        raise NotImplementedError(f"{type(self).__name__} does not implement _acomplete")

    async def _astream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        completion = await self._acomplete(request)
        if completion.text:
            yield Chunk(type="text", text=completion.text)
        for call in completion.tool_calls:
            yield Chunk(type="tool_call", tool_call=call)
        yield Chunk(type="done", completion=completion)

    def default_profile(self) -> ModelProfile:
        """What this provider knows about ``self.model``; override per provider."""
        return ModelProfile()

    async def aclose(self) -> None:
        """Release connections. Called by ``Kernel.aclose``."""

    # -- public API -----------------------------------------------------------

    def cost(self, usage: Usage) -> Optional[float]:
        """USD cost of ``usage`` at this model's ``price``, or ``None`` without a price."""
        price = self.price
        if price is None:
            return None
        return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / 1_000_000

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def profile(self) -> ModelProfile:
        """The model's capabilities, with user overrides applied (computed once)."""
        if self._profile is None:
            base = self.default_profile()
            if self.profile_overrides:
                try:
                    base = msgspec.structs.replace(base, **self.profile_overrides)
                except TypeError as exc:
                    raise ConfigError(
                        f"bad profile override for {self.name}: {exc}; "
                        f"known fields: {', '.join(ModelProfile.__struct_fields__)}"
                    ) from None
            self._profile = base
        return self._profile

    def request(
        self,
        messages: MessagesIn,
        *,
        tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None,
        stream: bool = False,
        output_spec: Optional[dict[str, Any]] = None,
        **options: Any,
    ) -> LLMRequest:
        """Build the ``LLMRequest`` the public methods send (useful for inspection); a message part the
        model cannot take is a ``ProviderConfigError`` here, before any request."""
        messages = to_messages(messages)
        for m in messages:
            if m.parts:
                from .parts import check_media

                check_media(self, messages)
                break
        return LLMRequest(
            model=self.model,
            messages=messages,
            tools=to_tool_specs(tools) if tools else [],
            response_format=response_format,
            options=options,
            stream=stream,
            output_spec=output_spec,
        )

    async def acomplete(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> Completion:
        """Send one request and return the whole reply."""
        request = self.request(messages, tools=tools, response_format=response_format, **options)
        return await self.asend(request, ctx)

    async def asend(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        """Send a prepared ``LLMRequest`` (rails, events and usage accounting apply)."""
        kernel = self.kernel
        if kernel is None:
            return await self._send(request)
        if ctx is not None and ctx.on_delta is not None:  # a streamed run (an agent's astream): stream this call
            from .stream import send_streamed

            return await send_streamed(self, request, ctx, _emitter, _failed_call)
        hooks = kernel.hooks
        if hooks.active("zagent_before_llm_call"):
            ctx = ctx or kernel.context()
            request = await hooks.before_llm(request, ctx)
        started = time.perf_counter()
        if not hooks.active("zagent_event"):
            pattern = self.tool_name_pattern
            if pattern and WireNames.for_request(request, pattern) is not None:  # names to map: _send does it
                return await self._finish(request, await self._send(request), ctx, started)
            # _send inlined when no tool name needs mapping: one coroutine less in the await chain
            completion = settle(request, counted(await self._acomplete(request)), self.profile.think_tags)
            return await self._finish(request, completion, ctx, started)
        await _emitter(kernel, ctx).aemit("llm_start", model=self.name, provider=self.provider,
                           messages=len(request.messages), **self._call_data(request))
        try:
            completion = await self._send(request)
        except BaseException as exc:
            await _failed_call(kernel, ctx, self.name, exc)
            raise
        return await self._finish(request, completion, ctx, started)

    async def _send(self, request: LLMRequest) -> Completion:
        """``_acomplete``, with tool names the provider refuses renamed on the way and back, and the
        reply settled (``settle``: reasoning out of the answer, unique call ids, refusals raised)."""
        names = WireNames.for_request(request, self.tool_name_pattern) if self.tool_name_pattern else None
        if names is None:
            return settle(request, counted(await self._acomplete(request)), self.profile.think_tags)
        return settle(request, counted(names.completion(await self._acomplete(names.request(request)))),
                      self.profile.think_tags)

    def _send_stream(self, request: LLMRequest) -> AsyncIterator[Chunk]:
        """``_astream``, with tool names renamed the same way as ``_send`` (wrapping providers call these two),
        inline think spans streamed as ``reasoning`` chunks and the ``done`` completion settled."""
        names = WireNames.for_request(request, self.tool_name_pattern) if self.tool_name_pattern else None
        if names is None:
            agen = self._astream(request)
        else:
            agen = renamed_stream(self._astream(names.request(request)), names)
        return settled_stream(request, agen, self.profile.think_tags)

    def complete(self, messages: MessagesIn, **kwargs: Any) -> Completion:
        """Sync twin of ``acomplete``."""
        return run_sync(self.acomplete(messages, **kwargs))

    def send(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        """Sync twin of ``asend``."""
        return run_sync(self.asend(request, ctx))

    async def astream(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> AsyncGenerator[Chunk, None]:
        """Stream the reply: text deltas, whole tool calls, then a ``done`` chunk."""
        request = self.request(messages, tools=tools, response_format=response_format, stream=True, **options)
        kernel = self.kernel
        if kernel is not None and kernel.hooks.active("zagent_before_llm_call"):
            ctx = ctx or kernel.context()
            request = await kernel.hooks.before_llm(request, ctx)
        started = time.perf_counter()
        events = kernel is not None and kernel.hooks.active("zagent_event")
        if events:
            assert kernel is not None
            await _emitter(kernel, ctx).aemit("llm_start", model=self.name, provider=self.provider,
                               messages=len(request.messages), stream=True, **self._call_data(request))
        agen = self._send_stream(request)
        finished = False
        try:
            async for chunk in agen:
                if chunk.type == "done" and chunk.completion is not None:
                    finished = True
                    final = await self._finish(request, counted(chunk.completion), ctx, started)
                    yield Chunk(type="done", completion=final)
                else:
                    yield chunk
        except GeneratorExit:  # the consumer stopped early: nothing may be awaited here
            raise
        except BaseException as exc:
            if events and not finished:
                await _failed_call(kernel, ctx, self.name, exc)
            raise
        finally:
            await aclose_stream(agen)

    def stream(self, messages: MessagesIn, **kwargs: Any) -> Iterator[Chunk]:
        """Sync twin of ``astream`` (the stream runs on zagent's background loop)."""
        agen = self.astream(messages, **kwargs)
        try:
            while True:
                try:
                    yield run_sync(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            run_sync(agen.aclose())

    def close(self) -> None:
        run_sync(self.aclose())

    async def _finish(
        self, request: LLMRequest, completion: Completion, ctx: Optional["RunContext[Any]"], started: float
    ) -> Completion:
        if completion.message.tool_calls:
            bound_calls(completion.message.tool_calls)  # arguments nested past zagent._trust.limits stay text
        usage = completion.usage
        if not (0 <= usage.input_tokens <= MAX_USAGE and 0 <= usage.output_tokens <= MAX_USAGE
                and 0 <= usage.calls <= MAX_USAGE):  # wire numbers are hostile too: never stored or summed
            raise ProtocolError(f"{self.name} reported token usage that cannot be right: {usage_problem(usage)}; "
                                "the reply was dropped. Check the server", provider=self.provider, status=200)
        kernel = self.kernel
        if kernel is None:
            return completion
        hooks = kernel.hooks
        if hooks.active("zagent_after_llm_call"):
            ctx = ctx or kernel.context()
            completion = await hooks.after_llm(request, completion, ctx)
        if ctx is not None:
            ctx.add_usage(completion.usage)
            if self.price is not None:
                ctx.stash[COST_KEY] = ctx.stash.get(COST_KEY, 0.0) + (self.cost(completion.usage) or 0.0)
        if hooks.active("zagent_event"):
            await _emitter(kernel, ctx).aemit(
                "llm_end", model=self.name, finish_reason=completion.finish_reason,
                input_tokens=completion.usage.input_tokens, output_tokens=completion.usage.output_tokens,
                tool_calls=len(completion.tool_calls), duration=time.perf_counter() - started,
                **({"response_model": completion.model} if completion.model else {}),
                **({"response_id": completion.id} if completion.id else {}),
            )
        return completion

    def endpoint(self) -> Optional[str]:
        """The URL this model's requests go to (``http.base_url`` of the HTTP providers), for telemetry."""
        return getattr(getattr(self, "http", None), "base_url", None)

    def _call_data(self, request: LLMRequest) -> dict[str, Any]:
        """What ``llm_start`` says of a call beyond the model (events on only): sampling settings, the server."""
        data: dict[str, Any] = {}
        options = request.options
        for key in ("temperature", "top_p", "max_tokens"):
            if isinstance(options.get(key), (int, float)) and not isinstance(options.get(key), bool):
                data[key] = options[key]
        if "max_tokens" not in data and isinstance(options.get("max_completion_tokens"), int):
            data["max_tokens"] = options["max_completion_tokens"]
        server = self.endpoint()
        if server:
            from .._trust.secrets import mask_userinfo

            data["server"] = mask_userinfo(server)
        return data

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


async def _failed_call(kernel: Any, ctx: Optional["RunContext[Any]"], model: str, exc: BaseException) -> None:
    """The ``llm_end`` of a call that raised (``outcome`` error, or cancelled for an abort)."""
    import asyncio

    cancelled = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
    await _emitter(kernel, ctx).aemit("llm_end", model=model, input_tokens=0, output_tokens=0,
                       outcome="cancelled" if cancelled else "error", error=f"{type(exc).__name__}: {exc}"[:300])


def _emitter(kernel: Any, ctx: Optional["RunContext[Any]"]) -> Any:
    """What sends a call's events: the kernel, through the run context when there is one (which tags them with
    the run id and agent; one dict of keywords less than ``kernel.aemit(run_id=..., agent=..., **data)``)."""
    if ctx is None:
        return kernel
    return ctx if ctx.kernel is kernel else attrs.evolve(ctx, kernel=kernel)  # a context of another kernel
