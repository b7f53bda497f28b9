"""The extension surface: pluggy's markers, the kernel's hook specifications (re-exported by ``zagent.hookspecs``;
docs/hooks.md has each hook's long form) and what a rail may answer besides ``None``: ``Deny``, ``Rewrite``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import attrs
import pluggy

if TYPE_CHECKING:  # pragma: no cover - types only
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import Completion, Event, LLMRequest, ToolCall, ToolResult

PROJECT = "zagent"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


#: the attribute ``asks_humans`` sets on a ``zagent_before_tool_call`` implementation (the kernel looks for it)
ASKS_HUMANS = "zagent_asks_humans"


_F = TypeVar("_F", bound=Callable[..., Any])


def asks_humans(impl: _F) -> _F:
    """Mark a ``zagent_before_tool_call`` implementation as the rail asking a person about the calls of sensitive
    tools (``zagent.plugins.rails``): with no such rail loaded, the kernel blocks every sensitive tool's call."""
    setattr(impl, ASKS_HUMANS, True)
    return impl


@attrs.frozen
class Deny:
    """Block the call; ``reason`` is told to the model and recorded."""

    reason: str


@attrs.frozen
class Rewrite:
    """Replace a tool call's arguments (they are validated again)."""

    arguments: dict[str, Any]


# Registration: once per Kernel (and add_plugin); ``register(name, obj, *, override=False)`` bound to the plugin.
@hookspec
def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register LLM providers: ``register(name, factory)``; ``factory(model, **options)`` is a ``zagent.LLM``."""


@hookspec
def zagent_register_parsers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register output parsers and text tool-call formats: ``register(mode, parser)``, for ``kernel.parser(mode)``."""


@hookspec
def zagent_register_tools(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register tools: ``register(tool_or_function, *, name=None, toolset=None, **tool_options)``."""


@hookspec
def zagent_register_memory(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register memory backends: ``register(name, factory)``; ``kernel.memory(name, **options)`` builds one."""


@hookspec
def zagent_register_embedders(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register embedders: ``register(name, factory)``; ``factory(**options).aembed(texts)`` -> vectors."""


@hookspec
def zagent_register_agent_types(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register agent types: ``register(type_name, factory)``; ``kernel.agent(spec)`` is ``factory(spec, kernel)``."""


@hookspec
def zagent_register_agent_builders(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register the agent builder: ``register(name, builder)``; ``kernel.agent(spec, trust=)`` is the ``"default"``
    one's ``builder(kernel, spec, trust)`` (reading files, applying trust, calling the type's factory)."""


@hookspec
def zagent_register_executors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register executors (where units of work run): ``register(name, factory)``, for ``kernel.executor``."""


@hookspec
def zagent_register_batch_drivers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register batch drivers: ``register(name, driver)``; ``kernel.abatch`` awaits the ``"default"`` one."""


@hookspec
def zagent_register_commands(cli: Any, kernel: "Kernel") -> None:
    """Add ``zagent`` sub-commands (each time it starts): ``cli.command(name, handler, help=...)``, ``cli.group``."""


# Rails: run in order, each seeing what the previous ones decided; may return an awaitable; a raise fails closed.
@hookspec
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext[Any]") -> Any:
    """Before a tool call runs: ``None`` allows, ``Deny(reason)`` blocks, ``Rewrite(arguments)`` replaces arguments."""


@hookspec
def zagent_after_tool_call(call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> Any:
    """After a tool call: ``None`` keeps the result, a ``ToolResult`` replaces it, anything else withholds it."""


@hookspec
def zagent_before_llm_call(request: "LLMRequest", ctx: "RunContext[Any]") -> Any:
    """Before a model request: ``None``, a replacement ``LLMRequest``, or ``Deny(reason)`` (``ToolBlocked``)."""


@hookspec
def zagent_after_llm_call(request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> Any:
    """After a model reply (a stream's, assembled): ``None`` or a replacement ``Completion``."""


# Guardrails (dispatched by zagent.agentkit.guardrails): may stop the run with ``zagent.GuardrailTripped``.
@hookspec
def zagent_check_input(agent: str, inputs: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's input: ``None`` goes on; a reason (``str``/``Deny``) trips ``GuardrailTripped``."""


@hookspec
def zagent_check_output(agent: str, output: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's final, validated answer (once per run): as ``zagent_check_input``."""


# Observation and lifecycle: every implementation runs; awaitables are awaited; errors are logged.
@hookspec
def zagent_event(event: "Event") -> Any:
    """Observe an event (``run_start``, ``tool_end``... and plugin types); return values are ignored."""


@hookspec
def zagent_run_end(result: Any, ctx: "RunContext[Any]") -> Any:
    """An agent's run ended with ``result`` (not aborted, did not raise); a failure never changes it."""


@hookspec
def zagent_check_config(config: dict[str, Any]) -> None:
    """Check this plugin's settings in a new kernel's ``config`` (once, before ``zagent_kernel_start``): raise
    ``ConfigError`` naming the key, what it must be and what it got; ``Kernel()`` raises it as it is."""


@hookspec
def zagent_config_keys() -> Any:
    """The keys of ``Kernel(config=...)`` and of an agent's ``agent_config`` this plugin reads. A key nothing loaded
    reads is a ``ConfigError`` (``Kernel()``, a run's start): ignored, a setting such as ``rails`` would fail open."""


@hookspec
def zagent_kernel_start(kernel: "Kernel") -> None:
    """The kernel started: once per kernel and plugin, after its registration hooks."""


@hookspec
def zagent_kernel_close(kernel: "Kernel") -> Any:
    """The kernel is closing: release connections, stop servers, flush files."""
