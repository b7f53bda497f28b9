"""The one place that runs a model call: ``Model``, what ``Kernel.llm`` returns (the twin of
``zagent._tools.run``): before-rails, ``llm_start``, the provider's call (settled), usage bounds, after-rails,
usage and cost, ``llm_end``. ``Model(llm)`` without a kernel runs no rails or events.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, AsyncGenerator, Iterable, Iterator, Optional

import attrs
import msgspec

from ..errors import ProtocolError, ProviderError
from .._trust.limits import MAX_USAGE, bound_calls, usage_problem
from .inputs import MessagesIn, to_messages, to_tool_specs
from .replies import aclose_stream, counted, renamed_stream, settle, settled_stream
from .._runs.stash import StashKey
from .._runs.sync import run_sync
from .toolnames import WireNames
from ..types import Chunk, Completion, LLMRequest, ModelProfile, Usage

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from .llm import LLM

#: where a run's LLM cost so far (USD) is kept in ``ctx.stash``
COST_KEY: "StashKey[float]" = StashKey("zagent.cost_usd")


class Model:
    """One provider model bound to one kernel's rails and events (see the module docstring)."""

    __slots__ = ("llm", "kernel")
    llm: "LLM"
    kernel: Optional["Kernel"]

    def __init__(self, llm: "LLM", kernel: Optional["Kernel"] = None) -> None:
        object.__setattr__(self, "llm", llm)
        object.__setattr__(self, "kernel", kernel)

    # -- the provider's attributes, read and written through ------------------------

    def __getattr__(self, name: str) -> Any:  # only for names a Model does not have
        if name in Model.__slots__:
            raise AttributeError(name)
        return getattr(self.llm, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.llm, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Model, (self.llm, self.kernel))

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(model, OpenAILLM) as for the provider's own object
        return type(self.llm)

    @property
    def provider(self) -> str:
        return self.llm.provider

    @property
    def model(self) -> str:
        return self.llm.model

    @property
    def name(self) -> str:
        return self.llm.name

    @property
    def profile(self) -> ModelProfile:
        return self.llm.profile

    def cost(self, usage: Usage) -> Optional[float]:
        return self.llm.cost(usage)

    def endpoint(self) -> Optional[str]:
        return self.llm.endpoint()

    def call_settings(self) -> dict[str, Any]:
        return self.llm.call_settings()

    def __repr__(self) -> str:
        return repr(self.llm)

    # -- calls ---------------------------------------------------------------------------

    def request(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, stream: bool = False,
        output_spec: Optional[dict[str, Any]] = None, **options: Any,
    ) -> LLMRequest:
        """Build the ``LLMRequest`` the call methods send (useful for inspection); a message part the
        model cannot take is a ``ProviderConfigError`` here, before any request."""
        messages = to_messages(messages)
        for m in messages:
            if m.parts:
                from .parts import check_media

                check_media(self.llm, messages)
                break
        return LLMRequest(model=self.llm.model, messages=messages, tools=to_tool_specs(tools) if tools else [],
                          response_format=response_format, options=options, stream=stream, output_spec=output_spec)

    async def acomplete(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> Completion:
        """Send one request and return the whole reply."""
        return await self.asend(self.request(messages, tools=tools, response_format=response_format, **options), ctx)

    async def asend(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        """Send a prepared ``LLMRequest`` (rails, events and usage accounting apply)."""
        kernel, llm = self.kernel, self.llm
        if kernel is None:
            return await send_bare(llm, request)
        if ctx is not None and ctx.on_delta is not None:  # a streamed run (an agent's astream): stream this call
            return await self._send_streamed(request, ctx)
        hooks = kernel.hooks
        if hooks.active("zagent_before_llm_call"):
            ctx = ctx or kernel.context()
            request = await hooks.before_llm(request, ctx)
        started = time.perf_counter()
        if not hooks.active("zagent_event"):
            pattern = llm.tool_name_pattern
            if pattern and WireNames.for_request(request, pattern) is not None:  # names to map: send_bare does it
                return await finish(kernel, llm, request, await send_bare(llm, request), ctx, started)
            # send_bare inlined when no tool name needs mapping: one coroutine less in the await chain
            completion = settle(request, counted(await llm._acomplete(request)), llm.profile.think_tags)
            return await finish(kernel, llm, request, completion, ctx, started)
        await _emitter(kernel, ctx).aemit("llm_start", model=llm.name, provider=llm.provider,
                                          messages=len(request.messages), **_call_data(llm, request))
        try:
            completion = await send_bare(llm, request)
        except BaseException as exc:
            await _failed_call(kernel, ctx, llm.name, exc)
            raise
        return await finish(kernel, llm, request, completion, ctx, started)

    async def astream(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> AsyncGenerator[Chunk, None]:
        """Stream the reply: text deltas, whole tool calls, then a ``done`` chunk."""
        request = self.request(messages, tools=tools, response_format=response_format, stream=True, **options)
        kernel, llm = self.kernel, self.llm
        if kernel is not None and kernel.hooks.active("zagent_before_llm_call"):
            ctx = ctx or kernel.context()
            request = await kernel.hooks.before_llm(request, ctx)
        started = time.perf_counter()
        events = kernel is not None and kernel.hooks.active("zagent_event")
        if events:
            await _emitter(kernel, ctx).aemit("llm_start", model=llm.name, provider=llm.provider,
                                              messages=len(request.messages), stream=True, **_call_data(llm, request))
        agen = stream_bare(llm, request)
        finished = False
        try:
            async for chunk in agen:
                if chunk.type == "done" and chunk.completion is not None:
                    finished = True
                    final = await finish(kernel, llm, request, counted(chunk.completion), ctx, started)
                    yield Chunk(type="done", completion=final)
                else:
                    yield chunk
        except GeneratorExit:  # the consumer stopped early: nothing may be awaited here
            raise
        except BaseException as exc:
            if events and not finished:
                await _failed_call(kernel, ctx, llm.name, exc)
            raise
        finally:
            await aclose_stream(agen)

    async def _send_streamed(self, request: LLMRequest, ctx: "RunContext[Any]") -> Completion:
        """``asend`` in a streamed run: the reply streamed, each ``text``/``reasoning`` chunk handed to
        ``ctx.on_delta`` as it arrives, the assembled completion returned; a request with tools to a model
        whose profile says ``streaming_tools=False`` is sent whole."""
        on_delta, kernel, llm = ctx.on_delta, self.kernel, self.llm
        assert on_delta is not None and kernel is not None
        if request.tools and not llm.profile.streaming_tools:  # tool calls would be lost or garbled in a stream
            return await self.asend(request, attrs.evolve(ctx, on_delta=None))
        hooks = kernel.hooks
        if hooks.active("zagent_before_llm_call"):
            request = await hooks.before_llm(request, ctx)
        request = msgspec.structs.replace(request, stream=True)
        started = time.perf_counter()
        events = hooks.active("zagent_event")
        if events:
            await _emitter(kernel, ctx).aemit("llm_start", model=llm.name, provider=llm.provider,
                                              messages=len(request.messages), stream=True)
        agen = stream_bare(llm, request)
        final = None
        try:
            async for chunk in agen:
                if chunk.type == "done" and chunk.completion is not None:
                    final = chunk.completion
                elif chunk.type in ("text", "reasoning") and chunk.text:
                    result = on_delta(chunk)
                    if result is not None:
                        await result
        except BaseException as exc:
            if events:
                await _failed_call(kernel, ctx, llm.name, exc)
            raise
        finally:
            await aclose_stream(agen)
        if final is None:
            raise ProviderError("the stream ended without a final chunk", provider=llm.provider)
        return await finish(kernel, llm, request, counted(final), ctx, started)

    # -- for providers that wrap another model (fallback, record) ----------------------

    async def _send(self, request: LLMRequest) -> Completion:
        """``send_bare`` of the provider (no rails or events: the wrapping model's call has them)."""
        return await send_bare(self.llm, request)

    def _send_stream(self, request: LLMRequest) -> AsyncGenerator[Chunk, None]:
        """``stream_bare`` of the provider (no rails or events: the wrapping model's call has them)."""
        return stream_bare(self.llm, request)

    # -- sync twins and closing ------------------------------------------------------------

    def complete(self, messages: MessagesIn, **kwargs: Any) -> Completion:
        """Sync twin of ``acomplete``."""
        return run_sync(self.acomplete(messages, **kwargs))

    def send(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        """Sync twin of ``asend``."""
        return run_sync(self.asend(request, ctx))

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

    async def aclose(self) -> None:
        """Release the provider's connections (``Kernel.aclose`` does it for the models it made)."""
        await self.llm.aclose()

    def close(self) -> None:
        run_sync(self.aclose())


async def finish(kernel: Optional["Kernel"], llm: "LLM", request: LLMRequest, completion: Completion,
                 ctx: Optional["RunContext[Any]"], started: float) -> Completion:
    """A reply's way back: usage bounds, ``zagent_after_llm_call`` rails, usage and cost, ``llm_end``."""
    if completion.message.tool_calls:
        bound_calls(completion.message.tool_calls)  # arguments nested past zagent._trust.limits stay text
    usage = completion.usage
    if not (0 <= usage.input_tokens <= MAX_USAGE and 0 <= usage.output_tokens <= MAX_USAGE
            and 0 <= usage.calls <= MAX_USAGE):  # wire numbers are hostile too: never stored or summed
        raise ProtocolError(f"{llm.name} reported token usage that cannot be right: {usage_problem(usage)}; "
                            "the reply was dropped. Check the server", provider=llm.provider, status=200)
    if kernel is None:
        return completion
    hooks = kernel.hooks
    if hooks.active("zagent_after_llm_call"):
        ctx = ctx or kernel.context()
        completion = await hooks.after_llm(request, completion, ctx)
    if ctx is not None:
        ctx.add_usage(completion.usage)
        if llm.price is not None:
            ctx.stash[COST_KEY] = ctx.stash.get(COST_KEY, 0.0) + (llm.cost(completion.usage) or 0.0)
    if hooks.active("zagent_event"):
        await _emitter(kernel, ctx).aemit(
            "llm_end", model=llm.name, finish_reason=completion.finish_reason,
            input_tokens=completion.usage.input_tokens, output_tokens=completion.usage.output_tokens,
            tool_calls=len(completion.tool_calls), duration=time.perf_counter() - started,
            **({"response_model": completion.model} if completion.model else {}),
            **({"response_id": completion.id} if completion.id else {}),
        )
    return completion


async def send_bare(llm: "LLM", request: LLMRequest) -> Completion:
    """The provider's ``_acomplete``, with tool names it refuses renamed on the way and back, and the reply
    settled (``settle``: reasoning out of the answer, unique call ids, refusals raised); no rails or events."""
    names = WireNames.for_request(request, llm.tool_name_pattern) if llm.tool_name_pattern else None
    if names is None:
        return settle(request, counted(await llm._acomplete(request)), llm.profile.think_tags)
    return settle(request, counted(names.completion(await llm._acomplete(names.request(request)))),
                  llm.profile.think_tags)


def stream_bare(llm: "LLM", request: LLMRequest) -> AsyncGenerator[Chunk, None]:
    """The provider's ``_astream``, tool names renamed as in ``send_bare``, inline think spans streamed as
    ``reasoning`` chunks and the ``done`` completion settled; no rails or events."""
    names = WireNames.for_request(request, llm.tool_name_pattern) if llm.tool_name_pattern else None
    if names is None:
        agen = llm._astream(request)
    else:
        agen = renamed_stream(llm._astream(names.request(request)), names)
    return settled_stream(request, agen, llm.profile.think_tags)


def _call_data(llm: "LLM", request: LLMRequest) -> dict[str, Any]:
    """What ``llm_start`` says of a call beyond the model (events on only): sampling settings, the server."""
    data: dict[str, Any] = {}
    options = {**llm.call_settings(), **request.options}  # the model's own settings, then the call's
    for key in ("temperature", "top_p", "max_tokens"):
        if isinstance(options.get(key), (int, float)) and not isinstance(options.get(key), bool):
            data[key] = options[key]
    if "max_tokens" not in data and isinstance(options.get("max_completion_tokens"), int):
        data["max_tokens"] = options["max_completion_tokens"]
    server = llm.endpoint()
    if server:
        from .._trust.secrets import mask_userinfo

        data["server"] = mask_userinfo(server)
    return data


async def _failed_call(kernel: Any, ctx: Optional["RunContext[Any]"], model: str, exc: BaseException) -> None:
    """The ``llm_end`` of a call that raised (``outcome`` error, or cancelled for an abort)."""
    import asyncio

    cancelled = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
    await _emitter(kernel, ctx).aemit("llm_end", model=model, input_tokens=0, output_tokens=0,
                                      outcome="cancelled" if cancelled else "error",
                                      error=f"{type(exc).__name__}: {exc}"[:300])


def _emitter(kernel: Any, ctx: Optional["RunContext[Any]"]) -> Any:
    """What sends a call's events: the kernel, through the run context when there is one (which tags them with
    the run id and agent; one dict of keywords less than ``kernel.aemit(run_id=..., agent=..., **data)``)."""
    if ctx is None:
        return kernel
    return ctx if ctx.kernel is kernel else attrs.evolve(ctx, kernel=kernel)  # a context of another kernel


class Direct:
    """The call methods of an ``LLM`` used directly, without a kernel: those of ``Model(llm)`` (no rails or
    events; ``Kernel.llm`` returns the model bound to the kernel instead)."""

    __slots__ = ()

    def request(self, messages: MessagesIn, **kwargs: Any) -> LLMRequest:
        return Model(self).request(messages, **kwargs)  # type: ignore[arg-type]

    async def acomplete(self, messages: MessagesIn, **kwargs: Any) -> Completion:
        return await Model(self).acomplete(messages, **kwargs)  # type: ignore[arg-type]

    async def asend(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        return await send_bare(self, request)  # type: ignore[arg-type]

    def astream(self, messages: MessagesIn, **kwargs: Any) -> AsyncGenerator[Chunk, None]:
        return Model(self).astream(messages, **kwargs)  # type: ignore[arg-type]

    def complete(self, messages: MessagesIn, **kwargs: Any) -> Completion:
        return run_sync(self.acomplete(messages, **kwargs))

    def send(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        return run_sync(self.asend(request, ctx))

    def stream(self, messages: MessagesIn, **kwargs: Any) -> Iterator[Chunk]:
        return Model(self).stream(messages, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        run_sync(self.aclose())  # type: ignore[attr-defined]

    async def _send(self, request: LLMRequest) -> Completion:
        return await send_bare(self, request)  # type: ignore[arg-type]

    def _send_stream(self, request: LLMRequest) -> AsyncGenerator[Chunk, None]:
        return stream_bare(self, request)  # type: ignore[arg-type]
