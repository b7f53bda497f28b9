"""The one place that runs a model call (the twin of ``zagent._tools.run``): ``Model``, what ``Kernel.llm``
returns, runs rails, events, usage bounds, usage and cost around the provider's call. ``Model(llm)`` without a
kernel, or an ``LLM`` called directly, runs no rails or events.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, AsyncGenerator, Callable, Iterable, Iterator, Optional

import attrs
import msgspec

from ..errors import ProtocolError, ProviderError
from .._trust.limits import MAX_USAGE, bound_calls, usage_problem
from .inputs import MessagesIn, to_messages, to_tool_specs
from .replies import aclose_stream, counted, settle, settled_stream
from .._runs.stash import StashKey
from .._runs.sync import run_sync
from ..types import Chunk, Completion, LLMRequest, ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from .llm import LLM

#: where a run's LLM cost so far (USD) is kept in ``ctx.stash``
COST_KEY: "StashKey[float]" = StashKey("zagent.cost_usd")


class Calls:
    """The call methods of ``Model`` and of an ``LLM`` used directly (``_bound``: the provider and the kernel)."""

    __slots__ = ()

    def _bound(self) -> tuple["LLM", Optional["Kernel"]]:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def request(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, stream: bool = False,
        output_spec: Optional[dict[str, Any]] = None, **options: Any,
    ) -> LLMRequest:
        """The ``LLMRequest`` the call methods send; a part the model cannot take is a ``ProviderConfigError``."""
        llm, messages = self._bound()[0], to_messages(messages)
        if any(m.parts for m in messages):
            from .parts import check_media

            check_media(llm, messages)
        return LLMRequest(model=llm.model, messages=messages, tools=to_tool_specs(tools) if tools else [],
                          response_format=response_format, options=options, stream=stream, output_spec=output_spec)

    async def acomplete(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> Completion:
        """Send one request and return the whole reply."""
        return await self.asend(self.request(messages, tools=tools, response_format=response_format, **options), ctx)

    async def asend(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
        """Send a prepared ``LLMRequest``; in a streamed run (``ctx.on_delta``) the reply streams to it."""
        llm, kernel = self._bound()
        if kernel is None:
            return await send_bare(llm, request)
        if ctx is not None and ctx.on_delta is not None:
            if not request.tools or llm.profile.streaming_tools:
                return await self._send_streamed(request, ctx)
            ctx = attrs.evolve(ctx, on_delta=None)  # tool calls would be lost or garbled in a stream
        request, ctx, events, started = await _start(kernel, llm, request, ctx, stream=False, call_data=True)
        try:
            completion = await send_bare(llm, request)
        except BaseException as exc:
            await _failed_call(kernel, ctx, llm.name, exc, events)
            raise
        return await finish(kernel, llm, request, completion, ctx, started)

    def astream(
        self, messages: MessagesIn, *, tools: Optional[Iterable[Any]] = None,
        response_format: Optional[dict[str, Any]] = None, ctx: Optional["RunContext[Any]"] = None, **options: Any,
    ) -> AsyncGenerator[Chunk, None]:
        """Stream the reply: text deltas, whole tool calls, then a ``done`` chunk."""
        llm, kernel = self._bound()
        return _stream(llm, kernel, lambda: self.request(messages, tools=tools, response_format=response_format,
                                                         stream=True, **options), ctx, None)

    async def _send_streamed(self, request: LLMRequest, ctx: "RunContext[Any]") -> Completion:
        llm, kernel = self._bound()
        final = None
        async for chunk in _stream(llm, kernel, lambda: request, ctx, ctx.on_delta):
            if chunk.type == "done" and chunk.completion is not None:
                final = chunk.completion
        if final is None:
            raise ProviderError("the stream ended without a final chunk", provider=llm.provider)
        return final

    async def _send(self, request: LLMRequest) -> Completion:
        """The provider's call without rails or events (for a provider wrapping another: fallback, record)."""
        return await send_bare(self._bound()[0], request)

    def _send_stream(self, request: LLMRequest) -> AsyncGenerator[Chunk, None]:
        """The provider's stream without rails or events (as ``_send``)."""
        return stream_bare(self._bound()[0], request)

    def complete(self, messages: MessagesIn, **kwargs: Any) -> Completion:
        return run_sync(self.acomplete(messages, **kwargs))

    def send(self, request: LLMRequest, ctx: Optional["RunContext[Any]"] = None) -> Completion:
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

    def close(self) -> None:
        run_sync(self.aclose())


