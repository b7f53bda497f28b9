"""``LifecycleManager``: idle → active → stale → archived. ``sweep(now)`` applies the age rules
(``stale_after_days``, ``archive_after_days``; ``now`` defaults to the registry's clock); ``activate`` and
``archive`` move a skill by hand. Every change goes through ``SkillRegistry.set_state``, which records it. Rules:
docs/skills.md, "Lifecycle".
"""

from __future__ import annotations

from typing import Optional

import attrs

from .registry import SkillRegistry
from .skill import Skill, Transition

DAY = 86400.0


@attrs.define(repr=False, eq=False, kw_only=True)
class LifecycleManager:
    """Applies the lifecycle rules to the skills of ``registry``."""

    registry: SkillRegistry
    stale_after_days: float = 30.0
    archive_after_days: float = 60.0

    def sweep(self, now: Optional[float] = None) -> list[Transition]:
        """Apply the age rules to every skill; return the transitions made."""
        now = self.registry.clock() if now is None else now
        made: list[Transition] = []
        for skill in self.registry.list():
            target = self._due(skill, now)
            if target is not None:
                to, reason = target
                made.append(Transition(skill=skill.name, from_state=skill.state, to_state=to, reason=reason, at=now))
                self.registry.set_state(skill.name, to, reason, at=now)
        return made

    def _due(self, skill: Skill, now: float) -> Optional[tuple[str, str]]:
        if skill.state in ("idle", "active"):
            since = skill.last_used or skill.created or skill.state_changed
            if now - since >= self.stale_after_days * DAY:
                return "stale", f"unused for {self.stale_after_days:g} days"
        elif skill.state == "stale":
            since = max(skill.state_changed, skill.last_used or 0.0)
            if now - since >= self.archive_after_days * DAY:
                return "archived", f"stale and unused for {self.archive_after_days:g} more days"
        return None

    def activate(self, name: str, reason: str = "activated by hand") -> Skill:
        """Make a skill active again (from any state)."""
        return self.registry.set_state(name, "active", reason)

    def archive(self, name: str, reason: str = "archived by hand") -> Skill:
        """Archive a skill: it is kept but never matched."""
        return self.registry.set_state(name, "archived", reason)

    def history(self, name: Optional[str] = None) -> list[Transition]:
        return self.registry.history(name)

    def __repr__(self) -> str:
        return f"<LifecycleManager stale={self.stale_after_days:g}d archive={self.archive_after_days:g}d>"
