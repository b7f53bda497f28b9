"""``SkillRegistry``: the skills of one folder (``<name>.md`` files, re-read when one changes) and those plugins
register (in memory; a folder file of the same name wins), with their figures from the ``SkillIndex``.
``set_state`` is the one place a state changes, and it records the transition. See docs/skills.md.
"""

from __future__ import annotations

import builtins
import os
import threading
import time
from typing import Any, Callable, Iterable, Optional, Union

import attrs
import msgspec
from zagent.errors import ConfigError
from zagent.speckit.specs import convert_spec
from zagent.agentkit.privatefiles import check_private
from zagent.agentkit.runs import log

from . import markdown, terms
from .index import SkillIndex
from .paths import MAX_SKILL_FILES, inside, skill_entries
from .skill import STATES, Skill, Transition, check_name, content_hash, is_state
from .writer import SkillWriter, is_skill_file, read_skill

SkillIn = Union[Skill, dict[str, Any]]


@attrs.define(repr=False, eq=False)
class SkillRegistry:
    """Skills by name (see the module docstring).

    :param folder: the skills folder (created on first write).
    :param index: a ``SkillIndex`` or its path (default: ``<folder>/.index.sqlite``); ``False`` for none.
    :param clock: returns the time now (Unix seconds); injectable for tests.
    """

    folder: str = attrs.field(converter=os.fspath)
    index: Any = None
    clock: Callable[[], float] = time.time
    writer: SkillWriter = attrs.field(default=None, init=False)
    _folder_skills: dict[str, Skill] = attrs.field(factory=dict, init=False)
    _plugin_skills: dict[str, Skill] = attrs.field(factory=dict, init=False)
    _seen: dict[str, float] = attrs.field(factory=dict, init=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, init=False)

    def __attrs_post_init__(self) -> None:
        if self.index is None:
            path = os.path.join(self.folder, ".index.sqlite")
            check_private(path)  # another user's link is refused saying so; then the user's own link out of the
            inside(path, self.folder, "the skills index")  # folder (to their database, a shipped pack's): never opened
            self.index = SkillIndex(path)
        elif self.index is False:
            self.index = None
        elif isinstance(self.index, (str, os.PathLike)):
            self.index = SkillIndex(self.index)
        self.writer = SkillWriter(self.folder)

    # -- reading -------------------------------------------------------------------

    def load(self) -> "SkillRegistry":
        """(Re-)read every skill file of the folder; broken files are logged and skipped."""
        found: dict[str, Skill] = {}
        seen: dict[str, float] = {}
        if os.path.isdir(self.folder):
            for entry in skill_entries(self.folder, is_skill_file):  # count and total size checked first
                seen[entry.name] = entry.stat().st_mtime_ns
                try:
                    skill = self._read(entry.path, self.folder)
                except (OSError, ConfigError) as exc:
                    log.warning("skills: skipping %s: %s", entry.path, exc)
                    continue
                found[skill.name] = skill
        with self._lock:
            self._folder_skills, self._seen = found, seen
            self._reindex()
        return self

    def import_folder(self, path: Union[str, "os.PathLike[str]"], *, replace: bool = False) -> list[str]:
        """Copy the skills of another folder (a shared pack) into this one; return the names added.

        Names already here are skipped unless ``replace``; figures start afresh.
        """
        added = []
        for entry in skill_entries(os.fspath(path), is_skill_file):  # a pack of 100,000 files is refused unread
            skill = self._read(entry.path, os.fspath(path))
            if skill.name in self._folder_skills and not replace:
                continue
            skill.edited_by_human = False
            self.register(skill, replace=True)
            added.append(skill.name)
        return added

    def refresh(self) -> bool:
        """Re-read the folder if a file was added, removed or changed; ``True`` if it was."""
        try:
            now = {e.name: e.stat().st_mtime_ns for e in os.scandir(self.folder)
                   if e.is_file() and is_skill_file(e.name)}
        except FileNotFoundError:
            now = {}
        if now == self._seen:
            return False
        self.load()
        return True

    def _read(self, path: str, folder: str) -> Skill:
        inside(path, folder)  # no link out of the folder; the file itself read as a data file (writer.read_skill)
        text = read_skill(path)
        skill = markdown.load(text, path)
        stem = os.path.basename(path)[:-3]
        if skill.name != stem:
            raise ConfigError(f"the file is named {stem!r} but its header says name: {skill.name!r}; make them agree")
        check_name(skill.name)
        if skill.content_hash != content_hash(skill):
            skill.edited_by_human = True
        if not skill.created:  # a hand-written file: its age counts from when it was written
            skill.created = os.path.getmtime(path)
        skill.source = "folder"
        return skill

    def get(self, name: str) -> Optional[Skill]:
        """The skill called ``name`` (folder first, then plugins) with its figures, or ``None``."""
        with self._lock:
            skill = self._folder_skills.get(name) or self._plugin_skills.get(name)
        return self._with_stats(skill) if skill is not None else None

    def __getitem__(self, name: str) -> Skill:
        skill = self.get(name)
        if skill is None:
            raise KeyError(f"no skill named {name!r}; known: {', '.join(self.names()) or 'none'}")
        return skill

    def __contains__(self, name: object) -> bool:
        return name in self._folder_skills or name in self._plugin_skills

    def __len__(self) -> int:
        return len(self.names())

    def names(self) -> list[str]:
        with self._lock:
            return sorted(set(self._folder_skills) | set(self._plugin_skills))

    def list(self, states: Optional[Iterable[str]] = None) -> list[Skill]:
        """Every skill (or those in ``states``), by name."""
        wanted = set(states) if states is not None else None
        out = [s for s in (self.get(n) for n in self.names()) if s is not None]
        return [s for s in out if wanted is None or s.state in wanted]

    def _with_stats(self, skill: Skill) -> Skill:
        copy = msgspec.structs.replace(skill)
        stats = self.index.stats(skill.name) if self.index is not None else None
        if stats:
            for key, value in stats.items():
                setattr(copy, key, value)
        elif not copy.state_changed:
            copy.state_changed = copy.created
        return copy

    # -- writing ---------------------------------------------------------------------

    def register(self, skill: SkillIn, *, replace: bool = False) -> Skill:
        """Add a new skill to the folder (``ConfigError`` if the name is taken, unless ``replace``).

        Replacing a file a person edited keeps it as ``<name>.v<version>.md`` first, as ``update`` does.
        """
        skill = as_skill(skill)
        if skill.name in self._folder_skills and not replace:
            raise ConfigError(f"a skill named {skill.name!r} exists already; use update() or another name")
        if skill.name not in self._folder_skills and len(self._folder_skills) >= MAX_SKILL_FILES:
            raise ConfigError(f"the skills folder {self.folder} holds {len(self._folder_skills)} skills, at most "
                              f"{MAX_SKILL_FILES}; skill {skill.name!r} was not added. Remove skills you do not need "
                              "from the folder (zagent skills list shows them) before adding more")
        if not skill.created:
            skill.created = self.clock()
        skill.source = "folder"
        keep = bool(self._edited_on_disk(skill.name))
        skill.edited_by_human = False  # the file written now is zagent's; a person's version is the backup
        self.writer.write(skill, keep_previous=keep)
        self._store(skill)
        if self.index is not None and self.index.stats(skill.name) is None:
            self.index.save_stats(skill.name, {"usage_count": 0, "success_count": 0, "last_used": None,
                                               "state": "idle", "state_changed": skill.created})
        return self[skill.name]

    def update(self, skill: SkillIn) -> Skill:
        """Write a changed skill; a human-edited file is kept as ``<name>.v<version>.md`` first."""
        skill = as_skill(skill)
        current = self._folder_skills.get(skill.name)
        if current is None:
            return self.register(skill)
        on_disk = self._edited_on_disk(skill.name)
        # The file written now is zagent's: a person's edit on disk is kept as the backup, and the flag
        # (which says "the file holds an edit zagent has not written over") clears.
        skill.edited_by_human = False
        skill.created = skill.created or current.created
        skill.source = "folder"
        self.writer.write(skill, keep_previous=bool(on_disk))
        self._store(skill)
        return self[skill.name]

    def _edited_on_disk(self, name: str) -> Optional[bool]:
        """Whether ``<name>.md`` as it is on disk now holds a person's edit (``None``: no file).

        ``register(replace=True)`` and ``update`` both ask this before writing, so a
        person's file is kept as a backup whichever path overwrites it. A file that
        no longer parses counts as edited (a person broke it; keep their text).
        """
        path = self.writer.path(name)
        try:
            return self._read(path, self.writer.folder).edited_by_human
        except FileNotFoundError:
            return None
        except (OSError, ConfigError):
            return True

    def delete(self, name: str) -> bool:
        """Remove a folder skill's file and figures; ``False`` if there was none."""
        with self._lock:
            removed = self._folder_skills.pop(name, None) is not None
            self.writer.delete(name)
            self._seen.pop(f"{name}.md", None)
            if removed and self.index is not None and name not in self._plugin_skills:
                self.index.forget(name)
            self._reindex()
        return removed

    def set_plugin_skills(self, skills: Iterable[tuple[Skill, str]]) -> None:
        """Replace the plugin skills with copies of ``skills`` (each with the plugin that registered it)."""
        fresh = {}
        for skill, plugin in skills:
            copy = msgspec.structs.replace(skill)
            copy.source = plugin
            fresh[copy.name] = copy
        with self._lock:
            self._plugin_skills = fresh
            self._reindex()

    def _store(self, skill: Skill) -> None:
        with self._lock:
            self._folder_skills[skill.name] = msgspec.structs.replace(skill)
            path = self.writer.path(skill.name)
            self._seen[os.path.basename(path)] = os.stat(path).st_mtime_ns
            self._reindex()

    def _reindex(self) -> None:
        if self.index is not None:
            skills = {**self._plugin_skills, **self._folder_skills}
            self.index.reindex((s.name, terms.skill_terms(s)) for s in skills.values())

    # -- figures and state ---------------------------------------------------------------

    def set_state(self, name: str, state: str, reason: str, *, at: Optional[float] = None) -> Skill:
        """Move a skill to ``state`` and record the transition (no-op if it is there already)."""
        if not is_state(state):
            raise ConfigError(f"unknown skill state {state!r}; states: {', '.join(STATES)}")
        skill = self[name]
        if skill.state == state:
            return skill
        now = self.clock() if at is None else at
        if self.index is not None:
            self.index.record(Transition(skill=name, from_state=skill.state, to_state=state, reason=reason, at=now))
        skill.state, skill.state_changed = state, now
        self._save_stats(skill)
        return skill

    def record_use(self, name: str) -> Skill:
        """A run used the skill: count it, stamp it, make it active (figures need the index)."""
        with self._lock:
            self.set_state(name, "active", "used by a run")
            if self.index is not None:
                self.index.count_use(name, self.clock())
            return self[name]

    def record_outcome(self, name: str, success: bool) -> Skill:
        """A run that used the skill ended; a completed run counts as a success."""
        if success and self.index is not None:
            self.index.count_success(name)
        return self[name]

    def history(self, name: Optional[str] = None) -> builtins.list[Transition]:
        found: builtins.list[Transition] = self.index.history(name) if self.index is not None else []
        return found

    def _save_stats(self, skill: Skill) -> None:
        if self.index is not None:
            self.index.save_stats(skill.name, {f: getattr(skill, f) for f in
                                               ("usage_count", "success_count", "last_used", "state", "state_changed")})

    def close(self) -> None:
        if self.index is not None:
            self.index.close()

    def __repr__(self) -> str:
        return f"<SkillRegistry {self.folder} skills={len(self)}>"


def as_skill(skill: SkillIn) -> Skill:
    """A checked copy of ``skill`` (a ``Skill`` or a dict of its fields); ``ConfigError`` otherwise."""
    if isinstance(skill, Skill):
        check_name(skill.name)
        return msgspec.structs.replace(skill)
    if isinstance(skill, dict):
        converted = convert_spec(skill, Skill, "skill")
        check_name(converted.name)
        return converted
    raise ConfigError(f"a skill must be a Skill or a dict, got {type(skill).__name__}")

