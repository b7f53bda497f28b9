"""``HookRecorder``: record hook implementation calls on a kernel (``HookCall``) and assert on them in one line.
By default a passive *spy* plugin sees every rail, event and lifecycle hook call as the kernel passed it, one
record per hook call; record registration hooks by adding plugins after the recorder (docs/testing.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Optional, Union

from ..hookspecs import hookimpl

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import Completion, Event, LLMRequest, ToolCall, ToolResult

SPY_NAME = "zagent-testing-recorder"


class HookCall(NamedTuple):
    """One implementation call: the hook, the plugin, the keyword arguments, its return value."""

    hook: str
    plugin: str
    kwargs: dict[str, Any]
    result: Any

    def __getattr__(self, name: str) -> Any:  # call.call, call.ctx, call.event ...
        try:
            return self.kwargs[name]
        except KeyError:
            raise AttributeError(f"{self.hook} was not called with argument {name!r}") from None


class _Spy:
    """Passive implementations of the non-registration hooks; always ``None``."""

    __name__ = SPY_NAME

    @hookimpl(tryfirst=True)
    def zagent_before_tool_call(self, call: "ToolCall", ctx: "RunContext[Any]") -> None:  # noqa: ARG002
        return None

    @hookimpl(tryfirst=True)
    def zagent_after_tool_call(self, call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> None:  # noqa: ARG002
        return None

    @hookimpl(tryfirst=True)
    def zagent_before_llm_call(self, request: "LLMRequest", ctx: "RunContext[Any]") -> None:  # noqa: ARG002
        return None

    @hookimpl(tryfirst=True)
    def zagent_after_llm_call(self, request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> None:  # noqa: ARG002
        return None

    @hookimpl(tryfirst=True)
    def zagent_event(self, event: "Event") -> None:  # noqa: ARG002
        return None

    @hookimpl(tryfirst=True)
    def zagent_kernel_close(self, kernel: "Kernel") -> None:  # noqa: ARG002
        return None


Matcher = Union[Any, Callable[[Any], bool]]


class HookRecorder:
    """Records hook implementation calls on ``kernel`` until ``finish_recording()``.

    :param kernel: the kernel to watch.
    :param spy: also register the passive spy plugin (see the module docstring).
    """

    def __init__(self, kernel: Any, *, spy: bool = True):
        self.kernel = kernel
        self.calls: list[HookCall] = []
        self._undo: Optional[Callable[[], None]] = kernel.hooks.add_monitor(self._record)
        self._spy: Optional[_Spy] = None
        self.spied = spy
        if spy:
            self._spy = _Spy()
            kernel.pm.register(self._spy, name=SPY_NAME)
            kernel.hooks.invalidate()

    def _record(self, hook: str, plugin: str, kwargs: dict[str, Any], result: Any) -> None:
        self.calls.append(HookCall(hook, plugin, dict(kwargs), result))

    def getcalls(self, names: Union[str, Iterable[str]], *, plugin: Optional[str] = None) -> list[HookCall]:
        """Calls of the given hook(s) (a name, space-separated names or a list), in order."""
        wanted = set(names.split()) if isinstance(names, str) else set(names)
        calls = [c for c in self.calls if c.hook in wanted]
        if plugin is not None:
            return [c for c in calls if c.plugin == plugin]
        if self.spied and any(c.plugin == SPY_NAME for c in calls):
            return [c for c in calls if c.plugin == SPY_NAME or c.hook.startswith("zagent_register_")]
        return calls

    def matching(self, hook: str, **match: Matcher) -> list[HookCall]:
        """Calls of ``hook`` whose arguments equal (or satisfy, for callables) every ``match``."""
        return [c for c in self.getcalls(hook) if all(_matches(c.kwargs.get(k, _MISSING), v) for k, v in match.items())]

    def called(self, hook: str, **match: Matcher) -> bool:
        return bool(self.matching(hook, **match))

    def assert_called(self, hook: str, **match: Matcher) -> HookCall:
        """Assert ``hook`` was called with matching arguments; return the first matching call."""
        found = self.matching(hook, **match)
        if not found:
            seen = "\n".join(f"  {c.plugin}: {c.kwargs!r}" for c in self.getcalls(hook)) or "  (never called)"
            raise AssertionError(f"{hook} was not called with {match!r}; calls seen:\n{seen}")
        return found[0]

    def assert_not_called(self, hook: str, **match: Matcher) -> None:
        found = self.matching(hook, **match)
        if found:
            raise AssertionError(f"{hook} was called {len(found)} time(s) with {match!r}: {found[0].kwargs!r}")

    def events(self, type: Optional[str] = None) -> list[Any]:
        """The ``zagent.Event`` objects seen, optionally only those of one ``type``."""
        seen = [c.kwargs["event"] for c in self.getcalls("zagent_event")]
        return [e for e in seen if type is None or e.type == type]

    def clear(self) -> None:
        self.calls.clear()

    def finish_recording(self) -> None:
        """Stop recording and unregister the spy (idempotent)."""
        if self._undo is not None:
            self._undo()
            self._undo = None
        if self._spy is not None and self.kernel.pm.is_registered(self._spy):
            self.kernel.pm.unregister(self._spy)
            self.kernel.hooks.invalidate()
        self._spy = None

    def __enter__(self) -> "HookRecorder":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finish_recording()

    def __repr__(self) -> str:
        return f"<HookRecorder calls={len(self.calls)}>"


_MISSING = object()


def _matches(actual: Any, expected: Matcher) -> bool:
    if actual is _MISSING:
        return False
    if callable(expected) and not isinstance(expected, type):
        try:
            return bool(expected(actual))
        except Exception:
            return False
    return bool(actual == expected)
