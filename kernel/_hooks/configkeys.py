"""Settings nothing reads: a key of ``Kernel(config=...)`` or of an agent's ``agent_config`` that neither the kernel
nor a loaded plugin reads (``zagent_config_keys``) is a ``ConfigError``, since it would be ignored silently."""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..errors import ConfigError, PluginError
from .runner import HookRunner, Impl

#: keys the kernel reads; the last five are read by the kits plugins use (``speckit``, ``agentkit``, ``providerkit``)
KERNEL_KEYS = frozenset({"model", "profiles", "profile", "tool_threads", "tool_threads_abandoned",
                         "tool_threads_abandoned_per_tool", "executor", "max_tool_concurrency", "max_models",
                         "spec_paths", "trusted_imports", "checkpoint_key", "trusted_base_urls",
                         "accept_unsealed_counts"})


class ConfigKeys:
    """The keys read on one kernel, collected again after a plugin is added or removed."""

    def __init__(self, hooks: HookRunner):
        self._hooks = hooks
        self._seen: Optional[tuple[Impl, ...]] = None
        self._keys: frozenset[str] = KERNEL_KEYS

    def read(self) -> frozenset[str]:
        impls = self._hooks.impls("zagent_config_keys")
        if impls is not self._seen:
            keys = set(KERNEL_KEYS)
            for impl in impls:
                try:
                    found = self._hooks.call_one("zagent_config_keys", impl, {})
                except Exception as exc:
                    raise PluginError(f"plugin {impl[0]!r} failed in zagent_config_keys: {type(exc).__name__}: "
                                      f"{exc}", plugin=impl[0]) from exc
                keys.update(_claimed(impl[0], found))
            self._seen, self._keys = impls, frozenset(keys)
        return self._keys

    def check(self, config: Mapping[str, Any], where: str, failed: Sequence[Any] = ()) -> None:
        """``ConfigError`` for the first set key of ``config`` nothing reads (an empty value sets nothing);
        ``failed``: the kernel's ``PluginProblem``s, named in the message (the reader may be one of them)."""
        read = self.read()
        for key, value in config.items():
            if key not in read and not _empty(value):
                near = difflib.get_close_matches(str(key), sorted(read), n=1, cutoff=0.8)
                hint = f"did you mean {near[0]!r}? " if near else ""
                broken = "; ".join(f"{p.plugin}: {p.error[:200]}" for p in failed[:3])
                error = ConfigError(
                    f"{where} key {key!r} is read by no loaded plugin, so it would be ignored: {hint}load the plugin "
                    "that reads it (Kernel(plugins=[...]) or its entry point), or remove the key"
                    + (f" (plugins that failed: {broken})" if broken else ""))
                error.key = str(key)
                raise error


def _claimed(plugin: str, keys: Any) -> Iterable[str]:
    if isinstance(keys, str) or not isinstance(keys, Iterable):
        raise PluginError(f"plugin {plugin!r}: zagent_config_keys must return an iterable of key names, "
                          f"got {type(keys).__name__}", plugin=plugin)
    names = list(keys)
    if not all(isinstance(name, str) for name in names):
        raise PluginError(f"plugin {plugin!r}: zagent_config_keys returned a key that is not a string",
                          plugin=plugin)
    return names


def _empty(value: Any) -> bool:
    """``None``, ``False`` or an empty string, mapping or list: a setting that sets nothing (``0`` sets a number)."""
    return value is None or value is False or (isinstance(value, (str, dict, list, tuple)) and not value)
