"""The extension surface: pluggy's markers, the kernel's hook specifications (re-exported by ``zagent.hookspecs``;
docs/hooks.md has each hook's long form) and what a rail may answer besides ``None``: ``Deny``, ``Rewrite``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs
import pluggy

if TYPE_CHECKING:  # pragma: no cover - types only
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import Completion, Event, LLMRequest, ToolCall, ToolResult

PROJECT = "zagent"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@attrs.frozen
class Deny:
    """Block the call; ``reason`` is told to the model and recorded."""

    reason: str


@attrs.frozen
class Rewrite:
    """Replace a tool call's arguments (they are validated again)."""

    arguments: dict[str, Any]


# Registration hooks: called once per Kernel at start-up (and by add_plugin), each ``register`` bound to its plugin.
@hookspec
def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register LLM provider factories: ``register(name, factory, *, override=False)``; ``factory(model,
    **options)`` returns a ``zagent.LLM`` for ``kernel.llm("name:model", **options)``."""


@hookspec
def zagent_register_parsers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register output parsers and text tool-call formats: ``register(mode, parser, *, override=False)``;
    ``kernel.parser(mode)`` returns it."""


@hookspec
def zagent_register_tools(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register tools: ``register(tool_or_function, *, name=None, toolset=None, override=False, **tool_options)``
    (a ``zagent.Tool`` or a sync/async function; ``tool_options`` are ``Tool`` fields)."""


@hookspec
def zagent_register_memory(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register memory backends: ``register(name, factory, *, override=False)``; ``kernel.memory(name,
    **options)`` returns ``factory(**options)``."""


@hookspec
def zagent_register_embedders(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register embedders: ``register(name, factory, *, override=False)``; ``factory(**options)`` has
    ``async aembed(texts) -> list[list[float]]``."""


@hookspec
def zagent_register_agent_types(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register agent types: ``register(type_name, factory, *, override=False)``; ``kernel.agent(spec)`` returns
    ``factory(spec, kernel)`` for ``spec["type"] == type_name``."""


@hookspec
def zagent_register_executors(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register executors (where units of work run): ``register(name, factory, *, override=False)``;
    ``kernel.executor(name, **options)`` returns ``factory(**options)``."""


@hookspec
def zagent_register_batch_drivers(register: Callable[..., None], kernel: "Kernel") -> None:
    """Register batch drivers: ``register(name, driver, *, override=False)``; ``kernel.abatch(target, inputs,
    **options)`` returns ``await driver(kernel, target, inputs, **options)`` of the one named ``"default"``."""


@hookspec
def zagent_register_commands(cli: Any, kernel: "Kernel") -> None:
    """Add sub-commands to the ``zagent`` command line (each time it starts, not by ``Kernel()``):
    ``cli.command(name, handler, help=...)`` returns an ``argparse`` parser; ``cli.group(name, help=...)``."""


# Rails: run in order, each seeing what the previous ones decided; a rail may return an awaitable.
@hookspec
def zagent_before_tool_call(call: "ToolCall", ctx: "RunContext[Any]") -> Any:
    """Before a tool call runs (arguments validated): ``None`` allows, ``zagent.Deny(reason)`` blocks,
    ``zagent.Rewrite(arguments)`` replaces the arguments; a rail that raises blocks the call."""


@hookspec
def zagent_after_tool_call(call: "ToolCall", result: "ToolResult", ctx: "RunContext[Any]") -> Any:
    """After every tool call: ``None`` keeps the result, a ``ToolResult`` replaces it; anything else, or a
    raise, withholds it (state ``blocked``)."""


@hookspec
def zagent_before_llm_call(request: "LLMRequest", ctx: "RunContext[Any]") -> Any:
    """Before a model request is sent: ``None``, a replacement ``LLMRequest``, or ``zagent.Deny(reason)``
    (the caller gets ``ToolBlocked``, as when the rail raises)."""


@hookspec
def zagent_after_llm_call(request: "LLMRequest", response: "Completion", ctx: "RunContext[Any]") -> Any:
    """After a model reply (once, on the assembled reply of a stream): ``None`` or a replacement
    ``Completion``; a rail that raises withholds the reply (``ToolBlocked``)."""


# Guardrails (dispatched by zagent.agentkit.guardrails): may stop the run with ``zagent.GuardrailTripped``.
@hookspec
def zagent_check_input(agent: str, inputs: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's input before it starts: ``None`` lets it go on; a reason (``str`` or ``Deny``), or
    a raise, trips the guardrail (``where="input"``)."""


@hookspec
def zagent_check_output(agent: str, output: Any, ctx: "RunContext[Any]") -> Any:
    """Check an agent's final, validated answer (once per run): as ``zagent_check_input``, ``where="output"``."""


# Observation and lifecycle: every implementation runs; awaitables are awaited; errors are logged.
@hookspec
def zagent_event(event: "Event") -> Any:
    """Observe an event (``run_start``, ``tool_end``, ... and plugin types); return values are ignored and an
    observer that raises never breaks the run."""


@hookspec
def zagent_run_end(result: Any, ctx: "RunContext[Any]") -> Any:
    """An agent's run ended with ``result`` (not aborted, did not raise); a failure never changes the result."""


@hookspec
def zagent_kernel_start(kernel: "Kernel") -> None:
    """The kernel started: called once per kernel and plugin, right after its registration hooks; a raise is
    reported in ``kernel.problems``."""


@hookspec
def zagent_kernel_close(kernel: "Kernel") -> Any:
    """The kernel is closing: release connections, stop servers, flush files."""
