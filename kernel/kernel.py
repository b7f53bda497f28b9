"""``Kernel``: loads plugins into its own pluggy manager and answers look-ups.

One ``PluginManager`` per Kernel, no module-level state: several kernels live
side by side in one process. Start-up order:

1. entry points of group ``zagent`` (unless ``entry_points=False``), filtered
   by ``ZAGENT_PLUGINS`` (allow-list) and ``ZAGENT_DISABLE_PLUGINS``
   (deny-list) *before* anything is imported;
2. the ``plugins=[...]`` given by the caller (modules, objects or import paths);
3. every registration hook, once, per plugin; clashes resolved (``registry``).

A plugin that fails to import, validate or register is reported in
``Kernel.problems`` (and logged) and skipped; ``strict=True`` (or
``ZAGENT_STRICT=1``) raises ``PluginError`` instead.
"""

from __future__ import annotations

import importlib
import os
import time
import weakref
from typing import Any, Iterable, NamedTuple, Optional, Sequence, TypeVar, Union

import pluggy

from . import entrypoints, hookcheck, hookspecs
from .context import RunContext
from .errors import ConfigError, PluginError, ToolError
from .hooks import HookRunner, PluginManager, trace_to_stderr
from .logs import log
from .registry import KINDS, Entry, Registry
from .sync import run_sync
from .tools import Tool
from .types import Event, ToolCall, ToolResult


FALLBACK_MODEL = "test:offline"


class PluginInfo(NamedTuple):
    """A loaded plugin as ``Kernel.plugins()`` reports it."""

    name: str
    distribution: Optional[str]
    version: Optional[str]
    hooks: tuple[str, ...]


class Problem(NamedTuple):
    """A plugin that could not be loaded or registered, and why."""

    plugin: str
    distribution: Optional[str]
    error: str


