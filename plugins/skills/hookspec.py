"""The skills plugin's own hook: ``zagent_register_skills``.

Not (yet) part of ``zagent.hookspecs``: the skills plugin adds this spec to
each kernel's plugin manager when the kernel starts (``install``). A plugin
implementing it must therefore be registered *after* the skills plugin:
listed after it in ``Kernel(plugins=[...])`` is not enough (the kernel checks
hook names when it registers a plugin, before any registration hook runs),
so add it with ``kernel.add_plugin(...)`` once the kernel is up. Moving this
spec into ``zagent.hookspecs`` removes the restriction (see docs/skills.md).
"""

from __future__ import annotations

from typing import Any, Callable

from zagent.hookspecs import hookspec


@hookspec
def zagent_register_skills(register: Callable[..., Any], kernel: Any) -> None:
    """Register ready-made skills (kept in memory; a same-named file in the skills folder wins).

    ``register(skill, *, override=False)`` with a ``zagent.plugins.skills.Skill``
    or a plain dict of its fields. Called when the skills of a kernel are first
    used, and again whenever the set of implementations changes.

    :param register: adds one skill.
    :param kernel: the kernel.

    Example::

        def zagent_register_skills(register):
            register({"name": "unit-conversion", "description": "Convert units",
                      "when_to_use": "the user asks to convert between units",
                      "instructions": "Call convert once with value, from and to."})
    """


def install(kernel: Any) -> None:
    """Add the spec to ``kernel``'s plugin manager (idempotent)."""
    import sys

    caller = getattr(kernel.pm.hook, "zagent_register_skills", None)
    if caller is None or not caller.has_spec():
        kernel.pm.add_hookspecs(sys.modules[__name__])
        kernel.hooks.invalidate()
