"""Checks on a plugin's hook implementations at registration: wrappers, argument names not in the spec
and arguments with defaults are refused with a ``PluginError`` naming the plugin and the hook."""

from __future__ import annotations

from typing import Any, Optional

import pluggy


def impl_problem(pm: pluggy.PluginManager, plugin: Any, name: str) -> Optional[str]:
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


def validation_message(pm: pluggy.PluginManager, name: str, exc: pluggy.PluginValidationError) -> str:
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