class Kernel:
    """The zagent kernel: plugins, registries, the tool-run path and LLM resolution.

    :param plugins: extra plugins: modules, objects, classes or ``"pkg.mod"`` /
        ``"pkg.mod:attr"`` import paths.
    :param entry_points: load installed plugins of entry-point group ``zagent``
        (built-ins included). ``False`` gives an isolated kernel.
    :param strict: raise on any plugin problem instead of reporting it.
    :param config: settings plugins may read: ``model`` (default model),
        ``profiles`` (per-model capability overrides), ``tool_threads``,
        ``tool_threads_abandoned`` and ``tool_threads_abandoned_per_tool`` (caps on
        timed-out sync tool calls still running, see ``zagent.toolthreads``), and
        per-plugin sections.
    """

    def __init__(
        self,
        plugins: Sequence[Any] = (),
        *,
        entry_points: bool = True,
        strict: Optional[bool] = None,
        config: Optional[dict[str, Any]] = None,
    ):
        self.config: dict[str, Any] = dict(config or {})
        self.strict = strict if strict is not None else os.environ.get("ZAGENT_STRICT", "") not in ("", "0")
        self.pm = PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.hooks = HookRunner(self.pm)
        self.registries = {kind: Registry(kind) for kind in KINDS}
        self.problems: list[Problem] = []
        self._dists: dict[str, tuple[str, str]] = {}
        self._llms: dict[Any, Any] = {}
        self._embedders: dict[Any, Any] = {}
        self._stores: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._executor: Any = None
        self._executor_pid = 0
        self._warned_fallback = False
        self._closed = False
        self._skipped = ""
        if os.environ.get("ZAGENT_TRACE_HOOKS", "") not in ("", "0"):
            self.hooks.add_monitor(trace_to_stderr)
        loaded: list[str] = []
        if entry_points:
            loaded += self._load_entry_points()
        for plugin in plugins:
            name = self._register_plugin(plugin, check=False)
            if name:
                loaded.append(name)
        loaded = [n for n in loaded if self._check_hooks(n)]  # after all: specs may come from any plugin
        self._run_registrations(loaded)

    # -- loading --------------------------------------------------------------

    def _load_entry_points(self) -> list[str]:
        allow = _names(os.environ.get("ZAGENT_PLUGINS"))
        deny = _names(os.environ.get("ZAGENT_DISABLE_PLUGINS")) or set()
        for name in deny:
            self.pm.set_blocked(name)
        names: list[str] = []
        for ep in entrypoints.scan("zagent"):
            if ep.name in deny or (allow is not None and ep.name not in allow):
                continue
            if self.pm.has_plugin(ep.name) or ep.name in self._dists:
                self._problem(ep.name, ep.dist, PluginError(
                    f"plugin name {ep.name!r} of distribution {ep.dist} is already used by "
                    f"distribution {self._dists.get(ep.name, ('?',))[0]}; uninstall one of them",
                    plugin=ep.name, distribution=ep.dist))
                continue
            self._dists[ep.name] = (ep.dist, ep.version)
            try:
                obj = _import(ep.value)
            except Exception as exc:
                self._problem(ep.name, ep.dist, PluginError(
                    f"plugin {ep.name!r} (distribution {ep.dist} {ep.version}) failed to import: "
                    f"{type(exc).__name__}: {exc}", plugin=ep.name, distribution=ep.dist), exc)
                continue
            if self._register_plugin(obj, ep.name, check=False):
                names.append(ep.name)
        return names

    def _register_plugin(self, plugin: Any, name: Optional[str] = None, check: bool = True) -> Optional[str]:
        """Import (for a path), add the plugin's own hook specs, register it; ``check`` its hooks now
        or leave that to the caller (start-up checks once every plugin is in, as pytest does)."""
        if isinstance(plugin, str):
            name = name or plugin
            try:
                plugin = _import(plugin)
            except Exception as exc:
                self._problem(name, None, PluginError(
                    f"plugin {name!r} failed to import: {type(exc).__name__}: {exc}", plugin=name), exc)
                return None
        if self.pm.is_registered(plugin):  # e.g. given explicitly and found as an entry point
            self._skipped = f"plugin {name or _plugin_name(plugin)!r} is already registered on this kernel"
            return None
        name = name or _plugin_name(plugin)
        if self.pm.is_blocked(name):
            self._skipped = f"plugin {name!r} is blocked (ZAGENT_DISABLE_PLUGINS)"
            return None
        if isinstance(plugin, type):  # a plugin class: hooks are methods, so register an instance
            try:
                plugin = plugin()
            except Exception as exc:
                self._problem(name, self._dist(name), PluginError(
                    f"plugin class {name!r} could not be instantiated without arguments: "
                    f"{type(exc).__name__}: {exc}; register an instance instead", plugin=name), exc)
                return None
        if self.pm.has_plugin(name):
            self._problem(name, self._dist(name), PluginError(
                f"plugin name {name!r} is already used by another plugin on this kernel; "
                f"give one of them another name", plugin=name))
            return None
        try:
            self._add_specs(plugin)
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            self._problem(name, self._dist(name), PluginError(
                hookcheck.validation_message(self.pm, name, exc), plugin=name), exc)
            return None
        except Exception as exc:
            self._problem(name, self._dist(name), PluginError(
                f"plugin {name!r} is not a valid zagent plugin: {exc}", plugin=name), exc)
            return None
        self.hooks.invalidate()
        if check and not self._check_hooks(name):
            return None
        return name

    def _add_specs(self, plugin: Any) -> None:
        """Add the hook specs a plugin declares in ``zagent_hookspecs`` (a module, class or import path),
        so plugins can own extension points (e.g. ``zagent_register_speaker_selectors``)."""
        specs = getattr(plugin, "zagent_hookspecs", None)
        if specs is None:
            return
        if isinstance(specs, str):
            specs = _import(specs)
        self.pm.add_hookspecs(specs)

    def _check_hooks(self, name: str) -> bool:
        """Unregister and report a plugin implementing hooks no plugin specified (typos); True if fine."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return False
        unknown = [h.name for h in self.pm.get_hookcallers(plugin) or [] if not h.has_spec()]
        wrapper = hookcheck.wrapper_problem(self.pm, plugin, name)
        if wrapper:
            self.pm.unregister(plugin)
            self.hooks.invalidate()
            self._problem(name, self._dist(name), PluginError(wrapper, plugin=name))
            return False
        if not unknown:
            return True
        self.pm.unregister(plugin)
        self.hooks.invalidate()
        self._problem(name, self._dist(name), PluginError(
            f"plugin {name!r} implements unknown hook(s) {', '.join(sorted(unknown))}; check the "
            f"spelling against zagent.hookspecs (or the plugin that declares the hook is not loaded)",
            plugin=name))
        return False

    def _run_registrations(self, plugin_names: Iterable[str]) -> None:
        wanted = set(plugin_names)
        collected: dict[str, list[tuple[str, Entry]]] = {}
        failed: set[str] = set()
        for kind, (hook_name, _noun) in KINDS.items():
            for impl in self.hooks.impls(hook_name):
                if impl[0] not in wanted or impl[0] in failed:
                    continue
                entries = collected.setdefault(impl[0], [])
                try:
                    self.hooks.call_one(hook_name, impl, {"register": _Register(kind, impl[0], entries), "kernel": self})
                except Exception as exc:
                    failed.add(impl[0])
                    self._problem(impl[0], self._dist(impl[0]), PluginError(
                        f"plugin {impl[0]!r} failed in {hook_name}: {type(exc).__name__}: {exc}",
                        plugin=impl[0]), exc)
        for name in failed:
            collected.pop(name, None)
            plugin = self.pm.get_plugin(name)
            if plugin is not None:
                self.pm.unregister(plugin)
        self.hooks.invalidate()
        for kind in KINDS:
            new = [e for entries in collected.values() for k, e in entries if k == kind]
            for error in self.registries[kind].merge(new, self._describe):
                self._problem(error.plugin or "?", self._dist(error.plugin or ""), error)

    def add_plugin(self, plugin: Any, name: Optional[str] = None) -> str:
        """Register one more plugin now and run its registration hooks; return its name.

        Raises ``PluginError`` if the plugin cannot be added (import error,
        invalid or unknown hooks, blocked, already registered, a registration
        hook raising, a name clash); the problem is also kept in ``problems``.
        """
        before = len(self.problems)
        self._skipped = ""
        registered = self._register_plugin(plugin, name)
        if registered is None:
            raise PluginError(self.problems[-1].error if len(self.problems) > before else self._skipped,
                              plugin=name)
        self._run_registrations([registered])
        if len(self.problems) > before:
            raise PluginError(self.problems[-1].error, plugin=registered)
        return registered

    def remove_plugin(self, plugin: Any) -> None:
        """Unregister a plugin (by name or object) and drop everything it registered."""
        name = plugin if isinstance(plugin, str) else self.pm.get_name(plugin)
        obj = self.pm.get_plugin(name) if name is not None else None
        if obj is None:
            raise PluginError(f"plugin {plugin!r} is not registered on this kernel", plugin=str(plugin))
        self.pm.unregister(obj)
        for registry in self.registries.values():
            registry.drop_plugin(name)
        self.hooks.invalidate()

    def _problem(self, plugin: str, dist: Optional[str], error: PluginError, cause: Optional[BaseException] = None) -> None:
        error.plugin = error.plugin or plugin
        error.distribution = error.distribution or dist
        if self.strict:
            raise error from cause
        self.problems.append(Problem(plugin, dist, str(error)))
        log.warning("%s", error)

    def _dist(self, plugin: str) -> Optional[str]:
        return self._dists.get(plugin, (None,))[0]

    def _describe(self, plugin: str) -> str:
        dist = self._dists.get(plugin)
        return f"plugin {plugin!r} ({dist[0]} {dist[1]})" if dist else f"plugin {plugin!r}"

    # -- introspection ----------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Loaded plugins: name, distribution, version and the hooks each implements."""
        out = []
        for name, plugin in sorted(self.pm.list_name_plugin(), key=lambda p: p[0]):
            if plugin is None:  # a blocked name (ZAGENT_DISABLE_PLUGINS)
                continue
            hooks = tuple(sorted(h.name for h in self.pm.get_hookcallers(plugin) or []))
            dist, version = self._dists.get(name, (None, None))
            out.append(PluginInfo(name, dist, version, hooks))
        return out

    # -- look-ups ---------------------------------------------------------------

    def llm(self, spec: Optional[str] = None, **options: Any) -> Any:
        """Resolve ``"provider:model"`` (default: ``ZAGENT_MODEL``, else the offline test model).

        The same spec and options return the same instance, so its HTTP client is reused.
        ``profile={...}`` overrides capability fields of the model's profile.
        """
        spec = spec or self.config.get("model") or os.environ.get("ZAGENT_MODEL") or self._fallback_model()
        key = _cache_key(spec, options)
        if key is not None and key in self._llms:
            return self._llms[key]
        provider, sep, model = spec.partition(":")
        if not sep or not provider:
            raise ConfigError(
                f"model {spec!r} has no provider prefix; write it as 'provider:model', e.g. 'openai:{spec}'. "
                f"Installed providers: {self._names('providers')}"
            )
        factory = self.registries["providers"].get(provider)
        if factory is None:
            raise ConfigError(
                f"unknown LLM provider {provider!r} in {spec!r}. Installed providers: {self._names('providers')}. "
                f"Install a plugin that provides it (e.g. pip install zagent-{provider}) or fix the name"
            )
        overrides = dict(self._profile_config(provider, model))
        overrides.update(options.pop("profile", None) or {})
        llm = factory(model, **options)
        llm.kernel = self
        if overrides:
            llm.profile_overrides = {**llm.profile_overrides, **overrides}
        if key is not None:
            self._llms[key] = llm
        else:
            self._llms[id(llm)] = llm
        return llm

    def _fallback_model(self) -> str:
        if not self._warned_fallback:
            self._warned_fallback = True
            log.warning("ZAGENT_MODEL is not set: using the offline test model %r (no network). "
                        "Set ZAGENT_MODEL=provider:model to use a real LLM.", FALLBACK_MODEL)
        return FALLBACK_MODEL

    def _profile_config(self, provider: str, model: str) -> dict[str, Any]:
        profiles = self.config.get("profiles") or {}
        merged: dict[str, Any] = {}
        merged.update(profiles.get(f"{provider}:*", {}))
        merged.update(profiles.get(f"{provider}:{model}", {}))
        return merged

    def parser(self, mode: str) -> Any:
        """The parser registered for ``mode`` (``json``, ``xml``, ``title``...)."""
        return self._lookup("parsers", mode)

    def memory(self, name: str = "inprocess", **options: Any) -> Any:
        """A new memory backend instance of ``name``; ``Kernel.aclose`` closes it if the caller has not."""
        store = self._lookup("memory", name)(**options)
        try:
            self._stores.add(store)
        except TypeError:  # not weak-referenceable: the caller closes it
            pass
        return store

    def embedder(self, name: Optional[str] = None, **options: Any) -> Any:
        """An embedder by name, the only one installed when ``name`` is None, or ``None`` if there is none.

        The same name and options return the same instance (its caches and clients are reused)."""
        reg = self.registries["embedders"]
        if name is None:
            if not len(reg):
                return None
            name = next(iter(reg))
        key = _cache_key(name, options)
        found = self._embedders.get(key) if key is not None else None
        if found is None:
            found = self._lookup("embedders", name)(**options)
            if key is not None:
                self._embedders[key] = found
        return found

    def agent(self, spec: Union[dict[str, Any], str, os.PathLike]) -> Any:
        """Build an agent from a plain dict (or a JSON/YAML file) through its registered type."""
        if not isinstance(spec, dict):
            spec = load_spec_file(spec)
        type_name = spec.get("type", "customize")
        factory = self.registries["agent_types"].get(type_name)
        if factory is None:
            raise ConfigError(
                f"unknown agent type {type_name!r}; installed agent types: {self._names('agent_types')}"
            )
        return factory(spec, self)

    def tool(self, name: str) -> Tool:
        tool = self.registries["tools"].get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; registered tools: {self._names('tools')}")
        return tool

    def tools(
        self, names: Optional[Iterable[str]] = None, *, toolset: Optional[str] = None, available_only: bool = True
    ) -> list[Tool]:
        """Registered tools, selected by name and/or toolset; unavailable ones left out unless asked."""
        reg = self.registries["tools"]
        chosen = [self.tool(n) for n in names] if names is not None else reg.values()
        return [t for t in chosen
                if (toolset is None or t.toolset == toolset) and (not available_only or t.is_available())]

    def add_tool(self, tool: Any, **options: Any) -> Tool:
        """Register a tool (a ``Tool`` or a function) directly on this kernel, e.g. in an embedding app."""
        entries: list[tuple[str, Entry]] = []
        _Register("tools", "<kernel.add_tool>", entries)(tool, **options)
        errors = self.registries["tools"].merge([e for _, e in entries], self._describe)
        if errors:
            raise errors[0]
        return entries[0][1].obj

    def remove_tool(self, name: str) -> Tool:
        """Unregister one tool by name and return it; agents offered it can no longer run it.

        Raises ``ToolError`` naming the registered tools if there is none by that name.
        """
        if name not in self.registries["tools"]:
            raise ToolError(f"cannot remove tool {name!r}: no such tool; registered tools: {self._names('tools')}")
        return self.registries["tools"].drop(name).obj

    def remove_toolset(self, toolset: str) -> list[Tool]:
        """Unregister every tool of ``toolset`` and return them; ``ToolError`` if the toolset has none."""
        names = [t.name for t in self.registries["tools"].values() if t.toolset == toolset]
        if not names:
            sets = sorted({t.toolset for t in self.registries["tools"].values() if t.toolset})
            raise ToolError(f"cannot remove toolset {toolset!r}: no tool is in it; toolsets: {', '.join(sets) or 'none'}")
        return [self.registries["tools"].drop(n).obj for n in names]

    def _lookup(self, kind: str, name: str) -> Any:
        obj = self.registries[kind].get(name)
        if obj is None:
            noun = KINDS[kind][1]
            raise ConfigError(f"unknown {noun} {name!r}; installed: {self._names(kind)}")
        return obj

    def _names(self, kind: str) -> str:
        return ", ".join(self.registries[kind]) or "none (is the plugin installed and enabled?)"

    # -- running ----------------------------------------------------------------

    def context(self, **fields: Any) -> RunContext:
        """A new ``RunContext`` for one run on this kernel."""
        return RunContext(kernel=self, **fields)

    async def arun_tool(self, call: Union[ToolCall, dict[str, Any]], ctx: Optional[RunContext] = None) -> ToolResult:
        """Run one tool call through rails, validation and timeout; never raises for tool failures."""
        from .toolrun import run_tool

        return await run_tool(self, _as_call(call), ctx or self.context())

    def run_tool(self, call: Union[ToolCall, dict[str, Any]], ctx: Optional[RunContext] = None) -> ToolResult:
        """Sync twin of ``arun_tool``."""
        return run_sync(self.arun_tool(call, ctx))

    async def arun_tools(
        self, calls: Iterable[Union[ToolCall, dict[str, Any]]], ctx: Optional[RunContext] = None,
        *, max_concurrency: Optional[int] = None,
    ) -> list[ToolResult]:
        """Run several calls concurrently (bounded); results in the calls' order."""
        from .toolrun import run_tools

        return await run_tools(self, [_as_call(c) for c in calls], ctx or self.context(), max_concurrency)

    def tool_executor(self) -> Any:
        """The threads sync tools run in (``ToolThreads``, created on first use, ``config['tool_threads']``
        of them; a thread stuck in a timed-out call is replaced, see ``zagent.toolthreads``)."""
        if self._executor is None or self._executor_pid != os.getpid():  # a forked child needs its own threads
            from .toolthreads import ToolThreads

            config = self.config
            self._executor = ToolThreads(int(config.get("tool_threads", 16)), thread_name_prefix="zagent-tool",
                                         max_abandoned=int(config.get("tool_threads_abandoned", 64)),
                                         max_abandoned_per_tool=int(config.get("tool_threads_abandoned_per_tool", 8)))
            self._executor_pid = os.getpid()
        return self._executor

    async def aemit(self, type: str, *, run_id: Optional[str] = None, agent: Optional[str] = None, **data: Any) -> None:
        """Send a ``zagent_event`` to observers (no-op when there are none)."""
        if self.hooks.active("zagent_event"):
            await self.hooks.emit(Event(type=type, time=time.time(), run_id=run_id, agent=agent, data=data))

    def emit(self, type: str, **data: Any) -> None:
        """Sync twin of ``aemit``."""
        if self.hooks.active("zagent_event"):
            run_sync(self.aemit(type, **data))

    # -- lifecycle --------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every LLM this kernel made, run ``zagent_kernel_close``, stop the tool threads."""
        if self._closed:
            return
        self._closed = True
        for llm in list(self._llms.values()):
            try:
                await llm.aclose()
            except Exception:
                log.exception("closing %r failed", llm)
        self._llms.clear()
        for store in list(self._stores):
            await _close_quietly(store)
        for impl in self.hooks.impls("zagent_kernel_close"):
            try:
                await self.hooks.acall_one("zagent_kernel_close", impl, {"kernel": self})
            except Exception:
                log.exception("plugin %r failed while closing", impl[0])
        if self._executor is not None:
            self._executor.shutdown(wait=False)

    def close(self) -> None:
        run_sync(self.aclose())

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


