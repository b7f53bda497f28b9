"""``PluginLoader``: one kernel's plugin discovery, registration, registration hooks, ``zagent_check_config``
(its ``ConfigError`` raised as it is), ``zagent_kernel_start``, ``add_plugin`` and ``remove_plugin``; a plugin
that fails is a ``PluginProblem`` (``strict`` raises ``PluginError``).
Hook implementations that are wrappers, or give an argument a default, are refused at registration."""

from __future__ import annotations

import os
import types
from typing import Any, Iterable, NamedTuple, Optional

import pluggy

from . import entrypoints
from ..errors import ConfigError, PluginError
from .runner import HookRunner, PluginManager
from .._runs.logs import log
from .._registry.registries import KINDS, Entry, Registrar, Registry, declared_kinds


class PluginInfo(NamedTuple):
    """A loaded plugin as ``Kernel.plugins()`` reports it."""

    name: str
    distribution: Optional[str]
    version: Optional[str]
    hooks: tuple[str, ...]


class PluginProblem(NamedTuple):
    """A plugin that could not be loaded or registered, and why."""

    plugin: str
    distribution: Optional[str]
    error: str


def has_plugin(kernel: Any, plugin: Any) -> bool:
    """``Kernel.has_plugin``: whether ``plugin`` (a name, or the plugin object itself) is registered."""
    return bool(kernel.pm.has_plugin(plugin) if isinstance(plugin, str) else kernel.pm.is_registered(plugin))


