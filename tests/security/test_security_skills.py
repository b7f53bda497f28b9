"""Attack: a skill file in the skills folder is a symlink to a file outside it (keys, another app's data)."""

import os

import pytest

from zagent.plugins.skills import SkillRegistry, markdown
from zagent.plugins.skills.skill import Skill

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


def skill_text(name, instructions):
    return markdown.render(Skill(name=name, description="d", when_to_use="w", instructions=instructions))


def test_a_symlinked_skill_pointing_outside_is_not_read(tmp_path, caplog):
    """skills/leak.md -> ../outside/leak.md is skipped (and logged); a real file next to it is read."""
    folder, outside = tmp_path / "skills", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (outside / "leak.md").write_text(skill_text("leak", "SECRET-FROM-OUTSIDE"))
    os.symlink(outside / "leak.md", folder / "leak.md")
    (folder / "fine.md").write_text(skill_text("fine", "normal instructions"))
    registry = SkillRegistry(str(folder)).load()
    assert registry.names() == ["fine"]
    assert "points outside the skills folder" in caplog.text


def test_a_symlinked_skills_subfolder_target_is_not_followed_out(tmp_path):
    """A symlink to a file elsewhere is refused even when the link's own name looks like a skill."""
    folder = tmp_path / "skills"
    folder.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text(skill_text("id_rsa", "-----BEGIN PRIVATE KEY-----"))
    os.symlink(secret, folder / "id_rsa.md")
    assert "id_rsa" not in SkillRegistry(str(folder)).load().names()


def test_a_symlink_inside_the_folder_is_fine(tmp_path):
    """A link to another file inside the folder stays readable (its real path is inside)."""
    folder = tmp_path / "skills"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "same.md").write_text(skill_text("same", "inside"))
    os.symlink(folder / "sub" / "same.md", folder / "same.md")
    assert SkillRegistry(str(folder)).load()["same"].instructions == "inside"