class _Register:
    """The ``register`` callable handed to one plugin's registration hook."""

    def __init__(self, kind: str, plugin: str, sink: list[tuple[str, Entry]]):
        self.kind, self.plugin, self.sink = kind, plugin, sink

    def __call__(self, name_or_obj: Any, obj: Any = None, *, override: bool = False, **options: Any) -> Any:
        if self.kind == "tools":  # register(fn, name=..., ...) or register("name", fn, ...)
            name = options.pop("name", None)
            if obj is not None and name is None:
                name, obj = (name_or_obj, obj) if isinstance(name_or_obj, str) else (obj, name_or_obj)
                return self._tool(obj, name, override=override, **options)
            return self._tool(name_or_obj, name, override=override, **options)
        if options:
            raise PluginError(f"unexpected options {sorted(options)} when registering {self.kind}", plugin=self.plugin)
        if not isinstance(name_or_obj, str) or not name_or_obj or ":" in name_or_obj:
            raise PluginError(
                f"plugin {self.plugin!r} registered a {KINDS[self.kind][1]} with invalid name {name_or_obj!r}; "
                "use a non-empty string without ':'", plugin=self.plugin)
        if obj is None:
            raise PluginError(f"plugin {self.plugin!r} registered {name_or_obj!r} without an object", plugin=self.plugin)
        self.sink.append((self.kind, Entry(name_or_obj, obj, self.plugin, override)))
        return obj

    def _tool(self, tool: Any, name: Any = None, *, override: bool = False, **options: Any) -> Tool:
        if isinstance(tool, Tool):
            if name or options:
                import attrs

                changes = {k: v for k, v in options.items() if v is not None}
                if name:
                    changes["name"] = name
                tool = attrs.evolve(tool, **changes)
        else:
            tool = Tool.from_function(tool, name=name, **{k: v for k, v in options.items() if v is not None})
        self.sink.append(("tools", Entry(tool.name, tool, self.plugin, override)))
        return tool


