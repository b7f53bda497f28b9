"""Calling hooks: ``PluginManager`` (pluggy's, reading ``zagent_*`` names only) and ``HookRunner``, which calls
rails and events one implementation at a time in pluggy's order, awaiting awaitables, and tells monitors."""

from __future__ import annotations

import inspect
import sys
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional

import pluggy

from ..errors import RunStopped, ToolBlocked
from .._runs.logs import log
from .._tools.results import describe
from .specs import PROJECT, Deny, Rewrite
from ..types import Completion, LLMRequest, ToolCall, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext


#: (plugin name, function, its argnames, pick: ``None`` when they are the spec's, in order, else their positions)
Impl = tuple[str, Callable[..., Any], tuple[str, ...], Optional[tuple[int, ...]]]
Verdict = Callable[[str, Any, bool, list[Any]], Any]  # see run_rails


class PluginManager(pluggy.PluginManager):
    """pluggy's manager reading only ``zagent_*`` attributes; such a function is an implementation, marked or not."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Optional[pluggy.HookimplOpts]:
        if not name.startswith("zagent_") or name == "zagent_hookspecs":  # the latter declares specs
            return None
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and inspect.isroutine(getattr(plugin, name, None)):
            opts = {}  # type: ignore[assignment]
        return opts


class HookRunner:
    """Calls hook implementations one by one, their lists cached per hook until ``invalidate``."""

    def __init__(self, pm: PluginManager, config: Optional[dict[str, Any]] = None):
        self.pm = pm
        self.config = config  # the kernel's, to mask the tokens in it when an observer fails quoting one
        self._impls: dict[str, tuple[Impl, ...]] = {}
        self._monitors: list[Callable[[str, str, dict[str, Any], Any], None]] = []

    def invalidate(self) -> None:
        self._impls.clear()

    def impls(self, hook_name: str) -> tuple[Impl, ...]:
        cached = self._impls.get(hook_name)
        if cached is None:
            caller = getattr(self.pm.hook, hook_name, None)
            found = caller.get_hookimpls() if caller is not None else []
            spec = getattr(caller, "spec", None)
            names = tuple(spec.argnames) if spec is not None else None
            cached = self._impls[hook_name] = tuple((i.plugin_name, i.function, tuple(i.argnames),
                                                     _pick(tuple(i.argnames), names)) for i in reversed(found))
        return cached

    def active(self, hook_name: str) -> bool:
        cached = self._impls.get(hook_name)
        return bool(cached if cached is not None else self.impls(hook_name))

    def add_monitor(self, fn: Callable[[str, str, dict[str, Any], Any], None]) -> Callable[[], None]:
        """Call ``fn(hook_name, plugin_name, kwargs, result)`` after each implementation call (``result``
        awaited, or the exception raised); returns an undo."""
        self._monitors.append(fn)
        return lambda: self._monitors.remove(fn) if fn in self._monitors else None

    def call_one(self, hook_name: str, impl: Impl, kwargs: dict[str, Any]) -> Any:
        """Call one implementation of a plain (sync) hook, e.g. a registration hook."""
        plugin, fn, argnames, _ = impl
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
        plugin, fn, argnames, _ = impl
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

    def dispatch(self, observers: tuple[Impl, ...], event: Any) -> Optional[Awaitable[None]]:
        """Hand ``event`` to ``observers`` in turn (a failure is logged); from the first that returns an awaitable
        on, the rest is a coroutine to await, else ``None``."""
        for i, (plugin, fn, argnames, _) in enumerate(observers):
            try:
                result = fn(event) if argnames else fn()
            except Exception as exc:  # an observer's bug must not stop the run
                self._observer_failed(plugin, event, exc)
                continue
            if result is not None and hasattr(result, "__await__"):
                return self._dispatch_rest(observers[i:], event, result)
            if self._monitors:
                self._notify("zagent_event", plugin, {"event": event}, result)
        return None

    async def _dispatch_rest(self, observers: tuple[Impl, ...], event: Any, first: Any) -> None:
        for plugin, fn, argnames, _ in observers:  # one coroutine for all the rest; ``first``: the first's awaitable
            try:
                result, first = (first if first is not None else fn(event) if argnames else fn()), None
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
        from .._trust.secrets import mask_exception
        from .._trust.settings import config_masker

        mask_exception(exc, config_masker(self.config))  # an exporter quoting the token the app configured
        log.exception("zagent_event observer in plugin %r failed", plugin)

    def _kwargs(self, hook_name: str, args: list[Any]) -> dict[str, Any]:
        return dict(zip(getattr(self.pm.hook, hook_name).spec.argnames, args))

    async def run_rails(self, hook_name: str, args: list[Any], verdict: Verdict) -> Any:
        """The one rail loop: each rail's value (unless ``None``) or exception goes to ``verdict(plugin, value,
        raised, args)``, which may replace ``args[i]`` for the next rails; the first verdict not ``None`` ends it."""
        for plugin, fn, _, pick in self.impls(hook_name):
            raised = False
            try:  # no coroutine per rail
                value = fn(*args) if pick is None else fn(*[args[i] for i in pick])
                if hasattr(value, "__await__"):
                    value = await value
            except Exception as exc:
                _mask_settings(exc, args[-1])  # a policy service quoting the app's config or deps token
                self._notify(hook_name, plugin, self._kwargs(hook_name, args), exc)
                value, raised = exc, True
            else:
                if self._monitors:
                    self._notify(hook_name, plugin, self._kwargs(hook_name, args), value)
                if value is None:
                    continue
            done = verdict(plugin, value, raised, args)  # outside ``except``: what it raises does not chain ``exc``
            if done is not None:
                return done
        return None

    async def before_tool(self, call: ToolCall, ctx: "RunContext[Any]") -> tuple[ToolCall, Optional[str]]:
        """``zagent_before_tool_call``: the (maybe rewritten) call and the deny reason (``None``: allowed)."""
        args: list[Any] = [call, ctx]
        reason = await self.run_rails("zagent_before_tool_call", args, _before_tool)
        return args[0], reason

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: "RunContext[Any]") -> ToolResult:
        """``zagent_after_tool_call``: the (maybe replaced or withheld) result."""
        args: list[Any] = [call, result, ctx]
        await self.run_rails("zagent_after_tool_call", args, _after_tool)
        return args[1]  # type: ignore[no-any-return]

    async def before_llm(self, request: LLMRequest, ctx: "RunContext[Any]") -> LLMRequest:
        """``zagent_before_llm_call``: the (maybe replaced) request; ``ToolBlocked`` when a rail denies it."""
        args: list[Any] = [request, ctx]
        await self.run_rails("zagent_before_llm_call", args, _before_llm)
        return args[0]  # type: ignore[no-any-return]

    async def after_llm(self, request: LLMRequest, response: Completion, ctx: "RunContext[Any]") -> Completion:
        """``zagent_after_llm_call``: the (maybe replaced) reply; ``ToolBlocked`` when a rail fails."""
        args: list[Any] = [request, response, ctx]
        await self.run_rails("zagent_after_llm_call", args, _after_llm)
        return args[1]  # type: ignore[no-any-return]


def _pick(argnames: tuple[str, ...], names: Optional[tuple[str, ...]]) -> Optional[tuple[int, ...]]:
    """``None`` when ``argnames`` are the spec's ``names`` in order (called ``fn(*args)``), else their positions."""
    return None if names is None or argnames == names else tuple(names.index(a) for a in argnames)


