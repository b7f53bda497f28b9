"""The ``Skill`` record, its lifecycle ``Transition``, and the helpers that name and fingerprint skills
(``slugify``; ``check_name``, a ``ConfigError`` for an invalid name; ``content_hash``). Imports only msgspec and
the standard library.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, Optional, TypeGuard

import msgspec

State = Literal["idle", "active", "stale", "archived", "review"]
#: ``review``: curated automatically from a run, never matched until a person activates it
STATES: tuple[str, ...] = ("idle", "active", "stale", "archived", "review")
#: the states whose skills are never matched
UNMATCHED = ("archived", "review")
CONTENT_FIELDS = ("description", "when_to_use", "instructions", "tool_sequence", "examples")
_SLUG = re.compile(r"[^a-z0-9]+")
NAME_RULE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def is_state(value: object) -> TypeGuard[State]:
    """Whether ``value`` is one of ``STATES``."""
    return value in STATES


class Skill(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A reusable skill.

    :ivar name: unique slug (``lower-case-with-dashes``); the file is ``<name>.md``.
    :ivar instructions: prompt text injected when the skill is used.
    :ivar tool_sequence: the tools, in the order a good run called them.
    :ivar examples: user requests the skill served (used for matching).
    :ivar version: bumped by every change the Curator makes.
    :ivar provenance: ids of the trajectories it was learned from.
    :ivar usage_count / success_count / last_used: figures from runs that used it.
    :ivar state: ``idle`` (never used), ``active``, ``stale``, ``archived`` or ``review`` (curated automatically,
        waiting for a person).
    :ivar edited_by_human: a person changed the file since zagent last wrote it (``content_hash`` no longer
        matches); cleared when zagent next writes it, keeping the person's file as ``<name>.v<version>.md``.
    :ivar source: ``folder`` or the name of the plugin that registered it.
    """

    name: str
    description: str = ""
    when_to_use: str = ""
    instructions: str = ""
    tool_sequence: list[str] = []
    examples: list[str] = []
    version: int = 1
    provenance: list[str] = []
    created: float = 0.0
    usage_count: int = 0
    success_count: int = 0
    last_used: Optional[float] = None
    state: State = "idle"
    state_changed: float = 0.0
    edited_by_human: bool = False
    content_hash: str = ""
    source: str = "folder"

    @property
    def success_rate(self) -> Optional[float]:
        """Share of the runs using this skill that completed, or ``None`` before its first use."""
        return self.success_count / self.usage_count if self.usage_count else None

    def summary(self) -> str:
        return f"{self.name} v{self.version} [{self.state}] {self.description}".strip()


class Transition(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """One recorded lifecycle change of a skill."""

    skill: str
    from_state: str
    to_state: str
    reason: str
    at: float


def content_hash(skill: Skill) -> str:
    """A fingerprint of what a person edits (description, when to use, instructions, tools, examples)."""
    data = [skill.description.strip(), skill.when_to_use.strip(), skill.instructions.strip(),
            list(skill.tool_sequence), list(skill.examples)]
    return hashlib.sha256(msgspec.json.encode(data)).hexdigest()[:16]


def slugify(text: str, fallback: str = "skill") -> str:
    """A valid skill name from free text: lower case, dashes, at most 64 characters."""
    from zagent.speckit.paths import windows_device

    slug = _SLUG.sub("-", (text or "").lower()).strip("-")[:64].strip("-") or fallback
    return f"{slug}-skill" if windows_device(slug) else slug  # never con.md: the console on Windows


def check_name(name: str) -> str:
    """``name`` if it is a valid skill name, else ``ConfigError`` saying what is allowed."""
    from zagent.errors import ConfigError

    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):  # not match: "$" allows a newline after
        raise ConfigError(f"invalid skill name {name!r}: use lower-case letters, digits and dashes "
                          f"(at most 64), e.g. {slugify(str(name))!r}")
    from zagent.speckit.paths import DEVICES_SAID, windows_device

    if windows_device(name):  # the skill's file name: aux.md opens the device wherever it lies on Windows
        raise ConfigError(f"invalid skill name {name!r}: it is a Windows device name ({DEVICES_SAID}), and its file "
                          f"{name}.md would open the device there; name it otherwise, e.g. {slugify(name)!r}")
    return name
