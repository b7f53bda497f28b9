"""``Kernel``: the facade an app holds: plugins, registries, look-ups, the tool path, events, lifecycle.
One ``PluginManager`` per kernel and no module-level state; plugins use the facade's methods, never
``registries``, ``hooks`` or ``pm``.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import TYPE_CHECKING, Any, Iterable, Literal, Optional, Sequence, Union, overload

from ._runs import spans
from . import hookspecs
from ._hooks import loading, runner as hooks
from ._registry import lookups
from ._tools import table as tooltable
from ._runs.closing import Owned, close_belongings
from ._runs.context import RunContext
from ._runs.logs import mask_logs
from ._hooks.configkeys import ConfigKeys
from ._hooks.runner import HookRunner, PluginManager, trace_to_stderr
from ._model.run import Model  # loaded by ``import zagent`` anyway
from ._hooks.loading import PluginInfo, PluginLoader, PluginProblem
from ._registry.lookups import batch_driver, build, build_agent, embedder, lookup
from ._model.resolve import Models
from ._registry.registries import KINDS, Registry
from ._runs.stash import Stash
from ._runs.sync import run_sync, run_sync_to_end
from ._tools.table import PendingTools, ToolPool, as_call
from ._tools.tool import Tool
from .types import ToolCall, ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from ._tools.threads import ToolThreads  # imports asyncio: only when a sync tool first runs
    from .contracts import Checkpoints, Embedder, Executor, MemoryStore, OutputParser, TextToolFormat


class Kernel:
    """The zagent kernel. ``plugins``: modules, objects, classes or ``"pkg.mod[:attr]"`` paths; ``entry_points``:
    load group ``zagent`` (built-ins included; ``False``: isolated); ``strict``: raise on a plugin problem;
    ``config``: ``model``, ``profiles`` (per model), ``profile`` (every model, last), ``tool_threads``,
    ``tool_threads_abandoned[_per_tool]`` (caps, ``zagent._tools.threads``), per-plugin sections."""

    def __init__(self, plugins: Sequence[Any] = (), *, entry_points: bool = True, strict: Optional[bool] = None,
                 config: Optional[dict[str, Any]] = None):
        self.config: dict[str, Any] = dict(config or {})
        self.strict = strict if strict is not None else os.environ.get("ZAGENT_STRICT", "") not in ("", "0")
        self.pm = PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.hooks = HookRunner(self.pm, self.config)
        self.registries = {kind: Registry(kind) for kind in KINDS}
        #: tool sources still discovering tools (``zagent._tools.table.PendingTools``); waited for only on a miss
        self.pending_tools = PendingTools()
        #: per-kernel plugin state under typed keys (``zagent._runs.stash``), instead of module globals
        self.stash = Stash()
        #: this kernel's token in ``zagent._runs.spans`` (spans pair per kernel); unlike ``id(self)``, never reused
        self.span_owner = spans.new_owner()
        #: ``spans.emit`` bound to this kernel: ``RunContext.aemit`` hands it its data dict as is
        self._aemit_data = functools.partial(spans.emit, self.hooks, self.span_owner)
        self._models = Models(self.config, self.registries)
        self._embedders: dict[Any, Any] = {}
        self._stores = Owned()  # every store handed out, hashable or not, closed by aclose
        self._tool_pool = ToolPool(self.config)
        self._closed = False
        if os.environ.get("ZAGENT_TRACE_HOOKS", "") not in ("", "0"):
            self.hooks.add_monitor(trace_to_stderr)
        self._config_keys = ConfigKeys(self.hooks)  # what reads each setting: an unread one is a ConfigError
        self._loader = PluginLoader(self.pm, self.hooks, self.registries, strict=self.strict, kernel=self)
        #: plugins that could not be loaded or registered, and why
        self.problems: list[PluginProblem] = self._loader.problems
        self._loader.load(plugins, entry_points)
        if "logging" in sys.modules:  # plugins' records masked too (``_runs.logs``); else the first ``log`` use
            mask_logs()

    # -- plugins ----------------------------------------------------------------

    def add_plugin(self, plugin: Any, name: Optional[str] = None) -> str:
        """Register one more plugin now, run its registration hooks, return its name. ``PluginError`` (also kept
        in ``problems``) on an import error, bad or unknown hooks, blocked, already there, a hook raising, a clash."""
        return self._loader.add_plugin(plugin, name)

    def remove_plugin(self, plugin: Any) -> None:
        """Unregister a plugin (by name or object) and drop everything it registered."""
        self._loader.remove_plugin(plugin)

    def plugins(self) -> list[PluginInfo]:
        """Loaded plugins: name, distribution, version and the hooks each implements."""
        return self._loader.plugins()

    has_plugin = loading.has_plugin  # by name or object
    has_impls = hooks.has_impls  # does any plugin implement this hook?
    call_each = hooks.call_each  # each implementation of a plain hook, failures handed back
    arun_end = hooks.arun_end  # zagent_run_end for a finished run

    # -- look-ups ---------------------------------------------------------------

    def llm(self, spec: Optional[str] = None, **options: Any) -> Model:
        """Resolve ``"provider:model"`` (default: ``ZAGENT_MODEL``, else the offline test model) to the
        provider's model bound to this kernel (``zagent._model.run.Model``: rails, events, usage, cost).

        The same spec and options return the same instance, so its HTTP client is reused.
        ``profile={...}`` overrides capability fields of the model's profile.
        """
        return self._models.get(self, spec, options)

    def parser(self, mode: str) -> OutputParser:
        """The output parser registered for ``mode`` (``json``, ``xml``, ``title``...)."""
        parser: OutputParser = lookup(self.registries, "parsers", mode)
        return parser

    def tool_format(self, mode: str = "tool_call") -> TextToolFormat:
        """The text tool-call format registered for ``mode`` (``tool_call``, ``hermes``...; parsers' registry)."""
        fmt: TextToolFormat = lookup(self.registries, "parsers", mode)
        return fmt

    @overload
    def memory(self, name: Literal["inprocess", "sqlite"] = ..., **options: Any) -> MemoryStore: ...

    @overload
    def memory(self, name: Literal["checkpoints"], **options: Any) -> Checkpoints: ...

    @overload
    def memory(self, name: str, **options: Any) -> Any: ...  # a plugin's kind of store, e.g. "documents"

    def memory(self, name: str = "inprocess", **options: Any) -> Any:
        """A new memory backend instance of ``name``; ``Kernel.aclose`` closes it if the caller has not."""
        store = build(lookup(self.registries, "memory", name), f"memory backend {name!r}", **options)
        self._stores.add(store)
        return store

    def embedder(self, name: Optional[str] = None, **options: Any) -> Optional[Embedder]:
        """An embedder by name, the only one installed when ``name`` is None, or ``None`` if there is none.

        The same name and options return the same instance (its caches and clients are reused)."""
        found: Optional[Embedder] = embedder(self.registries, self._embedders, name, options)
        return found

    def agent(self, spec: Union[dict[str, Any], str, "os.PathLike[str]"], *, trust: Any = None, deps: Any = None) -> Any:
        """Build an agent from a plain dict (or a JSON/YAML file) through its registered type, with the
        ``zagent_register_agent_builders`` builder (the actions plugin's reads files and applies trust).

        The spec is data: an import path in it (a tool ``"pkg.mod:fn"``, a ``parse_func``, an
        approver...) is refused unless trusted (``config["trusted_imports"]`` globs, or
        ``trust=True`` for this spec; a ``zagent.speckit.Trust`` gives finer control). See docs/security.md.
        ``deps`` (app objects: a database handle...) reach its tools as ``ctx.deps`` (``RunContext[Deps]``)."""
        return build_agent(self, self.registries, spec, trust, deps)

    def executor(self, name: Optional[str] = None, **options: Any) -> Executor:
        """A new executor (``zagent._runs.executors``): ``name`` registered through ``zagent_register_executors``,
        default ``config['executor']``, else ``ZAGENT_EXECUTOR``, else the built-in ``local``."""
        from ._runs.executors import pick  # on first use: keeps ``import zagent`` light

        return pick(self, name, options)

    def tool(self, name: str) -> Tool:
        """The tool ``name`` (waiting for tool sources still connecting); ``ToolError`` naming the registered ones."""
        return tooltable.find(self.registries, self.pending_tools, name)

    def tools(self, names: Optional[Iterable[str]] = None, *, toolset: Any = None,
              available_only: bool = True) -> list[Tool]:
        """Registered tools, selected by name and/or toolset (a name or a list); unavailable ones left out unless asked."""
        return tooltable.select(self.registries, self.pending_tools, names, toolset, available_only)

    find = lookups.find  # what is registered under a name, or None
    names = lookups.registered_names  # the names registered for a kind
    entries = lookups.entries  # the entries of a kind (cached until it changes)
    registry_of = lookups.registry_of  # the live registry of a kind, for objects that must not hold the kernel
    tool_definitions = tooltable.tool_definitions  # Agent-Z's get_definitions(toolsets=[...]), with metadata

    def add_tool(self, tool: Any, *, plugin: str = "<kernel.add_tool>", **options: Any) -> Tool:
        """Register a tool (a ``Tool`` or a function) on this kernel; ``plugin`` attributes it to a plugin
        (``remove_plugin`` drops it too), for plugins adding tools after start-up (``PendingTools``)."""
        return tooltable.add(self.registries, self._loader._describe, tool, plugin, options)

    def remove_tool(self, name: str) -> Tool:
        """Unregister one tool by name and return it (agents offered it can no longer run it); ``ToolError``
        naming the registered tools if there is none by that name."""
        return tooltable.remove(self.registries, name)

    def remove_toolset(self, toolset: str) -> list[Tool]:
        """Unregister every tool of ``toolset`` and return them; ``ToolError`` if the toolset has none."""
        return tooltable.remove_set(self.registries, toolset)

    # -- running ----------------------------------------------------------------

    def context(self, **fields: Any) -> RunContext[Any]:
        """A new ``RunContext`` for one run on this kernel; ``ConfigError`` if a setting of the kernel's or of
        ``agent_config`` is one no loaded plugin reads (``zagent_config_keys``)."""
        self._check_settings(fields.get("agent"), fields.get("agent_config") or {})
        return RunContext(kernel=self, **fields)

    def _check_settings(self, agent: Optional[str], agent_config: dict[str, Any]) -> None:
        self._config_keys.check(self.config, "Kernel(config=...)", self.problems)  # a plugin may have been removed
        self._config_keys.check(agent_config, f"agent {agent!r}: agent_config" if agent else "agent_config")

    async def arun_tool(self, call: Union[ToolCall, dict[str, Any]], ctx: Optional[RunContext[Any]] = None) -> ToolResult:
        """Run one tool call through rails, validation and timeout; never raises for tool failures."""
        from ._tools.run import run_tool  # imports asyncio: on first use

        return await run_tool(self, as_call(call), ctx or self.context())

    def run_tool(self, call: Union[ToolCall, dict[str, Any]], ctx: Optional[RunContext[Any]] = None) -> ToolResult:
        """Sync twin of ``arun_tool``."""
        return run_sync(self.arun_tool(call, ctx))

    async def arun_tools(self, calls: Iterable[Union[ToolCall, dict[str, Any]]], ctx: Optional[RunContext[Any]] = None,
                         *, max_concurrency: Optional[int] = None) -> list[ToolResult]:
        """Run several calls concurrently (bounded); results in the calls' order."""
        from ._tools.run import run_tools

        return await run_tools(self, [as_call(c) for c in calls], ctx or self.context(), max_concurrency)

    def run_tools(self, calls: Iterable[Union[ToolCall, dict[str, Any]]], ctx: Optional[RunContext[Any]] = None,
                  *, max_concurrency: Optional[int] = None) -> list[ToolResult]:
        """Sync twin of ``arun_tools``."""
        return run_sync(self.arun_tools(calls, ctx, max_concurrency=max_concurrency))

    async def abatch(self, target: Any, inputs: Any, **options: Any) -> Any:
        """Run ``target`` (agent spec dict or file, agent, workflow graph) once per input (dicts, or a JSONL path)
        with the ``zagent_register_batch_drivers`` driver. Options: ``out`` (JSONL results, resumable), ``executor``
        (name or object), ``executor_options``, ``concurrency``, ``retries`` (lost workers), ``retry_failed``,
        ``on_result(record, summary)``. Returns a ``BatchReport`` (``summary``; ``results`` in order without ``out``)."""
        return await batch_driver(self.registries)(self, target, inputs, **options)

    def batch(self, target: Any, inputs: Any, **options: Any) -> Any:
        """Sync twin of ``abatch``."""
        return run_sync(self.abatch(target, inputs, **options))

    def tool_executor(self) -> ToolThreads:
        """The threads sync tools run in (``ToolThreads``, created on first use, ``config['tool_threads']``
        of them; a thread stuck in a timed-out call is replaced, see ``zagent._tools.threads``)."""
        return self._tool_pool.get()

    async def aemit(self, type: str, *, run_id: Optional[str] = None, agent: Optional[str] = None,
                    _ids: Any = None, **data: Any) -> None:
        """Send a ``zagent_event`` to observers (none: no-op); ``<kind>_start``/``_end`` pairs share a ``span_id``
        and the ``parent_id`` of the span around them; the end gets ``duration``, ``outcome``, ``usage``."""
        observers = self.hooks.impls("zagent_event")
        if observers:  # inline, not spans.emit(): one coroutine per event
            pending = spans.send(self.hooks, observers, self.span_owner, type, run_id, agent, _ids, data)
            if pending is not None:
                await pending

    def emit(self, type: str, *, run_id: Optional[str] = None, agent: Optional[str] = None, **data: Any) -> None:
        """Sync twin of ``aemit`` (spans pair in the calling thread's context); ``RunContext.emit`` tags it."""
        if self.hooks.active("zagent_event"):
            ids = spans.tag(type, data, self.span_owner)
            run_sync(self.aemit(type, run_id=run_id, agent=agent, _ids=ids, **data))

    # -- lifecycle --------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every LLM this kernel made, run ``zagent_kernel_close``, stop the tool threads."""
        if self._closed:
            return
        self._closed = True
        await self._models.aclose()
        await close_belongings(self, self._stores, self.hooks, self._tool_pool)

    def close(self) -> None:
        """Sync twin of ``aclose``; a Ctrl-C meanwhile lets the close finish first (``run_sync_to_end``)."""
        run_sync_to_end(self.aclose())

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Kernel":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        counts = " ".join(f"{k}={len(r)}" for k, r in self.registries.items() if len(r))
        return f"<zagent.Kernel plugins={len(self.pm.get_plugins())} {counts}>".replace("  ", " ")
