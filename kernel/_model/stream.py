"""One model call of a streamed run: ``LLM.asend`` when the run's context has ``on_delta`` set.

An agent's ``astream()`` (declared agents, workflows, group chats, ReAct
chats) runs the agent with ``ctx.on_delta`` set; every ``LLM.asend`` of that
run (its nested agents share the context's ``on_delta``) then streams its
reply through here: the same rails, events and usage accounting as
``LLM.astream``, each ``text``/``reasoning`` chunk handed to ``on_delta``
as it arrives, and the assembled completion returned as ``asend`` would. A
request with tools to a model whose profile says ``streaming_tools=False``
is sent whole.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import attrs
import msgspec

from ..errors import ProviderError
from ..types import Completion, LLMRequest

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from .llm import LLM


async def send_streamed(llm: "LLM", request: LLMRequest, ctx: "RunContext[Any]", emitter: Callable[..., Any],
                        failed: Callable[..., Awaitable[None]]) -> Completion:
    """``llm.asend(request, ctx)`` with the reply streamed to ``ctx.on_delta`` (see the module docstring);
    ``emitter`` and ``failed`` are ``zagent._model.llm``'s event helpers (handed in: this module does not import it)."""
    from .replies import aclose_stream, counted

    on_delta = ctx.on_delta
    assert on_delta is not None
    if request.tools and not llm.profile.streaming_tools:  # tool calls would be lost or garbled in a stream
        ctx = attrs.evolve(ctx, on_delta=None)
        return await llm.asend(request, ctx)
    kernel = llm.kernel
    assert kernel is not None
    hooks = kernel.hooks
    if hooks.active("zagent_before_llm_call"):
        request = await hooks.before_llm(request, ctx)
    request = msgspec.structs.replace(request, stream=True)
    started = time.perf_counter()
    events = hooks.active("zagent_event")
    if events:
        await emitter(kernel, ctx).aemit("llm_start", model=llm.name, provider=llm.provider,
                                          messages=len(request.messages), stream=True)
    agen = llm._send_stream(request)
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
            await failed(kernel, ctx, llm.name, exc)
        raise
    finally:
        await aclose_stream(agen)
    if final is None:
        raise ProviderError("the stream ended without a final chunk", provider=llm.provider)
    return await llm._finish(request, counted(final), ctx, started)