# The verdicts of the four rail hooks (``HookRunner.run_rails``); a rail that raised fails closed.

def _mask_settings(exc: BaseException, ctx: Any) -> None:
    """Mask in place, in ``exc`` and what it chains, the secrets of the kernel's config and of the run's deps of
    ``ctx`` (a rail's or guardrail's failure is shown to the model, logged and raised): error path only."""
    from .._trust.secrets import mask_exception
    from .._trust.settings import config_masker, run_settings

    mask_exception(exc, config_masker(run_settings(ctx)))


def _failure(plugin: str, exc: Exception, arguments: Any = None) -> str:
    """The reason naming a rail that raised, described as a tool's exception is (secrets and the call's secret
    ``arguments`` masked: the model reads it); a ``RunStopped`` (a usage limit...) ends the run instead."""
    if isinstance(exc, RunStopped):
        raise exc
    log.error("rail %r raised", plugin, exc_info=exc)
    return f"rail {plugin!r} failed ({describe(exc, arguments)}); the call was blocked"


def _before_tool(plugin: str, value: Any, raised: bool, args: list[Any]) -> Optional[str]:
    if raised:
        return _failure(plugin, value, args[0].arguments)  # an earlier rail may have put a credential there
    if isinstance(value, Deny):
        return value.reason
    if not isinstance(value, Rewrite):
        _discard(value)
        return f"rail {plugin!r} returned {type(value).__name__}; expected None, Deny or Rewrite"
    if not isinstance(value.arguments, dict):
        return f"rail {plugin!r} rewrote the arguments into a {type(value.arguments).__name__}; Rewrite needs a dict"
    args[0] = ToolCall(id=args[0].id, name=args[0].name, arguments=dict(value.arguments))
    return None


