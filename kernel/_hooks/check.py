"""Checks on a plugin's hook implementations, run when the plugin is registered.

zagent calls hook implementations itself, one at a time (see ``runner.py``), so
pluggy's wrapper machinery never runs: an implementation declared with
``wrapper=True`` or ``hookwrapper=True`` would be called as a plain function
and hand back a generator. Such a plugin is refused at registration with a
``PluginError`` naming the plugin and the hook, as pluggy refuses an
implementation whose argument names are not in the spec (that message is
reworded here so it names the spec's arguments).
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
