"""The skills plugin's own hook, ``zagent_register_skills``: a ``registry_hookspec`` filling
``kernel.entries("skills")``, named by the plugin's ``zagent_hookspecs``. See docs/skills.md, "Third-party skills".
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

    ``register(skill, *, override=False)`` takes a ``Skill`` or a dict of its fields; a name two plugins register
    is a problem naming both unless one passes ``override=True``; a bad skill drops the plugin with an error.
    Called once per kernel when it starts (or the plugin is added). Example: docs/skills.md.
    """
