"""The one place that runs a tool call (``Kernel.arun_tool``): offered, found, available, arguments valid,
before-rails, run with its timeout, after-rails, between ``tool_start``/``tool_end``; all but cancellation
becomes a ``ToolResult`` (its text masked of the secrets a rail's rewrite added: ``results.injected``)."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Iterable, Optional


from ..errors import RunStopped
from .._hooks.specs import ASKS_HUMANS
from .._trust.settings import run_settings
from .results import ResultNotText, clean, describe, injected, masked, to_text
from .tool import ArgumentsError, Tool
from .threads import PROMOTE_TIMEOUT, InlineProbe, ToolThreadsExhausted
from ..types import ToolCall, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel

_timeout_cm = getattr(asyncio, "timeout", None)  # Python 3.11+: no extra task per call
CANCEL_GRACE = 1.0  # seconds an async tool past its timeout has to end once cancelled
_probes: "weakref.WeakKeyDictionary[Tool, InlineProbe]" = weakref.WeakKeyDictionary()  # measured tools


async def run_tool(kernel: "Kernel", call: ToolCall, ctx: "RunContext[Any]") -> ToolResult:
    started = time.perf_counter()
    hooks = kernel.hooks
    events = hooks.active("zagent_event")
    if events:
        await ctx.aemit("tool_start", tool=call.name, call_id=call.id)
    call, result = await _run(kernel, call, ctx, started)
    if hooks.active("zagent_after_tool_call"):
        result = await hooks.after_tool(call, result, ctx)
    if events:
        await ctx.aemit("tool_end", tool=call.name, call_id=call.id, state=result.state,
                       error=result.error, duration=result.duration)
    return result


async def run_tools(
    kernel: "Kernel", calls: Iterable[ToolCall], ctx: "RunContext[Any]", max_concurrency: Optional[int] = None
) -> list[ToolResult]:
    """Run ``calls`` concurrently, at most ``max_concurrency`` at once (``None``: the kernel's
    ``config["max_tool_concurrency"]``, else no limit); results keep the calls' order."""
    calls = list(calls)
    if max_concurrency is None:
        max_concurrency = kernel.config.get("max_tool_concurrency")
    if max_concurrency is not None and int(max_concurrency) < 1:
        raise ValueError(f"max_concurrency must be at least 1 (or None for no limit), got {max_concurrency!r}")
    if len(calls) == 1:
        return [await run_tool(kernel, calls[0], ctx)]
    if not max_concurrency or max_concurrency >= len(calls):
        return list(await asyncio.gather(*(run_tool(kernel, c, ctx) for c in calls)))
    gate = asyncio.Semaphore(max_concurrency)

    async def gated(c: ToolCall) -> ToolResult:
        async with gate:
            return await run_tool(kernel, c, ctx)

    return list(await asyncio.gather(*(gated(c) for c in calls)))


async def _run(kernel: "Kernel", call: ToolCall, ctx: "RunContext[Any]", started: float) -> tuple[ToolCall, ToolResult]:
    """Validate, vet and execute; return the call as it finally ran (after any rewrite) and its result."""
    if call.refused is not None:  # past the reply's cap (agentkit.callcap)
        return call, _failed(call, "blocked", f"the call was not run: {call.refused}", started, error=call.refused)
    offered = ctx.offered_tools
    if offered is not None and call.name not in offered:
        why = (f"tool {call.name[:200]!r} was not offered to this agent; call only the tools offered this turn "
               f"(offered: {_listed(sorted(offered))})")
        return call, _failed(call, "blocked", f"the call was blocked: {why}", started, error=why)
    tool = kernel.registries["tools"].get(call.name)
    if tool is None and kernel.pending_tools and await kernel.pending_tools.await_(call.name):
        tool = kernel.registries["tools"].get(call.name)  # a source (an MCP server) finished connecting
    if tool is None:
        names = _listed(list(kernel.registries["tools"]))
        return call, _failed(call, "error", f"unknown tool {call.name[:200]!r}; available tools: {names}", started)
    if tool.available is not None and not tool.is_available():
        return call, _failed(call, "error", f"tool {call.name!r} is not available right now (its availability "
                                            "check is false); use another tool or answer without it", started)
    if tool.sensitive and not _asks_humans(kernel):  # no rail would ask a person: never run it unasked
        why = (f"tool {call.name!r} is marked sensitive (a person approves such calls) but no loaded plugin asks "
               "one: load the approval rail (Kernel(plugins=[..., 'zagent.plugins.rails']), or its entry point) "
               "with rails['approver'] set, or register the tool without sensitive=True")
        return call, _failed(call, "blocked", f"the call was blocked: {why}", started, error=why)
    try:
        kwargs = tool.validate(call.arguments)
    except ArgumentsError as exc:
        return call, _failed(call, "error", str(exc), started)
    if kernel.hooks.active("zagent_before_tool_call"):
        plain = tool.rail_arguments(kwargs)
        vetted, reason = await kernel.hooks.before_tool(ToolCall(id=call.id, name=call.name, arguments=plain), ctx)
        if reason is not None:
            return call, _failed(call, "blocked", f"the call was blocked: {reason}", started, error=reason)
        if vetted.arguments != plain:
            call = vetted
            try:
                kwargs = tool.validate(vetted.arguments)
            except ArgumentsError as exc:
                return call, _failed(call, "error", f"a rail rewrote the arguments into invalid ones: {exc}", started)
            secrets = injected(plain, vetted.arguments)  # a vault's credential the model never saw, echoed back
            if secrets is not None:
                return call, masked(await _execute(kernel, tool, call, kwargs, ctx, started), secrets)
    return call, await _execute(kernel, tool, call, kwargs, ctx, started)


