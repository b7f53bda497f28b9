"""The Kernel facade's registry look-ups: a named entry or a ``ConfigError`` listing what is installed, what a
registered factory builds, and the cache keys of built instances."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ..errors import ConfigError, ZagentError
from .registries import Entry, Registry

_NONE = Registry("none", hook="-", noun="-")  # a kind no loaded plugin declares


def names(registries: dict[str, Registry], kind: str) -> str:
    """The registered names of ``kind`` for an error message (``listed``)."""
    return listed(registries[kind])


def listed(names: Iterable[str]) -> str:
    """``names`` joined for an error message, or a hint that the plugin is missing when there are none."""
    return ", ".join(names) or "none (is the plugin installed and enabled?)"


def find(kernel: Any, kind: str, name: str) -> Optional[Any]:
    """``Kernel.find``: what is registered as ``name`` of ``kind`` (``"tools"``, ``"parsers"``...), or ``None``."""
    return kernel.registries.get(kind, _NONE).get(name)


def registry_of(kernel: Any, kind: str) -> Optional[Registry]:
    """``Kernel.registry_of``: the live registry of ``kind`` (or ``None``), for objects that must not hold it."""
    registry: Optional[Registry] = kernel.registries.get(kind)
    return registry


def registered_names(kernel: Any, kind: str) -> list[str]:
    """``Kernel.names``: the names registered for ``kind``, sorted."""
    return list(kernel.registries.get(kind, _NONE))


def entries(kernel: Any, kind: str) -> tuple[Entry, ...]:
    """``Kernel.entries``: every ``Entry`` of ``kind``, by name; the same tuple until the kind changes."""
    registry: Registry = kernel.registries.get(kind, _NONE)
    return registry.entries()


def lookup(registries: dict[str, Registry], kind: str, name: str) -> Any:
    """The entry ``name`` of ``kind``, or a ``ConfigError`` naming what is installed."""
    obj = registries[kind].get(name)
    if obj is None:
        raise ConfigError(f"unknown {registries[kind].noun} {name!r}; installed: {names(registries, kind)}")
    return obj


def embedder(registries: dict[str, Registry], cache: dict[Any, Any], name: Optional[str],
             options: dict[str, Any]) -> Any:
    """See ``Kernel.embedder``: instances are kept in ``cache`` by name and options."""
    if name is None:
        name = next(iter(registries["embedders"]), None)
        if name is None:
            return None
    key = cache_key(name, options)
    found = cache.get(key) if key is not None else None
    if found is None:
        found = lookup(registries, "embedders", name)(**options)
        if key is not None:
            cache[key] = found
    return found


def build_agent(owner: Any, registries: dict[str, Registry], spec: Any, trust: Any, deps: Any = None) -> Any:
    """See ``Kernel.agent``: the registered agent builder's ``builder(owner, spec, trust)``, given ``deps``."""
    builder = registries["agent_builders"].get("default")
    if builder is None:
        raise ConfigError("Kernel.agent needs an agent builder and none is registered: add the actions plugin, "
                          "Kernel(plugins=['zagent.plugins.actions']), or load installed plugins (entry_points=True)")
    agent = builder(owner, spec, trust)
    if deps is not None:
        agent.deps = deps
    return agent


def batch_driver(registries: dict[str, Registry]) -> Any:
    """The batch driver ``Kernel.abatch`` hands its work to, or a ``ConfigError`` naming the plugin to add."""
    driver = registries["batch_drivers"].get("default")
    if driver is None:
        raise ConfigError("Kernel.batch needs a batch driver and none is registered: add the batch plugin, "
                          "Kernel(plugins=['zagent.plugins.batch']), or load installed plugins (entry_points=True)")
    return driver


def build(factory: Any, what: str, *args: Any, **options: Any) -> Any:
    """``factory(*args, **options)``; options of the wrong type are a ``ConfigError`` naming ``what`` and them."""
    try:
        return factory(*args, **options)
    except ZagentError:
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{what} does not accept these options ({', '.join(sorted(options)) or 'none'}): "
                          f"{type(exc).__name__}: {exc}; check their types against its documentation") from exc


def cache_key(spec: str, options: dict[str, Any]) -> Any:
    """A hashable key for ``(spec, options)``, or ``None`` when an option cannot be hashed (no caching)."""
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
    if isinstance(value, (set, frozenset)):  # unhashable, it made a new model on every call
        return frozenset(_freeze(v) for v in value)
    return value