def _plugin_name(plugin: Any) -> str:
    """A module's or class's ``__name__``, else ``ClassName-<id>`` for an instance."""
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) and name else f"{type(plugin).__name__}-{id(plugin):x}"


async def _close_quietly(store: Any) -> None:
    """Close a memory store the kernel handed out (``aclose`` or ``close``); log, never raise."""
    try:
        if hasattr(store, "aclose"):
            await store.aclose()
        elif hasattr(store, "close"):
            store.close()
    except Exception:
        log.exception("closing %r failed", store)


def _names(value: Optional[str]) -> Optional[set[str]]:
    if value is None:
        return None
    return {n.strip() for n in value.split(",") if n.strip()}


def _import(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    obj = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def _as_call(call: Union[ToolCall, dict[str, Any]]) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, dict):
        import msgspec

        data = {"id": f"call_{id(call):x}", **call}
        try:
            return msgspec.convert(data, ToolCall)
        except msgspec.ValidationError as exc:
            raise ToolError(f"bad tool call {call!r}: {exc}; give at least 'name' and 'arguments'") from None
    raise ToolError(f"expected a zagent.ToolCall or dict, got {type(call).__name__}")


def _cache_key(spec: str, options: dict[str, Any]) -> Any:
    try:
        key = (spec, tuple(sorted((k, _freeze(v)) for k, v in options.items())))
        hash(key)
        return key
    except TypeError:
        return None


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


S = TypeVar("S")


def convert_spec(data: Any, struct: "type[S]", what: str) -> S:
    """``data`` (a mapping, e.g. from ``load_spec_file``) as the Struct ``struct``; anything else, or a
    field of the wrong type, is a ``ConfigError`` naming ``what`` and the spec's name."""
    import msgspec

    if not isinstance(data, dict):
        raise ConfigError(f"a {what} must be a mapping, got {type(data).__name__}")
    try:
        return msgspec.convert(data, struct)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid {what} {data.get('name', '?')!r}: {exc}") from None


def load_spec_file(path: Union[str, os.PathLike]) -> dict[str, Any]:
    """Read an agent/workflow spec from ``.json`` or ``.yaml``/``.yml`` (YAML needs ``zagent[yaml]``)."""
    import msgspec

    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read spec file {p!r}: {exc}") from None
    if p.endswith((".yaml", ".yml")):
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise ConfigError(f"{p} is YAML; install the extra: pip install 'zagent[yaml]'") from None
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p} is not valid YAML: {exc}") from None
    else:
        try:
            data = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{p} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p} must hold an object (a mapping), got {type(data).__name__}")
    return data
