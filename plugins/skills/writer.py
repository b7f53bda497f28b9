"""``SkillWriter``: writes skill files atomically (a reader or a killed process sees the old file or the new one),
first keeping a person's edited file as ``<name>.v<version>.md`` when asked (a backup is never overwritten).
``read_skill`` reads a skill file safely, at most ``MAX_SKILL_BYTES``. Backups are not loaded as skills.
"""

from __future__ import annotations

import os
import re
from typing import Optional

import attrs
from zagent.agentkit.files import open_regular, write_atomic
from zagent.agentkit.privatefiles import private_folder
from zagent.errors import ConfigError

from . import markdown
from .paths import inside
from .skill import Skill, check_name, content_hash

BACKUP = re.compile(r"\.v\d+(-\d+)?\.md$")
#: bytes of a skill file read at most: its text goes into prompts
MAX_SKILL_BYTES = 2**20


def read_skill(path: str) -> str:
    """The text of skill file ``path`` (newlines as text mode reads them), opened with ``open_regular``: a FIFO or
    another user's symlink is a ``ConfigError``, never a hang or followed; larger than ``MAX_SKILL_BYTES``
    refused."""
    with open_regular(path) as f:
        raw = f.read(MAX_SKILL_BYTES + 1)  # never more: a file in a shared folder may be gigabytes (sparse)
    if len(raw) > MAX_SKILL_BYTES:
        raise ConfigError(f"the skill file {path!r} is larger than {MAX_SKILL_BYTES // 2**20} MiB; its text goes "
                          "into prompts, so a file that big is not a skill. Shorten it or remove it from the folder")
    try:
        return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the skill file {path!r} is not UTF-8 text ({exc}); save it as UTF-8") from None


@attrs.define(repr=False)
class SkillWriter:
    """Writes ``Skill``s as Markdown files into ``folder`` (created on first write)."""

    folder: str = attrs.field(converter=os.fspath)

    def path(self, name: str) -> str:
        return os.path.join(self.folder, f"{check_name(name)}.md")

    def write(self, skill: Skill, *, keep_previous: bool = False) -> Optional[str]:
        """Write ``skill`` (its ``content_hash`` refreshed); return the backup path if one was kept.

        ``keep_previous=True`` (the registry passes it when the file on disk holds a
        person's edit) keeps the current file as ``<name>.v<old version>.md`` first.
        """
        private_folder(self.folder)  # a new folder is the user's alone (0700), as the index's
        path = self.path(skill.name)
        backup = None
        if keep_previous and os.path.exists(path):
            backup = self.backup(skill.name)
        skill.content_hash = content_hash(skill)
        _atomic_write(path, markdown.render(skill))
        return backup

    def backup(self, name: str) -> str:
        """Copy ``<name>.md`` to ``<name>.v<version>.md`` (a free name) and return that path."""
        path = self.path(name)
        inside(path, self.folder)  # no link out of the folder; then read as any data file (no FIFO, bounded)
        text = read_skill(path)
        try:
            version = int(markdown.parse(text, path).get("version", 1))
        except Exception:  # a broken file is still kept, under version 0
            version = 0
        if not 0 <= version < 10**9:  # 'deploy.v-1.md' is no backup (BACKUP) but a skill file; 10**300 too long a name
            version = 0
        target, n = os.path.join(self.folder, f"{name}.v{version}.md"), 0
        while os.path.exists(target):
            n += 1
            target = os.path.join(self.folder, f"{name}.v{version}-{n}.md")
        _atomic_write(target, text)
        return target

    def delete(self, name: str) -> bool:
        """Remove ``<name>.md`` (backups stay); ``False`` if there was none."""
        try:
            os.remove(self.path(name))
        except FileNotFoundError:
            return False
        return True

    def __repr__(self) -> str:
        return f"<SkillWriter {self.folder}>"


def is_skill_file(filename: str) -> bool:
    """``*.md`` files that are not backups (``name.v3.md``) or hidden."""
    return filename.endswith(".md") and not filename.startswith(".") and not BACKUP.search(filename)


def _atomic_write(path: str, text: str) -> None:
    write_atomic(path, text)
