"""Calling hooks: the plugin manager subclass and ``HookRunner``, which calls rails and events one
implementation at a time in pluggy's order (awaiting awaitables), with implementation lists cached per hook,
and monitors (``add_monitor``) that see every call.
"""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, Sequence

import pluggy

from ..errors import RunStopped, ToolBlocked
from .markers import PROJECT
from .._runs.logs import log
from .rails import Deny, Rewrite
from ..types import Completion, LLMRequest, ToolCall, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext


Impl = tuple[str, Callable[..., Any], tuple[str, ...]]  # (plugin name, function, argnames)
Rail = tuple[str, Callable[..., Any], Optional[tuple[int, ...]]]  # (plugin name, function, pick: see rails())



class PluginManager(pluggy.PluginManager):
    """pluggy's manager, looking only at ``zagent_``-prefixed attributes.

    Unprefixed attributes are never inspected (cheap, no surprises); a
    ``zagent_*`` function counts as an implementation even without the
    ``@hookimpl`` marker, as pytest does for ``pytest_*``.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Optional[pluggy.HookimplOpts]:
        if not name.startswith("zagent_") or name == "zagent_hookspecs":  # the latter declares specs
            return None
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            method = getattr(plugin, name, None)
            if inspect.isroutine(method):
                opts = {}  # type: ignore[assignment]
        return opts


_EVENT_ARGS = ("event",)


class HookRunner:
    """Calls hook implementations one by one; answers "does this hook have any?" fast."""

    def __init__(self, pm: PluginManager):
        self.pm = pm
        self._impls: dict[str, tuple[Impl, ...]] = {}
        self._rails: dict[str, tuple[Rail, ...]] = {}
        self._monitors: list[Callable[[str, str, dict[str, Any], Any], None]] = []

    def invalidate(self) -> None:
        self._impls.clear()
        self._rails.clear()

    def impls(self, hook_name: str) -> tuple[Impl, ...]:
        cached = self._impls.get(hook_name)
        if cached is None:
            caller = getattr(self.pm.hook, hook_name, None)
            found = caller.get_hookimpls() if caller is not None else []
            cached = tuple((i.plugin_name, i.function, tuple(i.argnames)) for i in reversed(found))
            self._impls[hook_name] = cached
        return cached

    def active(self, hook_name: str) -> bool:
        cached = self._impls.get(hook_name)
        return bool(cached if cached is not None else self.impls(hook_name))

    def add_monitor(self, fn: Callable[[str, str, dict[str, Any], Any], None]) -> Callable[[], None]:
        """Call ``fn(hook_name, plugin_name, kwargs, result)`` after each implementation; returns an undo.

        ``result`` is what the implementation returned (awaited, for rails,
        events and ``zagent_kernel_close``), or the exception it raised.
        """
        self._monitors.append(fn)
        return lambda: self._monitors.remove(fn) if fn in self._monitors else None

    def call_one(self, hook_name: str, impl: Impl, kwargs: dict[str, Any]) -> Any:
        """Call one implementation of a plain (sync) hook, e.g. a registration hook."""
        plugin, fn, argnames = impl
        try:
            result = fn(*[kwargs[a] for a in argnames])
        except Exception as exc:
            self._notify(hook_name, plugin, kwargs, exc)
            raise
        if self._monitors:
            self._notify(hook_name, plugin, kwargs, result)
        return result

    async def acall_one(self, hook_name: str, impl: Impl, kwargs: dict[str, Any]) -> Any:
        """Call one implementation that may return an awaitable, and await it."""
        plugin, fn, argnames = impl
        try:
            result = fn(*[kwargs[a] for a in argnames])
            if hasattr(result, "__await__"):  # inline, not maybe_await(): no coroutine per call
                result = await result
        except Exception as exc:
            self._notify(hook_name, plugin, kwargs, exc)
            raise
        if self._monitors:
            self._notify(hook_name, plugin, kwargs, result)
        return result

    def _notify(self, hook_name: str, plugin: str, kwargs: dict[str, Any], result: Any) -> None:
        for monitor in list(self._monitors):
            monitor(hook_name, plugin, kwargs, result)

    async def emit(self, event: Any) -> None:
        """Run every ``zagent_event`` implementation; observers never break a run."""
        pending = self.dispatch(self.impls("zagent_event"), event)
        if pending is not None:
            await pending

    def dispatch(self, observers: tuple[Impl, ...], event: Any) -> Optional[Awaitable[None]]:
        """Hand ``event`` to ``observers`` (``impls("zagent_event")``) in turn; an observer's failure is logged,
        never raised (observers never break a run).

        Plain function: a sync observer costs a call, no coroutine. When one returns an awaitable, the
        rest (that awaitable first) comes back as one coroutine for the caller to await, so an async
        observer still finishes before the next observer sees the event."""
        for impl in observers:
            plugin, fn, argnames = impl
            try:
                result = fn(event) if argnames == _EVENT_ARGS else fn(*[{"event": event}[a] for a in argnames])
            except Exception as exc:  # an observer's bug must not stop the run
                self._observer_failed(plugin, event, exc)
                continue
            if result is not None and hasattr(result, "__await__"):
                return self._dispatch_rest(observers, event, impl, result)
            if self._monitors:
                self._notify("zagent_event", plugin, {"event": event}, result)
        return None

    async def _dispatch_rest(self, observers: tuple[Impl, ...], event: Any, impl: Impl,
                             awaiting: Optional[Awaitable[Any]]) -> None:
        """``dispatch`` on from observer ``impl``, whose answer ``awaiting`` is awaited first."""
        for plugin, fn, argnames in observers[observers.index(impl):]:
            try:
                if awaiting is not None:
                    first, awaiting = awaiting, None
                    result = await first
                else:
                    result = fn(event) if argnames == _EVENT_ARGS else fn(*[{"event": event}[a] for a in argnames])
                    if result is not None and hasattr(result, "__await__"):
                        result = await result
            except Exception as exc:
                self._observer_failed(plugin, event, exc)
                continue
            if self._monitors:
                self._notify("zagent_event", plugin, {"event": event}, result)

    def _observer_failed(self, plugin: str, event: Any, exc: Exception) -> None:
        if self._monitors:
            self._notify("zagent_event", plugin, {"event": event}, exc)
        log.exception("zagent_event observer in plugin %r failed", plugin)

    async def run_end(self, result: Any, ctx: "RunContext[Any]") -> None:
        """Run every ``zagent_run_end`` implementation; one that fails is logged, the run keeps its result."""
        kwargs = {"result": result, "ctx": ctx}
        for impl in self.impls("zagent_run_end"):
            try:
                await self.acall_one("zagent_run_end", impl, kwargs)
            except Exception:
                log.exception("zagent_run_end in plugin %r failed", impl[0])

    def rails(self, hook_name: str) -> tuple[Rail, ...]:
        """The implementations of rail hook ``hook_name`` as ``(plugin, function, pick)``, cached like ``impls``.

        ``pick`` is ``None`` when the implementation takes the spec's arguments in the spec's order (the
        usual case: called as ``function(*args)``, no dict per call), else the positions of the ones it
        takes, in its order."""
        cached = self._rails.get(hook_name)
        if cached is None:
            names = self._arg_names(hook_name)
            cached = self._rails[hook_name] = tuple(
                (plugin, fn, None if argnames == names else tuple(names.index(a) for a in argnames))
                for plugin, fn, argnames in self.impls(hook_name))
        return cached

    def _arg_names(self, hook_name: str) -> tuple[str, ...]:
        """The spec's argument names of ``hook_name``, in its order (what rails are called with, positionally)."""
        return tuple(getattr(self.pm.hook, hook_name).spec.argnames)

    def _kwargs(self, hook_name: str, args: Sequence[Any]) -> dict[str, Any]:
        """A rail call's arguments by name (for monitors and failures; the call itself is positional)."""
        return dict(zip(self._arg_names(hook_name), args))

    async def run_rails(self, hook_name: str, args: list[Any], verdict: Callable[[str, Any, list[Any]], Any],
                        failed: Callable[[str, Exception, list[Any]], Any]) -> Any:
        """The one rail loop: call each rail of ``hook_name`` in order with ``args`` (the spec's arguments; a
        verdict may replace ``args[i]`` for the rails after it), awaiting what is awaitable.

        A rail's value goes to ``verdict(plugin, value, args)`` (``None`` passes), an exception to
        ``failed(plugin, exc, args)`` (which may raise), after the monitors saw it. The first of them to
        return something other than ``None`` ends the loop with it; ``None`` when every rail let it pass."""
        for plugin, fn, pick in self.rails(hook_name):
            try:  # no coroutine per rail
                value = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(value, "__await__"):
                    value = await value
            except Exception as exc:
                self._notify(hook_name, plugin, self._kwargs(hook_name, args), exc)
                done = failed(plugin, exc, args)
            else:
                if self._monitors:
                    self._notify(hook_name, plugin, self._kwargs(hook_name, args), value)
                done = None if value is None else verdict(plugin, value, args)
            if done is not None:
                return done
        return None

    async def before_tool(self, call: "ToolCall", ctx: "RunContext[Any]") -> tuple["ToolCall", Optional[str]]:
        """Run ``zagent_before_tool_call`` rails; return the (maybe rewritten) call and a deny reason."""
        args: list[Any] = [call, ctx]
        reason = await self.run_rails("zagent_before_tool_call", args, _call_verdict, _call_blocked)
        return args[0], reason

    async def after_tool(self, call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> "ToolResult":
        """Run ``zagent_after_tool_call`` rails; return the (maybe replaced or withheld) result."""
        args: list[Any] = [call, result, ctx]
        await self.run_rails("zagent_after_tool_call", args, _result_verdict, _result_withheld)
        return args[1]  # type: ignore[no-any-return]

    async def before_llm(self, request: "LLMRequest", ctx: "RunContext[Any]") -> "LLMRequest":
        """Run ``zagent_before_llm_call`` rails; return the (maybe replaced) request, or raise ``ToolBlocked``."""
        args: list[Any] = [request, ctx]
        await self.run_rails("zagent_before_llm_call", args, _request_verdict, _request_blocked)
        return args[0]  # type: ignore[no-any-return]

    async def after_llm(self, request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> "Completion":
        """Run ``zagent_after_llm_call`` rails; return the (maybe replaced) reply, or raise ``ToolBlocked``."""
        args: list[Any] = [request, response, ctx]
        await self.run_rails("zagent_after_llm_call", args, _reply_verdict, _reply_withheld)
        return args[1]  # type: ignore[no-any-return]


# What each rail hook makes of a rail's value or failure (``HookRunner.run_rails``'s ``verdict``/``failed``).

def _failure(plugin: str, exc: Exception) -> str:
    """A rail that raised fails closed: a reason naming it; a ``RunStopped`` (a usage limit...) ends the run."""
    if isinstance(exc, RunStopped):
        raise exc
    log.exception("rail %r raised", plugin)
    return f"rail {plugin!r} failed ({type(exc).__name__}: {exc}); the call was blocked"


def _call_verdict(plugin: str, verdict: Any, args: list[Any]) -> Optional[str]:
    if isinstance(verdict, Deny):
        return verdict.reason
    if isinstance(verdict, Rewrite):
        if not isinstance(verdict.arguments, dict):
            return f"rail {plugin!r} rewrote the arguments into a {type(verdict.arguments).__name__}; Rewrite needs a dict"
        call = args[0]
        args[0] = ToolCall(id=call.id, name=call.name, arguments=dict(verdict.arguments))
        return None
    return f"rail {plugin!r} returned {type(verdict).__name__}; expected None, Deny or Rewrite"


def _call_blocked(plugin: str, exc: Exception, args: list[Any]) -> str:
    return _failure(plugin, exc)


def _withheld(args: list[Any], reason: str, content: str) -> None:
    call, result = args[0], args[1]
    args[1] = ToolResult(call_id=call.id, name=call.name, state="blocked", content=content, error=reason,
                         duration=result.duration)


def _result_verdict(plugin: str, new: Any, args: list[Any]) -> None:
    if isinstance(new, ToolResult):
        args[1] = new
    else:  # a rail bug: withhold rather than guess (fail closed)
        reason = f"rail {plugin!r} returned {type(new).__name__}; expected None or a ToolResult"
        _withheld(args, reason, f"Error: the result was withheld because {reason}")


def _result_withheld(plugin: str, exc: Exception, args: list[Any]) -> None:
    log.exception("after-tool rail %r failed", plugin)
    _withheld(args, f"rail {plugin!r} failed: {exc}",
              f"Error: the result was withheld because rail {plugin!r} failed: {exc}")


def _request_verdict(plugin: str, verdict: Any, args: list[Any]) -> None:
    if isinstance(verdict, Deny):
        raise ToolBlocked(verdict.reason, rail=plugin)
    if isinstance(verdict, LLMRequest):
        args[0] = verdict


def _request_blocked(plugin: str, exc: Exception, args: list[Any]) -> None:
    raise ToolBlocked(_failure(plugin, exc), rail=plugin)


def _reply_verdict(plugin: str, new: Any, args: list[Any]) -> None:
    if isinstance(new, Completion):
        args[1] = new


def _reply_withheld(plugin: str, exc: Exception, args: list[Any]) -> None:
    if isinstance(exc, RunStopped):
        raise exc
    raise ToolBlocked(f"rail {plugin!r} failed ({type(exc).__name__}: {exc}); the model's reply was withheld",
                      rail=plugin) from exc

def has_impls(kernel: Any, hook_name: str) -> bool:
    """``Kernel.has_impls``: whether any plugin implements hook ``hook_name`` (a dict look-up once cached),
    e.g. to skip building events nobody observes."""
    runner: HookRunner = kernel.hooks
    return runner.active(hook_name)


def call_each(kernel: Any, hook_name: str,
              kwargs: Callable[[str], dict[str, Any]]) -> list[tuple[str, Any, Optional[Exception]]]:
    """``Kernel.call_each``: call every implementation of plain hook ``hook_name`` in pluggy's order with
    ``kwargs(plugin_name)``; return ``(plugin, result, None)`` or ``(plugin, None, error)`` for each, so one
    that raises does not stop the others (the caller decides what a failure means)."""
    runner: HookRunner = kernel.hooks
    out: list[tuple[str, Any, Optional[Exception]]] = []
    for impl in runner.impls(hook_name):
        try:
            out.append((impl[0], runner.call_one(hook_name, impl, kwargs(impl[0])), None))
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            out.append((impl[0], None, exc))
    return out


async def arun_end(kernel: Any, result: Any, ctx: "RunContext[Any]") -> None:
    """``Kernel.arun_end``: run every ``zagent_run_end`` implementation for a finished run (an engine calls
    it once per run); one that fails is logged and the run keeps its result."""
    if kernel.hooks.active("zagent_run_end"):
        await kernel.hooks.run_end(result, ctx)


def trace_to_stderr(hook_name: str, plugin: str, kwargs: dict[str, Any], result: Any) -> None:
    """Monitor installed by ``ZAGENT_TRACE_HOOKS=1``: one line per implementation call."""
    args = ", ".join(sorted(kwargs))
    print(f"[zagent] {hook_name}({args}) <- {plugin} => {type(result).__name__}", file=sys.stderr)


__all__ = ["PluginManager", "HookRunner", "PROJECT"]
