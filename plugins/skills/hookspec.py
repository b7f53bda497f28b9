"""The skills plugin's own hook and registry kind: ``zagent_register_skills`` -> ``kernel.entries("skills")``.

Owned by the skills plugin, which names this module as its ``zagent_hookspecs``.
The spec is a ``registry_hookspec``: the kernel adds the hook and the registry
before it checks any plugin's hooks, so a plugin implementing it loads from an
entry point, from ``Kernel(plugins=[...])`` in any order, or later with
``kernel.add_plugin(...)``, and two plugins registering one skill name get the
kernel's clash check (a problem naming both, unless one passes ``override=True``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from zagent import registry_hookspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def skill_entry(skill: Any) -> tuple[str, Any]:
    """``register(skill)``'s argument (a ``Skill`` or a dict of its fields) as ``(name, Skill)``;
    ``ConfigError`` naming the problem for anything else."""
    from .registry import as_skill

    converted = as_skill(skill)
    return converted.name, converted


@registry_hookspec("skills", noun="skill", convert=skill_entry)
def zagent_register_skills(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Register ready-made skills (kept in memory; a same-named file in the skills folder wins).

    ``register(skill, *, override=False)`` with a ``zagent.plugins.skills.Skill``
    or a plain dict of its fields, into ``kernel.entries("skills")``. Called
    once per kernel when it starts (or when the plugin is added), like the
    kernel's own registration hooks; a bad skill drops the plugin with an error.

    :param register: adds one skill; a name two plugins register is a problem naming
        both unless one of them passes ``override=True``.
    :param kernel: the kernel.

    Example::

        def zagent_register_skills(register):
            register({"name": "unit-conversion", "description": "Convert units",
                      "when_to_use": "the user asks to convert between units",
                      "instructions": "Call convert once with value, from and to."})
    """
