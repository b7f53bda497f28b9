"""Named things plugins register (the built-in ``KINDS`` and kinds plugins declare with ``registry_hookspec``) and
the ``register`` callables of registration hooks; a name is registered once per kind unless exactly one registration
says ``override=True``."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, NamedTuple, Optional, TypeVar

import attrs

from ..errors import PluginError
from .._hooks.specs import hookspec
from .._tools.tool import Tool

F = TypeVar("F", bound=Callable[..., Any])
Convert = Callable[..., tuple[str, Any]]

KINDS = {
    "providers": ("zagent_register_providers", "provider"),
    "parsers": ("zagent_register_parsers", "parser"),
    "tools": ("zagent_register_tools", "tool"),
    "memory": ("zagent_register_memory", "memory backend"),
    "embedders": ("zagent_register_embedders", "embedder"),
    "agent_types": ("zagent_register_agent_types", "agent type"),
    "agent_builders": ("zagent_register_agent_builders", "agent builder"),
    "executors": ("zagent_register_executors", "executor"),
    "batch_drivers": ("zagent_register_batch_drivers", "batch driver"),
}


class Kind(NamedTuple):
    """A registry kind a plugin declares (see ``registry_hookspec``)."""

    name: str
    hook: str
    noun: str
    convert: Optional[Convert]


def registry_hookspec(kind: str, *, noun: str, convert: Optional[Convert] = None) -> Callable[[F], F]:
    """``@hookspec`` for the registration hook (``register``, ``kernel``) of a plugin-owned registry ``kind``;
    ``noun`` names an entry in errors; ``convert(*args, **options) -> (name, obj)`` reads other ``register``
    arguments. ``ValueError`` unless ``kind`` is an identifier."""
    if not kind.isidentifier():
        raise ValueError(f"registry kind {kind!r} must be an identifier")

    def mark(fn: F) -> F:
        fn.zagent_registry = (kind, noun, convert)  # type: ignore[attr-defined]
        return hookspec(fn)

    return mark


def declared_kinds(namespace: Any) -> list[Kind]:
    """The kinds a hook-spec module or class declares with ``registry_hookspec``."""
    kinds = []
    for attr in dir(namespace):
        mark = getattr(getattr(namespace, attr, None), "zagent_registry", None)
        if attr.startswith("zagent_") and isinstance(mark, tuple) and len(mark) == 3:
            kinds.append(Kind(mark[0], attr, mark[1], mark[2]))
    return kinds


class Entry(NamedTuple):
    name: str
    obj: Any
    plugin: str
    override: bool


class Registry:
    """One kind of named things, e.g. every provider factory, with who registered each."""

    def __init__(self, kind: str, *, hook: Optional[str] = None, noun: Optional[str] = None,
                 owner: str = "zagent", convert: Optional[Convert] = None) -> None:
        self.kind, self.hook, self.noun = kind, hook or KINDS[kind][0], noun or KINDS[kind][1]
        self.owner, self.convert = owner, convert  # owner: the plugin that declared the kind ("zagent": built in)
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()
        self._snapshot: Optional[tuple[Entry, ...]] = None  # what entries() returns until the next change

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> Optional[Any]:
        entry = self._entries.get(name)
        return entry.obj if entry is not None else None

    def entry(self, name: str) -> Optional[Entry]:
        return self._entries.get(name)

    def entries(self) -> tuple[Entry, ...]:
        """Every entry, by name: the same tuple until the registry changes (``is`` tells a cache it did not)."""
        with self._lock:
            if self._snapshot is None:
                self._snapshot = tuple(self._entries[n] for n in sorted(self._entries))
            return self._snapshot

    def values(self) -> list[Any]:
        return [e.obj for e in self.entries()]

    def merge(self, new: list[Entry], describe: Callable[[str], str]) -> list[PluginError]:
        """Add ``new`` entries (under a lock: plugins may add from their threads); a ``PluginError`` per clash."""
        errors: list[PluginError] = []
        with self._lock:
            self._snapshot = None
            for e in new:
                old = self._entries.get(e.name)
                if old is None or (e.override and not old.override):
                    self._entries[e.name] = e
                elif not old.override or e.override:
                    errors.append(PluginError(
                        f"{self.noun} {e.name!r} is registered by both {describe(old.plugin)} and "
                        f"{describe(e.plugin)}. Pass override=True in the one that should win, or disable "
                        f"one with ZAGENT_DISABLE_PLUGINS={e.plugin}", plugin=e.plugin))
        return errors

    def drop(self, name: str) -> Entry:
        """Remove one entry and return it; ``KeyError`` if there is none."""
        with self._lock:
            self._snapshot = None
            return self._entries.pop(name)

    def drop_plugin(self, plugin: str) -> None:
        with self._lock:
            self._snapshot = None
            for name in [n for n, e in self._entries.items() if e.plugin == plugin]:
                del self._entries[name]

    def __repr__(self) -> str:
        return f"<Registry {self.kind} ({len(self)})>"


class Registrar:
    """The ``register`` callable one plugin's registration hook gets for one kind, into ``sink``:
    ``register(name, obj, *, override=False)``; for tools also ``register(fn_or_tool, name=..., **tool_options)``;
    for a plugin kind with ``convert``, what that reads (``registry``: the plugin kind's registry)."""

    def __init__(self, kind: str, plugin: str, sink: list[tuple[str, Entry]], registry: Optional[Registry] = None):
        self.kind, self.plugin, self.sink, self.registry = kind, plugin, sink, registry
        self.noun = registry.noun if registry is not None else KINDS[kind][1]

    def __call__(self, *args: Any, override: bool = False, **options: Any) -> Any:
        convert = self.registry.convert if self.registry is not None else None
        if self.kind == "tools" and self.registry is None:  # register(fn, name=...) or register("name", fn)
            name = options.pop("name", None)
            if len(args) == 2 and args[1] is not None and name is None:
                name, obj = args if isinstance(args[0], str) else args[::-1]
                return self._tool(obj, name, override=override, **options)
            return self._tool(args[0] if args else None, name, override=override, **options)
        if convert is not None:
            name, obj = convert(*args, **options)
        elif options or len(args) not in (1, 2) or (self.registry is not None and len(args) != 2):
            raise PluginError(f"plugin {self.plugin!r} registered a {self.noun} badly: call register(name, obj, "
                              f"override=False), not with {len(args)} argument(s) and {sorted(options)}",
                              plugin=self.plugin)
        else:
            name, obj = args if len(args) == 2 else (args[0], None)
        if not isinstance(name, str) or not name or ":" in name:
            raise PluginError(f"plugin {self.plugin!r} registered a {self.noun} with invalid name {name!r}; "
                              "use a non-empty string without ':'", plugin=self.plugin)
        if obj is None:
            raise PluginError(f"plugin {self.plugin!r} registered {self.noun} {name!r} without an object",
                              plugin=self.plugin)
        self.sink.append((self.kind, Entry(name, obj, self.plugin, bool(override))))
        return obj

    def _tool(self, tool: Any, name: Any = None, *, override: bool = False, **options: Any) -> Tool:
        changes = {k: v for k, v in options.items() if v is not None}
        if not isinstance(tool, Tool):
            tool = Tool.from_function(tool, name=name, **changes)
        elif name or options:
            tool = attrs.evolve(tool, **changes, **({"name": name} if name else {}))
        made: Tool = tool
        self.sink.append(("tools", Entry(made.name, made, self.plugin, override)))
        return made