class PluginLoader:
    """Loads and registers plugins for one kernel; ``kernel`` is what registration hooks get as ``kernel``."""

    def __init__(self, pm: PluginManager, hooks: HookRunner, registries: dict[str, Registry], *,
                 strict: bool, kernel: Any) -> None:
        self.pm, self.hooks, self.registries, self.strict, self.kernel = pm, hooks, registries, strict, kernel
        self.problems: list[PluginProblem] = []
        self._dists: dict[str, tuple[str, str]] = {}
        self._skipped = ""

    def load(self, plugins: Iterable[Any], entry_points: bool) -> None:
        """Start-up: entry points, then ``plugins``; hooks checked once all are in; then registrations."""
        loaded = self._load_entry_points() if entry_points else []
        loaded += [n for n in (self._register_plugin(p, check=False) for p in plugins) if n]
        self._run_registrations([n for n in loaded if self._check_hooks(n)])  # after all: specs come from any

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
                self._fail(ep.name, f"plugin name {ep.name!r} of distribution {ep.dist} is already used by "
                           f"distribution {self._dists.get(ep.name, ('?',))[0]}; uninstall one of them", dist=ep.dist)
                continue
            self._dists[ep.name] = (ep.dist, ep.version)
            try:
                obj = _import(ep.value)
            except Exception as exc:
                self._fail(ep.name, f"plugin {ep.name!r} (distribution {ep.dist} {ep.version}) failed to import: "
                           f"{type(exc).__name__}: {exc}", exc)
                continue
            if self._register_plugin(obj, ep.name, check=False):
                names.append(ep.name)
        return names

    def _register_plugin(self, plugin: Any, name: Optional[str] = None, check: bool = True) -> Optional[str]:
        """Import (for a path), add the plugin's own hook specs, register it; ``check`` its hooks now or leave
        that to the caller (start-up checks once every plugin is in, as pytest does)."""
        if isinstance(plugin, str):
            name = name or plugin
            try:
                plugin = _import(plugin)
            except Exception as exc:
                return self._fail(name, f"plugin {name!r} failed to import: {type(exc).__name__}: {exc}", exc)
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
                return self._fail(name, f"plugin class {name!r} could not be instantiated without arguments: "
                                  f"{type(exc).__name__}: {exc}; register an instance instead", exc)
        if self.pm.has_plugin(name):
            return self._fail(name, f"plugin name {name!r} is already used by another plugin on this kernel; "
                              "give one of them another name")
        try:
            self._add_specs(plugin, name)
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            return self._fail(name, _validation_message(self.pm, name, exc), exc)
        except PluginError as exc:
            self._problem(name, self._dist(name), exc)
            return None
        except Exception as exc:
            return self._fail(name, f"plugin {name!r} is not a valid zagent plugin: {exc}", exc)
        self.hooks.invalidate()
        return name if not check or self._check_hooks(name) else None

    def _add_specs(self, plugin: Any, name: str) -> None:
        """Add the hook specs (and registry kinds) a plugin declares in ``zagent_hookspecs``; ``PluginError`` for a
        hook or kind another namespace already specifies."""
        specs = getattr(plugin, "zagent_hookspecs", None)
        if specs is None:
            return
        if isinstance(specs, str):
            specs = _import(specs)
        fresh = []
        for hook in dir(specs):
            if self.pm.parse_hookspec_opts(specs, hook) is None:
                continue
            spec = getattr(getattr(self.pm.hook, hook, None), "spec", None)
            if spec is None:
                fresh.append(hook)
            elif getattr(spec.namespace, "_namespace", spec.namespace) is not specs:
                label = repr(getattr(spec.namespace, "__name__", None) or spec.namespace)
                raise PluginError(f"plugin {name!r} declares hook {hook!r}, which {label} already specifies; "
                                  "rename one of them", plugin=name)
        kinds = declared_kinds(specs)
        for kind in kinds:
            old = self.registries.get(kind.name)
            if old is not None and old.hook != kind.hook:
                raise PluginError(f"plugin {name!r} declares registry kind {kind.name!r}, which "
                                  f"{'zagent' if old.owner == 'zagent' else repr(old.owner)} already declares "
                                  f"(hook {old.hook}); rename one of them", plugin=name)
        if fresh:  # pluggy gets a module of just the new specs; ``_namespace`` points back to the original
            view = types.ModuleType(getattr(specs, "__name__", repr(specs)))
            view.__dict__.update({hook: getattr(specs, hook) for hook in fresh}, _namespace=specs)
            self.pm.add_hookspecs(view)
            self.hooks.invalidate()
        for kind in kinds:
            if kind.name not in self.registries:
                self.registries[kind.name] = Registry(kind.name, hook=kind.hook, noun=kind.noun,
                                                      owner=name, convert=kind.convert)

    def _check_hooks(self, name: str) -> bool:
        """Unregister and report a plugin whose hooks are refused or unknown (typos); True if fine."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return False
        unknown = sorted(h.name for h in self.pm.get_hookcallers(plugin) or [] if not h.has_spec())
        refused = _impl_problem(self.pm, plugin, name) or (
            f"plugin {name!r} implements unknown hook(s) {', '.join(unknown)}; check the spelling against "
            "zagent.hookspecs (or the plugin that declares the hook is not loaded)" if unknown else None)
        if refused:
            self.pm.unregister(plugin)
            self.hooks.invalidate()
            self._fail(name, refused)
        return not refused

    def _run_registrations(self, plugin_names: Iterable[str]) -> None:
        wanted = set(plugin_names)
        collected: dict[str, list[tuple[str, Entry]]] = {}
        failed: set[str] = set()
        for kind, registry in list(self.registries.items()):
            for impl in self.hooks.impls(registry.hook):
                plugin = impl[0]
                if plugin not in wanted or plugin in failed:
                    continue
                entries = collected.setdefault(plugin, [])
                register = Registrar(kind, plugin, entries, None if kind in KINDS else registry)
                try:
                    self.hooks.call_one(registry.hook, impl, {"register": register, "kernel": self.kernel})
                except Exception as exc:
                    failed.add(plugin)
                    collected.pop(plugin, None)
                    self.pm.unregister(name=plugin)  # dropped before reporting: strict raises
                    self.hooks.invalidate()
                    self._fail(plugin, f"plugin {plugin!r} failed in {registry.hook}: {type(exc).__name__}: {exc}", exc)
        for kind in list(self.registries):
            new = [e for entries in collected.values() for k, e in entries if k == kind]
            for error in self.registries[kind].merge(new, self._describe):
                self._problem(error.plugin or "?", self._dist(error.plugin or ""), error)
        self.kernel._config_keys.check(self.kernel.config, "Kernel(config=...)", self.problems)
        for hook, kwargs in (("zagent_check_config", {"config": self.kernel.config}),
                             ("zagent_kernel_start", {"kernel": self.kernel})):
            for impl in self.hooks.impls(hook):
                if impl[0] in wanted and impl[0] not in failed:
                    try:
                        self.hooks.call_one(hook, impl, kwargs)
                    except Exception as exc:
                        if isinstance(exc, ConfigError) and hook == "zagent_check_config":
                            raise  # the user's settings are wrong, not the plugin: Kernel() says so as it is
                        self._fail(impl[0], f"plugin {impl[0]!r} failed in {hook}: {type(exc).__name__}: {exc}", exc)

    def add_plugin(self, plugin: Any, name: Optional[str] = None) -> str:
        """Register one more plugin now and run its registration hooks; return its name. ``PluginError`` if it
        cannot be added (the problem also kept in ``problems``); nothing of a plugin that failed stays."""
        before = len(self.problems)
        self._skipped = ""
        registered = self._register_plugin(plugin, name)
        if registered is None:
            raise PluginError(self.problems[-1].error if len(self.problems) > before else self._skipped,
                              plugin=name)
        try:
            self._run_registrations([registered])
        except (PluginError, ConfigError):  # strict: raised at the first problem; a setting it refuses
            self._discard(registered)
            raise
        if len(self.problems) > before:
            self._discard(registered)
            raise PluginError(self.problems[-1].error, plugin=registered)
        return registered

    def _discard(self, name: str) -> None:
        if self.pm.get_plugin(name) is not None:  # a failed registration hook may have dropped it already
            self.remove_plugin(name)

    def remove_plugin(self, plugin: Any) -> None:
        """Unregister a plugin (by name or object) and drop everything it registered."""
        name = plugin if isinstance(plugin, str) else self.pm.get_name(plugin)
        obj = self.pm.get_plugin(name) if name is not None else None
        if obj is None or name is None:
            raise PluginError(f"plugin {plugin!r} is not registered on this kernel", plugin=str(plugin))
        self.pm.unregister(obj)
        for registry in self.registries.values():
            registry.drop_plugin(name)
        self.hooks.invalidate()

    def _fail(self, plugin: str, message: str, cause: Optional[BaseException] = None,
              dist: Optional[str] = None) -> Optional[str]:  # None, for ``return self._fail(...)``
        self._problem(plugin, dist or self._dist(plugin), PluginError(message, plugin=plugin), cause)
        return None

    def _problem(self, plugin: str, dist: Optional[str], error: PluginError, cause: Optional[BaseException] = None) -> None:
        error.plugin = error.plugin or plugin
        error.distribution = error.distribution or dist
        from .._trust.secrets import mask_exception
        from .._trust.settings import config_masker

        # a library's message may quote OPENAI_API_KEY's value, or the plugin its own ``Kernel(config=...)`` token
        masker = config_masker(getattr(self.kernel, "config", None))
        masked = masker(str(error))
        if masked != str(error):
            error.args = (masked,)
        if self.strict:  # raised, its causes are shown too (an app's ``log.exception``, a traceback)
            mask_exception(cause, masker)
            raise error from cause
        self.problems.append(PluginProblem(plugin, dist, str(error)))
        log.warning("%s", error)

    def _dist(self, plugin: str) -> Optional[str]:
        return self._dists.get(plugin, (None,))[0]

    def _describe(self, plugin: str) -> str:
        dist = self._dists.get(plugin)
        return f"plugin {plugin!r} ({dist[0]} {dist[1]})" if dist else f"plugin {plugin!r}"

    def plugins(self) -> list[PluginInfo]:
        """Loaded plugins: name, distribution, version and the hooks each implements."""
        out = []
        for name, plugin in sorted(self.pm.list_name_plugin(), key=lambda p: p[0]):
            if plugin is not None:  # None: a blocked name (ZAGENT_DISABLE_PLUGINS)
                dist, version = self._dists.get(name, (None, None))
                hooks = tuple(sorted(h.name for h in self.pm.get_hookcallers(plugin) or []))
                out.append(PluginInfo(name, dist, version, hooks))
        return out


def _plugin_name(plugin: Any) -> str:
    """A module's or class's ``__name__``, else ``ClassName-<id>`` for an instance."""
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) and name else f"{type(plugin).__name__}-{id(plugin):x}"


def _names(value: Optional[str]) -> Optional[set[str]]:
    return None if value is None else {n.strip() for n in value.split(",") if n.strip()}


def _import(path: str) -> Any:
    from .._trust.imports import import_path

    return import_path(path, "plugin")


def _impl_problem(pm: pluggy.PluginManager, plugin: Any, name: str) -> Optional[str]:
    """A message if one of ``plugin``'s hook implementations is a wrapper or gives an argument a default
    (pluggy leaves those out of the call: ``context=None`` would always be ``None``), else None."""
    wrappers, defaults = [], []
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                wrappers.append(caller.name)
            spec = caller.spec
            if spec is None or not impl.kwargnames:  # an unknown hook is reported on its own
                continue
            extra = [a for a in impl.kwargnames if a not in spec.argnames]
            known = [a for a in impl.kwargnames if a in spec.argnames]
            what = [f"argument(s) {', '.join(extra)} (with a default) that its spec does not offer"] if extra else []
            what += [f"a default for {', '.join(known)}"] if known else []
            defaults.append(f"hook {caller.name} takes {' and '.join(what)} (it offers: {', '.join(spec.argnames)})")
    if wrappers:
        return (f"plugin {name!r} declares {', '.join(sorted(wrappers))} with wrapper=True/hookwrapper=True; zagent "
                f"calls hook implementations one by one and does not run wrappers: drop the option and return the "
                f"value (rails return None, Deny or Rewrite; see docs/hooks.md)")
    if defaults:
        return (f"plugin {name!r}: {'; '.join(defaults)}; zagent passes a hook implementation only its arguments "
                f"without a default, so these would always get their default: use the spec's argument names, with "
                f"no default (docs/hooks.md lists them)")
    return None


def _validation_message(pm: pluggy.PluginManager, name: str, exc: pluggy.PluginValidationError) -> str:
    """pluggy's validation error, reworded to name the plugin, the hook and the spec's arguments."""
    text = str(exc)
    hook = _between(text, "for hook '", "'")
    if "can not be found in the hookspec" in text:
        missing = _between(text, "Argument(s) ", " are declared")
        spec = getattr(getattr(pm.hook, hook, None) if hook else None, "spec", None)
        offered = f" (it offers: {', '.join(spec.argnames)})" if spec is not None else ""
        return (f"plugin {name!r}: hook {hook or '?'} takes argument(s) {missing or '?'} that its spec does not "
                f"offer{offered}; use only the spec's argument names (docs/hooks.md lists them)")
    return f"plugin {name!r} is not a valid zagent plugin: {' '.join(text.split())}"


def _between(text: str, start: str, end: str) -> str:
    head, found, _ = text.partition(start)[2].partition(end)
    return head if found else ""
