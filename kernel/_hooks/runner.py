"""Calling hooks: the plugin manager subclass and ``HookRunner``.

pluggy has no async and calls all implementations in one go, so zagent calls
rails and events itself, one implementation at a time, in pluggy's order
(``tryfirst``, then last registered first, then ``trylast``): each rail sees
what the previous one decided and awaitables are awaited. Implementation lists
are cached per hook and dropped whenever a plugin is (un)registered, so a
hook with no implementation costs one dict look-up on the hot path.

Monitors (``HookRunner.add_monitor``) see every implementation call; the
testing kit's recorder and ``ZAGENT_TRACE_HOOKS=1`` use them.
"""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

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

    def _kwargs(self, hook_name: str, args: tuple[Any, ...]) -> dict[str, Any]:
        """A rail call's arguments by name (for monitors and failures; the call itself is positional)."""
        return dict(zip(self._arg_names(hook_name), args))

    async def before_tool(self, call: "ToolCall", ctx: "RunContext[Any]") -> tuple["ToolCall", Optional[str]]:
        """Run ``zagent_before_tool_call`` rails; return the (maybe rewritten) call and a deny reason."""
        for plugin, fn, pick in self.rails("zagent_before_tool_call"):
            args = (call, ctx)
            try:  # inlined: no coroutine per rail and call
                verdict = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(verdict, "__await__"):
                    verdict = await verdict
            except Exception as exc:
                verdict = self._rail_failed("zagent_before_tool_call", plugin, self._kwargs("zagent_before_tool_call", args),
                                            exc)
            else:
                if self._monitors:
                    self._notify("zagent_before_tool_call", plugin, self._kwargs("zagent_before_tool_call", args),
                                 verdict)
            if verdict is None:
                continue
            if isinstance(verdict, Deny):
                return call, verdict.reason
            if isinstance(verdict, Rewrite):
                if not isinstance(verdict.arguments, dict):
                    return call, (f"rail {plugin!r} rewrote the arguments into a "
                                  f"{type(verdict.arguments).__name__}; Rewrite needs a dict")
                call = ToolCall(id=call.id, name=call.name, arguments=dict(verdict.arguments))
            else:
                return call, f"rail {plugin!r} returned {type(verdict).__name__}; expected None, Deny or Rewrite"
        return call, None

    async def after_tool(self, call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> "ToolResult":
        for plugin, fn, pick in self.rails("zagent_after_tool_call"):
            args = (call, result, ctx)
            try:  # inlined: no coroutine per rail and call
                new = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(new, "__await__"):
                    new = await new
            except Exception as exc:
                self._notify("zagent_after_tool_call", plugin, self._kwargs("zagent_after_tool_call", args), exc)
                log.exception("after-tool rail %r failed", plugin)
                new = ToolResult(call_id=call.id, name=call.name, state="blocked",
                                 content=f"Error: the result was withheld because rail {plugin!r} failed: {exc}",
                                 error=f"rail {plugin!r} failed: {exc}", duration=result.duration)
            else:
                if self._monitors:
                    self._notify("zagent_after_tool_call", plugin, self._kwargs("zagent_after_tool_call", args), new)
            if new is None:
                continue
            if isinstance(new, ToolResult):
                result = new
            else:  # a rail bug: withhold rather than guess (fail closed)
                reason = f"rail {plugin!r} returned {type(new).__name__}; expected None or a ToolResult"
                result = ToolResult(call_id=call.id, name=call.name, state="blocked",
                                    content=f"Error: the result was withheld because {reason}",
                                    error=reason, duration=result.duration)
        return result

    async def before_llm(self, request: "LLMRequest", ctx: "RunContext[Any]") -> "LLMRequest":
        for plugin, fn, pick in self.rails("zagent_before_llm_call"):
            args = (request, ctx)
            try:  # inlined: no coroutine per rail and call
                verdict = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(verdict, "__await__"):
                    verdict = await verdict
            except Exception as exc:
                verdict = self._rail_failed("zagent_before_llm_call", plugin, self._kwargs("zagent_before_llm_call", args),
                                            exc)
            else:
                if self._monitors:
                    self._notify("zagent_before_llm_call", plugin, self._kwargs("zagent_before_llm_call", args),
                                 verdict)
            if verdict is None:
                continue
            if isinstance(verdict, Deny):
                raise ToolBlocked(verdict.reason, rail=plugin)
            if isinstance(verdict, LLMRequest):
                request = verdict
        return request

    async def after_llm(self, request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> "Completion":
        for plugin, fn, pick in self.rails("zagent_after_llm_call"):
            args = (request, response, ctx)
            try:  # inlined: no coroutine per rail and call
                new = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(new, "__await__"):
                    new = await new
            except RunStopped:
                raise
            except Exception as exc:  # an output rail that fails withholds the reply (fail closed)
                self._notify("zagent_after_llm_call", plugin, self._kwargs("zagent_after_llm_call", args), exc)
                raise ToolBlocked(f"rail {plugin!r} failed ({type(exc).__name__}: {exc}); the model's reply "
                                  "was withheld", rail=plugin) from exc
            if self._monitors:
                self._notify("zagent_after_llm_call", plugin, self._kwargs("zagent_after_llm_call", args), new)
            if isinstance(new, Completion):
                response = new
        return response

    def _rail_failed(self, hook_name: str, plugin: str, kwargs: dict[str, Any], exc: Exception) -> Deny:
        """What a rail that raised decides: deny (fail closed), with a reason naming the rail; a
        ``RunStopped`` (a usage limit...) is raised on, ending the run."""
        if isinstance(exc, RunStopped):
            raise exc
        self._notify(hook_name, plugin, kwargs, exc)
        log.exception("rail %r raised", plugin)
        return Deny(f"rail {plugin!r} failed ({type(exc).__name__}: {exc}); the call was blocked")


def trace_to_stderr(hook_name: str, plugin: str, kwargs: dict[str, Any], result: Any) -> None:
    """Monitor installed by ``ZAGENT_TRACE_HOOKS=1``: one line per implementation call."""
    args = ", ".join(sorted(kwargs))
    print(f"[zagent] {hook_name}({args}) <- {plugin} => {type(result).__name__}", file=sys.stderr)


__all__ = ["PluginManager", "HookRunner", "PROJECT"]