def _after_tool(plugin: str, value: Any, raised: bool, args: list[Any]) -> None:
    if not raised and isinstance(value, ToolResult):
        args[1] = value
        return
    if raised:
        log.error("after-tool rail %r failed", plugin, exc_info=value)
        shown = describe(value, args[0].arguments).partition(": ")[2]
        reason = f"rail {plugin!r} failed: {shown or type(value).__name__}"
    else:  # a rail bug: withhold rather than guess
        _discard(value)
        reason = f"rail {plugin!r} returned {type(value).__name__}; expected None or a ToolResult"
    call = args[0]
    args[1] = ToolResult(call_id=call.id, name=call.name, state="blocked", error=reason,
                         content=f"Error: the result was withheld because {reason}", duration=args[1].duration)


def _before_llm(plugin: str, value: Any, raised: bool, args: list[Any]) -> None:
    if raised or isinstance(value, Deny):
        raise ToolBlocked(_failure(plugin, value) if raised else value.reason, rail=plugin) \
            from (_shown_cause(value) if raised else None)
    if not isinstance(value, LLMRequest):  # a rail bug (an un-awaited check, a verdict of its own): never a pass
        _discard(value)
        raise ToolBlocked(f"rail {plugin!r} returned {type(value).__name__}; expected None, an LLMRequest or "
                          "zagent.Deny(reason): the request was not sent", rail=plugin)
    args[0] = value


def _after_llm(plugin: str, value: Any, raised: bool, args: list[Any]) -> None:
    if not raised:
        if not isinstance(value, Completion):  # a rail bug: withhold rather than guess
            _discard(value)
            raise ToolBlocked(f"rail {plugin!r} returned {type(value).__name__}; expected None or a Completion: the "
                              "model's reply was withheld", rail=plugin)
        args[1] = value
        return
    if isinstance(value, RunStopped):
        raise value
    raise ToolBlocked(f"rail {plugin!r} failed ({describe(value)}); the model's reply was withheld",
                      rail=plugin) from _shown_cause(value)


def _shown_cause(exc: BaseException) -> Optional[BaseException]:
    """``exc`` as the cause of the ``ToolBlocked`` it led to, unless its traceback (its message, causes, notes,
    an exception group's members) holds a secret ``mask_env`` masks (an app logging the error shows them)."""
    import traceback

    from .._trust.secrets import mask_env

    text = "".join(traceback.format_exception(exc))
    return exc if mask_env(text) == text else None


def _discard(value: Any) -> None:
    """Close a coroutine a rail returned un-awaited (its check never runs; no "never awaited" warning later)."""
    if inspect.iscoroutine(value):
        value.close()


def has_impls(kernel: Any, hook_name: str) -> bool:
    """``Kernel.has_impls``: whether any plugin implements hook ``hook_name`` (one dict look-up once cached)."""
    return bool(kernel.hooks.active(hook_name))


def call_each(kernel: Any, hook_name: str,
              kwargs: Callable[[str], dict[str, Any]]) -> list[tuple[str, Any, Optional[Exception]]]:
    """``Kernel.call_each``: each implementation of plain hook ``hook_name``, in order, with ``kwargs(plugin)``;
    ``(plugin, result, None)`` or ``(plugin, None, error)`` for each (one that raises does not stop the rest)."""
    runner: HookRunner = kernel.hooks
    out: list[tuple[str, Any, Optional[Exception]]] = []
    for impl in runner.impls(hook_name):
        try:
            out.append((impl[0], runner.call_one(hook_name, impl, kwargs(impl[0])), None))
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            out.append((impl[0], None, exc))
    return out


async def arun_end(kernel: Any, result: Any, ctx: "RunContext[Any]") -> None:
    """``Kernel.arun_end``: every ``zagent_run_end`` for a finished run; one that fails is logged."""
    runner: HookRunner = kernel.hooks
    kwargs = {"result": result, "ctx": ctx}
    for impl in runner.impls("zagent_run_end"):
        try:
            await runner.acall_one("zagent_run_end", impl, kwargs)
        except Exception as exc:
            from .._trust.secrets import mask_exception
            from .._trust.settings import config_masker

            mask_exception(exc, config_masker(getattr(kernel, "config", None)))  # the token the app gave the plugin
            log.exception("zagent_run_end in plugin %r failed", impl[0])


def trace_to_stderr(hook_name: str, plugin: str, kwargs: dict[str, Any], result: Any) -> None:
    """Monitor installed by ``ZAGENT_TRACE_HOOKS=1``: one line per implementation call."""
    print(f"[zagent] {hook_name}({', '.join(sorted(kwargs))}) <- {plugin} => {type(result).__name__}", file=sys.stderr)


__all__ = ["PluginManager", "HookRunner", "PROJECT"]
