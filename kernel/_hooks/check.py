"""Checks on a plugin's hook implementations at registration: wrappers, argument names not in the spec
and arguments with defaults are refused with a ``PluginError`` naming the plugin and the hook.
"""

from __future__ import annotations

from typing import Any, Optional

import pluggy


def wrapper_problem(pm: pluggy.PluginManager, plugin: Any, name: str) -> Optional[str]:
    """A message if ``plugin`` declares any hook implementation as a wrapper, else None."""
    bad = []
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and (impl.hookwrapper or getattr(impl, "wrapper", False)):
                bad.append(caller.name)
    if not bad:
        return None
    return (f"plugin {name!r} declares {', '.join(sorted(bad))} with wrapper=True/hookwrapper=True; zagent calls "
            f"hook implementations one by one and does not run wrappers: drop the option and return the "
            f"value (rails return None, Deny or Rewrite; see docs/hooks.md)")


def validation_message(pm: pluggy.PluginManager, name: str, exc: pluggy.PluginValidationError) -> str:
    """pluggy's validation error, reworded to name the plugin, the hook and the spec's arguments."""
    text = str(exc)
    hook = _between(text, "for hook '", "'")
    if "can not be found in the hookspec" in text:
        missing = _between(text, "Argument(s) ", " are declared")
        caller = getattr(pm.hook, hook, None) if hook else None
        spec = getattr(caller, "spec", None)
        offered = f" (it offers: {', '.join(spec.argnames)})" if spec is not None else ""
        return (f"plugin {name!r}: hook {hook or '?'} takes argument(s) {missing or '?'} that its spec does not "
                f"offer{offered}; use only the spec's argument names (docs/hooks.md lists them)")
    return f"plugin {name!r} is not a valid zagent plugin: {' '.join(text.split())}"


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i:j] if j >= 0 else ""


def default_args_problem(pm: pluggy.PluginManager, plugin: Any, name: str) -> Optional[str]:
    """A message if one of ``plugin``'s hook implementations gives an argument a default, else None.

    pluggy (and zagent) pass an implementation only its arguments *without* a default, so ``context=None``
    (a misspelt ``ctx``) or ``ctx=None`` would silently always get the default."""
    bad = []
    for caller in pm.get_hookcallers(plugin) or []:
        spec = caller.spec
        if spec is None:  # an unknown hook: reported on its own
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin or not impl.kwargnames:
                continue
            unknown = [a for a in impl.kwargnames if a not in spec.argnames]
            known = [a for a in impl.kwargnames if a in spec.argnames]
            what = []
            if unknown:
                what.append(f"argument(s) {', '.join(unknown)} (with a default) that its spec does not offer")
            if known:
                what.append(f"a default for {', '.join(known)}")
            bad.append(f"hook {caller.name} takes {' and '.join(what)} (it offers: {', '.join(spec.argnames)})")
    if not bad:
        return None
    return (f"plugin {name!r}: {'; '.join(bad)}; zagent passes a hook implementation only its arguments without "
            f"a default, so these would always get their default: use the spec's argument names, with no "
            f"default (docs/hooks.md lists them)")