class Model(Calls):
    """One provider model bound to one kernel's rails and events; its other attributes are the provider's."""

    __slots__ = ("llm", "kernel")
    llm: "LLM"
    kernel: Optional["Kernel"]
    provider: str
    model: str
    name: str
    profile: ModelProfile

    def __init__(self, llm: "LLM", kernel: Optional["Kernel"] = None) -> None:
        object.__setattr__(self, "llm", llm)
        object.__setattr__(self, "kernel", kernel)

    def _bound(self) -> tuple["LLM", Optional["Kernel"]]:
        return self.llm, self.kernel

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

    def __repr__(self) -> str:
        return repr(self.llm)

    async def aclose(self) -> None:
        """Release the provider's connections (``Kernel.aclose`` does it for the models it made)."""
        await self.llm.aclose()


async def _start(kernel: "Kernel", llm: "LLM", request: LLMRequest, ctx: Optional["RunContext[Any]"], *,
                 stream: bool, call_data: bool) -> tuple[LLMRequest, Optional["RunContext[Any]"], bool, float]:
    """A call's way out: ``zagent_before_llm_call`` rails and ``llm_start``; ``(request, ctx, events, started)``."""
    hooks = kernel.hooks
    if hooks.active("zagent_before_llm_call"):
        ctx = ctx or kernel.context()
        request = await hooks.before_llm(request, ctx)
    started = time.perf_counter()
    events = hooks.active("zagent_event")
    if events:
        await _emitter(kernel, ctx).aemit("llm_start", model=llm.name, provider=llm.provider,
                                          messages=len(request.messages), **({"stream": True} if stream else {}),
                                          **(_call_data(llm, request) if call_data else {}))
    return request, ctx, events, started


async def _stream(llm: "LLM", kernel: Optional["Kernel"], make: Callable[[], LLMRequest],
                  ctx: Optional["RunContext[Any]"], on_delta: Any) -> AsyncGenerator[Chunk, None]:
    """A streamed call (the request made on first iteration); each ``text``/``reasoning`` chunk also goes to
    ``on_delta`` when given (a streamed run), and the ``done`` completion has been through ``finish``."""
    request, events, started = make(), False, time.perf_counter()
    if kernel is not None:
        request, ctx, events, started = await _start(kernel, llm, request, ctx, stream=True,
                                                     call_data=on_delta is None)
    if on_delta is not None:
        request = msgspec.structs.replace(request, stream=True)
    agen = stream_bare(llm, request)
    finished = False
    try:
        async for chunk in agen:
            if chunk.type == "done" and chunk.completion is not None:
                finished = True
                yield Chunk(type="done", completion=await finish(kernel, llm, request, counted(chunk.completion),
                                                                 ctx, started))
                continue
            if on_delta is not None and chunk.type in ("text", "reasoning") and chunk.text:
                result = on_delta(chunk)
                if result is not None:
                    await result
            yield chunk
    except GeneratorExit:  # the consumer stopped early: nothing may be awaited here
        raise
    except BaseException as exc:
        if not finished:
            await _failed_call(kernel, ctx, llm.name, exc, events)
        raise
    finally:
        await aclose_stream(agen)


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
    """The provider's ``_acomplete``, the reply ``settle``d (think spans and wire names are the provider's own)."""
    return settle(request, counted(await llm._acomplete(request)))


def stream_bare(llm: "LLM", request: LLMRequest) -> AsyncGenerator[Chunk, None]:
    """The provider's ``_astream``, the ``done`` completion ``settle``d as in ``send_bare``."""
    return settled_stream(request, llm._astream(request))


def _call_data(llm: "LLM", request: LLMRequest) -> dict[str, Any]:
    """What ``llm_start`` says of a call beyond the model: sampling settings, the server."""
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


async def _failed_call(kernel: Any, ctx: Optional["RunContext[Any]"], model: str, exc: BaseException,
                       events: bool = True) -> None:
    """The ``llm_end`` of a call that raised (``outcome`` error, or cancelled for an abort; with ``events``), its
    error masked in place with the kernel config's and run deps' secrets."""
    import asyncio

    from .._trust.secrets import error_excerpt, mask_exception
    from .._trust.settings import config_masker, run_settings

    cancelled = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
    if not cancelled:  # a provider plugin quoting the key the app gave it in Kernel(config=...) or the run's deps
        mask_exception(exc, config_masker((getattr(kernel, "config", None), *run_settings(ctx)[1:])))
    if not events:
        return
    await _emitter(kernel, ctx).aemit("llm_end", model=model, input_tokens=0, output_tokens=0,
                                      outcome="cancelled" if cancelled else "error", error=error_excerpt(exc))


def _emitter(kernel: Any, ctx: Optional["RunContext[Any]"]) -> Any:
    """What sends a call's events: the kernel, or the run context (it tags them with the run id and agent)."""
    if ctx is None:
        return kernel
    return ctx if ctx.kernel is kernel else attrs.evolve(ctx, kernel=kernel)  # a context of another kernel
