"""The skills plugin's own hook: ``zagent_register_skills``.

Owned by the skills plugin, which names this module as its ``zagent_hookspecs``:
the kernel adds the spec before it checks any plugin's hooks, so a plugin
implementing it loads from an entry point, from ``Kernel(plugins=[...])`` in
any order, or later with ``kernel.add_plugin(...)``. ``install`` stays for a
kernel the skills plugin was added to after start-up.
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
