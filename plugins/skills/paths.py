"""Skill files stay in their folder and the folder stays small: ``inside`` refuses a path whose real location is
elsewhere; ``skill_entries`` lists a folder's skill files, refusing more than ``MAX_SKILL_FILES`` of them or
``MAX_SKILLS_BYTES`` together (by size, before any is read)."""

from __future__ import annotations

import os
from typing import Callable

from zagent.errors import ConfigError

#: the most skill files one folder may hold: each is read whenever the folder changes and matched to every request
MAX_SKILL_FILES = 1000
#: the most bytes a folder's skill files may hold together (each file is at most ``writer.MAX_SKILL_BYTES``)
MAX_SKILLS_BYTES = 16 * 2**20


def inside(path: str, folder: str, what: str = "skill files") -> str:
    """The real path of skill file ``path``, which must lie inside ``folder`` (a symlink pointing out of the
    folder, to ``~/.ssh/id_rsa`` or another app's files, is refused: skill text is injected into prompts), with one
    name (a hard link is refused too).
    ``what`` names the file in the error (the folder's index, linked to the user's database, is refused too)."""
    root = os.path.realpath(folder)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise ConfigError(f"{path} points outside the skills folder {root} (to {real}); {what} must live "
                          "in the folder (copy the file in instead of linking it)")
    try:
        links = os.stat(real).st_nlink if os.path.isfile(real) else 1
    except OSError:  # not made yet, or reading it says what is wrong
        links = 1
    if links > 1:  # a hard link: another of its names may be the user's file elsewhere (notes, keys)
        raise ConfigError(f"{path} has {links} hard links (another of its names may be a file of yours outside "
                          f"the skills folder {root}); {what} must live in the folder (copy the file in instead of "
                          "linking it)")
    return real


def skill_entries(folder: str, is_skill_file: Callable[[str], bool]) -> "list[os.DirEntry[str]]":
    """The skill files of ``folder`` (by name), after checking their count and total size (``ConfigError`` saying
    what the folder holds and what to do); a missing folder has none."""
    try:
        entries = sorted((e for e in os.scandir(folder) if e.is_file() and is_skill_file(e.name)), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    if len(entries) > MAX_SKILL_FILES:
        raise ConfigError(f"the skills folder {folder} holds {len(entries)} skill files, more than the "
                          f"{MAX_SKILL_FILES} zagent reads (each is read when the folder changes and matched against "
                          "every request); no skill of it is used. Remove the skills you do not need from the "
                          "folder, or split them into folders of their own")
    from .writer import MAX_SKILL_BYTES  # a file over it is skipped with its own warning, never read: not counted

    total = sum(size for size in (e.stat().st_size for e in entries) if size <= MAX_SKILL_BYTES)
    if total > MAX_SKILLS_BYTES:
        raise ConfigError(f"the skills folder {folder} holds {total / 2**20:.1f} MiB of skill files, more than the "
                          f"{MAX_SKILLS_BYTES // 2**20} MiB zagent reads (skill text goes into prompts); no skill of "
                          "it is used. Shorten or remove the largest skill files")
    return entries
