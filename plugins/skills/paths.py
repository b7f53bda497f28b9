"""Skill files stay in their folder: ``inside`` refuses a path whose real location is elsewhere."""

from __future__ import annotations

import os

from zagent.errors import ConfigError


def inside(path: str, folder: str, what: str = "skill files") -> str:
    """The real path of skill file ``path``, which must lie inside ``folder`` (a symlink pointing out of the
    folder, to ``~/.ssh/id_rsa`` or another app's files, is refused: skill text is injected into prompts).
    ``what`` names the file in the error (the folder's index, linked to the user's database, is refused too)."""
    root = os.path.realpath(folder)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        raise ConfigError(f"{path} points outside the skills folder {root} (to {real}); {what} must live "
                          "in the folder (copy the file in instead of linking it)")
    return real
