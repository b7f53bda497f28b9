"""Hook specifications, observation and lifecycle: events, run end, kernel start and close.

Exported from ``zagent.hookspecs`` (read its docstring for how the kernel calls hooks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:  # pragma: no cover - types only
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import Event

# ---------------------------------------------------------------------------
# Observation and lifecycle.
# ---------------------------------------------------------------------------


@hookspec
def zagent_event(event: "Event") -> Any:
    """Observe what happens: ``run_start``/``run_end``, ``step_start``/``step_end``,
    ``tool_start``/``tool_end``, ``llm_start``/``llm_end`` and plugin-defined types.

    Start and end events of one piece of work share ``event.span_id``; ``event.parent_id``
    is the span they run in; end events carry ``duration``, ``outcome`` and ``usage``
    (``zagent._runs.spans``, docs/hooks.md).

    Every implementation runs; return values are ignored; an awaitable is
    awaited; an exception is logged and swallowed (observers never break runs).
    Events carry summaries, never secrets or whole payloads.

    :param event: a ``zagent.Event``.

    Example::

        async def zagent_event(event):
            if event.type == "tool_end":
                print(event.data["tool"], event.data["state"])
    """


@hookspec
def zagent_run_end(result: Any, ctx: "RunContext[Any]") -> Any:
    """An agent's run ended with a result (it was not aborted and did not raise).

    Called by the ReAct loop with its ``ReActResult`` (``status``, ``content``,
    ``state``: the whole run, as the trajectory records it) and by declared
    agents with their ``AgentResult``. Every implementation runs, in order;
    awaitables are awaited (start a task for slow work, e.g. the skills
    plugin's automatic curation); an exception is logged and never changes
    the run's result. Not called when no plugin implements it.

    :param result: what the run returns to its caller.
    :param ctx: the run's context (run id, agent, ``agent_config``, usage).

    Example::

        def zagent_run_end(result, ctx):
            if getattr(result, "status", "") == "completed":
                finished.append(ctx.run_id)
    """


@hookspec
def zagent_kernel_start(kernel: "Kernel") -> None:
    """The kernel has started: every plugin's registration hooks ran (or this plugin was just added).

    Called once per kernel and plugin, like the registration hooks, right after
    them. The place to decide from ``kernel.config`` whether to observe at all:
    a plugin that only sometimes listens (a run log, tracing) adds its observer
    here with ``kernel.add_plugin(...)``, so kernels that do not want it pay
    nothing. An implementation that raises is reported in ``kernel.problems``
    (raised in strict mode), like a failed registration.

    :param kernel: the kernel that started.

    Example::

        def zagent_kernel_start(kernel):
            if kernel.config.get("audit"):
                kernel.add_plugin(AuditObserver(), name="audit.observer")
    """


@hookspec
def zagent_kernel_close(kernel: "Kernel") -> Any:
    """The kernel is closing: release connections, stop servers, flush files.

    Every implementation runs (errors are logged); awaitables are awaited.

    :param kernel: the kernel being closed.

    Example::

        def zagent_kernel_close(kernel):
            _pools.pop(id(kernel)).close()
    """
