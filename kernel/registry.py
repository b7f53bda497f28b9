"""Named things plugins register (providers, parsers, tools, memory, embedders, agent types, executors).

Registrations are collected per plugin first and resolved afterwards, so a
plugin whose registration hook fails can be dropped whole, and a clash can
name both plugins. The rule: a name is registered once per kind; a second
registration is a clash unless exactly one of them says ``override=True``,
which then wins whatever the load order.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, NamedTuple, Optional

from .errors import PluginError

KINDS = {
    "providers": ("zagent_register_providers", "provider"),
    "parsers": ("zagent_register_parsers", "parser"),
    "tools": ("zagent_register_tools", "tool"),
    "memory": ("zagent_register_memory", "memory backend"),
    "embedders": ("zagent_register_embedders", "embedder"),
    "agent_types": ("zagent_register_agent_types", "agent type"),
    "executors": ("zagent_register_executors", "executor"),
}


class Entry(NamedTuple):
    name: str
    obj: Any
    plugin: str
    override: bool


class Registry:
    """One kind of named things, e.g. every provider factory, with who registered each."""

    def __init__(self, kind: str):
        self.kind = kind
        self.noun = KINDS[kind][1]
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

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

    def values(self) -> list[Any]:
        return [self._entries[n].obj for n in sorted(self._entries)]

    def merge(self, new: list[Entry], describe: Callable[[str], str]) -> list[PluginError]:
        """Add ``new`` entries; return one ``PluginError`` per clash (the clashing entry is not added).

        Serialised by a lock: a plugin may add entries from its own thread after start-up.
        """
        with self._lock:
            return self._merge(new, describe)

    def _merge(self, new: list[Entry], describe: Callable[[str], str]) -> list[PluginError]:
        errors: list[PluginError] = []
        for e in new:
            old = self._entries.get(e.name)
            if old is None or (e.override and not old.override):
                self._entries[e.name] = e
            elif old.override and not e.override:
                continue
            else:
                errors.append(PluginError(
                    f"{self.noun} {e.name!r} is registered by both {describe(old.plugin)} and "
                    f"{describe(e.plugin)}. Pass override=True in the one that should win, or disable "
                    f"one with ZAGENT_DISABLE_PLUGINS={e.plugin}",
                    plugin=e.plugin,
                ))
        return errors

    def drop(self, name: str) -> Entry:
        """Remove one entry and return it; ``KeyError`` if there is none."""
        with self._lock:
            return self._entries.pop(name)

    def drop_plugin(self, plugin: str) -> None:
        with self._lock:
            for name in [n for n, e in self._entries.items() if e.plugin == plugin]:
                del self._entries[name]

    def __repr__(self) -> str:
        return f"<Registry {self.kind} ({len(self)})>"