def _and_defaults(call: ToolCall, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments and those it ran with (defaults filled in: a secret default, ``api_token=VAULT``, is
    masked in the tool's error too); for ``describe``, on the failure path."""
    return {"call": call.arguments, "ran": kwargs}


def _listed(names: list[str], most: int = 40) -> str:
    """``names`` joined, at most ``most`` of them: 64 blocked calls of a reply must not each list 1,000 tools."""
    shown = ", ".join(n[:200] for n in names[:most]) or "none"
    return shown if len(names) <= most else f"{shown}, ... and {len(names) - most} more"


def _asks_humans(kernel: "Kernel") -> bool:
    """Whether a loaded ``zagent_before_tool_call`` rail asks a person about sensitive tools (``asks_humans``)."""
    return any(getattr(impl[1], ASKS_HUMANS, False) for impl in kernel.hooks.impls("zagent_before_tool_call"))


async def _execute(
    kernel: "Kernel", tool: Tool, call: ToolCall, kwargs: dict[str, Any], ctx: "RunContext[Any]", started: float
) -> ToolResult:
    call_ctx = None
    if tool.ctx_param:
        call_ctx = kwargs[tool.ctx_param] = ctx.for_call(call.id)  # carries call_id / idempotency_key
    try:
        value = await _invoke(kernel, tool, kwargs)
    except _TimedOut as exc:
        return _failed(call, "timeout", str(exc), started)
    except ToolThreadsExhausted as exc:
        return _failed(call, "error", str(exc), started)
    except (TimeoutError, asyncio.TimeoutError):
        return _failed(call, "timeout", f"tool {tool.name!r} did not finish within {tool.timeout:g} s", started)
    except (asyncio.CancelledError, RunStopped):  # a called agent's usage limit ends the whole run
        raise
    except Exception as exc:  # the app's own tokens (kernel config, deps) masked as well
        why = describe(exc, _and_defaults(call, kwargs), run_settings(ctx))
        return _failed(call, "error", f"tool {tool.name!r} raised {why}", started)
    except (SystemExit, KeyboardInterrupt) as exc:  # never past here: they would kill the sync API's loop
        if isinstance(exc, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
            raise  # only the main thread gets SIGINT: elsewhere it came from the tool
        why = describe(exc, _and_defaults(call, kwargs), run_settings(ctx))
        return _failed(call, "error", f"tool {tool.name!r} raised {why}; a tool must return a value or "
                                      "raise an Exception, never exit (reported to the model, not passed on)", started)
    finally:
        if call_ctx is not None and (call_ctx.usage.calls or call_ctx.usage.total_tokens):
            ctx.add_usage(call_ctx.usage)  # e.g. a tool that asked a model with its ctx
    try:
        content = to_text(value)
    except Exception as exc:  # ResultNotText, or anything a hostile value raises while rendered
        why = str(exc) if isinstance(exc, ResultNotText) else f"rendering it raised {describe(exc)}"
        from .._trust.settings import config_masker

        why = config_masker(run_settings(ctx))(why)  # a renderer quoting the app's token
        return _failed(call, "error", f"tool {tool.name!r} returned {why}; it cannot be shown to the model. Return "
                                      "text, numbers, lists or dicts", started)
    return ToolResult(call_id=call.id, name=call.name, state="success", content=content,
                      value=value, duration=time.perf_counter() - started)


async def _invoke(kernel: "Kernel", tool: Tool, kwargs: dict[str, Any]) -> Any:
    timeout = tool.timeout
    probe = None
    if tool.inline is None and not tool.is_async:  # measured: see zagent._tools.threads.InlineProbe
        probe = _probes.get(tool)
        if probe is None:
            short = timeout is not None and timeout < PROMOTE_TIMEOUT  # kept in threads: the timeout holds
            probe = _probes[tool] = InlineProbe(tool.name, None if tool.ctx_param or short else tool.handler)
    if tool.is_async:
        value = tool.handler(**kwargs)
    elif tool.inline or (probe is not None and probe.inline):
        wall = time.perf_counter()
        if probe is None:
            value = tool.handler(**kwargs)
        else:
            begun = time.thread_time()  # CPU: on a loaded machine a quick call can wait long for a core
            try:
                value = tool.handler(**kwargs)
            finally:
                probe.ran_inline(time.thread_time() - begun)
        if timeout is not None and (wall := time.perf_counter() - wall) > timeout:  # never a late success
            if probe is not None:
                probe.ran_inline(float("inf"))  # back to threads for good
            raise _TimedOut(f"tool {tool.name!r} did not finish within {timeout:g} s (it ran {wall:.1f} s on the event "
                            "loop and its result was dropped; it runs in the kernel's tool threads from now on)")
    else:
        threads = kernel.tool_executor()
        job = threads.start(tool.name, tool.handler, kwargs, probe)  # ToolThreadsExhausted: an error result
        try:
            if timeout is None:
                value = await job.future
            elif _timeout_cm is not None:  # no extra task per call (wait_for makes one before 3.12)
                async with _timeout_cm(timeout):
                    value = await job.future
            else:
                value = await asyncio.wait_for(job.future, timeout)
        except (TimeoutError, asyncio.TimeoutError):
            if threads.abandon(job):
                raise _TimedOut(f"tool {tool.name!r} did not finish within {timeout:g} s (it keeps running in "
                                "the background: Python cannot stop a thread; a fresh thread serves the next "
                                "calls)") from None
            raise
        except asyncio.CancelledError:  # the run was cancelled: its thread is given up as at a timeout (capped)
            threads.abandon(job)
            raise
    if hasattr(value, "__await__"):  # an async tool's coroutine, or a sync one's that returned one
        value = await (_bounded(kernel, tool.name, value, timeout) if timeout is not None else value)
    return value


async def _bounded(kernel: "Kernel", name: str, awaitable: Any, timeout: float) -> Any:
    """``await`` in a task of its own, cancelled at ``timeout``; a task that ignores its cancellation for
    ``CANCEL_GRACE`` s is left running (capped per tool, as stuck threads) and the call is a timeout."""
    threads = kernel.tool_executor()
    try:
        threads.check_tasks(name)  # ToolThreadsExhausted: an error result
    except ToolThreadsExhausted:
        getattr(awaitable, "close", lambda: None)()  # never run: no "never awaited" warning
        raise
    loop = asyncio.get_running_loop()
    task = loop.create_task(_contained(awaitable))
    woken = loop.create_future()  # set when the task ends or at the timeout (lighter than asyncio.wait)

    def wake(_: Any = None) -> None:
        if not woken.done():
            woken.set_result(None)

    task.add_done_callback(wake)
    timer = loop.call_later(timeout, wake)
    try:
        await woken
        late = not task.done()
        if late:
            task.cancel()
            await asyncio.wait((task,), timeout=CANCEL_GRACE)
    except asyncio.CancelledError:  # the run was cancelled: so is the call, counted until it ends (capped)
        task.cancel()
        threads.hold_task(name, task)
        raise
    finally:
        timer.cancel()
        task.remove_done_callback(wake)
    if late:  # never a late success, even from a tool that swallowed the cancellation and returned
        if not task.done():
            threads.hold_task(name, task)
            raise _TimedOut(f"tool {name!r} did not finish within {timeout:g} s and ignored its cancellation for "
                            f"{CANCEL_GRACE:g} s more; it keeps running in the background (a tool must let "
                            "asyncio.CancelledError through)")
        if not task.cancelled():
            task.exception()  # retrieved: no "never retrieved" warning
        raise TimeoutError
    try:
        return task.result()
    except _Exited as wrapped:
        raise wrapped.exc from None


class _Exited(Exception):
    """Carries a tool's ``SystemExit``/``KeyboardInterrupt`` out of the task an async tool runs in."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


async def _contained(awaitable: Any) -> Any:
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as exc:  # inside a Task they would also stop the event loop
        raise _Exited(exc) from None


class _TimedOut(TimeoutError):
    """A tool's timeout, said in full: its thread abandoned, its task left running, or its late value dropped."""


def _failed(call: ToolCall, state: str, message: str, started: float, *, error: Optional[str] = None) -> ToolResult:
    message = clean(message)  # a tool's exception text may hold lone surrogates
    return ToolResult(call_id=call.id, name=call.name, state=state,  # type: ignore[arg-type]
                      content=f"Error: {message}", error=clean(error) if error else message,
                      duration=time.perf_counter() - started)
