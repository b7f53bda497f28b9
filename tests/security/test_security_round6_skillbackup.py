"""Round six: the skills writer's backup (``SkillWriter.backup``, run before a person's edit is replaced) reads
the skill file it keeps like every other data file: a FIFO is a ``ConfigError`` (before: the open hung), a
symlink another user planted is not followed (before: followed), a huge file is not read whole (before: read
whole into memory).
"""

import os
import threading

import pytest

from zagent import ConfigError, Kernel

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def writer(tmp_path):
    """A ``SkillWriter`` on ``tmp_path/skills`` (a fresh kernel loads the plugin, as an app would)."""
    k = Kernel(plugins=["zagent.plugins.skills"], entry_points=False)
    from zagent.plugins.skills.writer import SkillWriter

    (tmp_path / "skills").mkdir()
    yield SkillWriter(str(tmp_path / "skills"))
    k.close()


def unblock_later(path):
    """Open the FIFO ``path`` for writing after a while and close it, so a reader stuck in open returns
    (the test then fails instead of hanging)."""
    def run():
        import time

        time.sleep(1.5)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader: nothing is stuck
            return
        os.close(fd)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@needs_fifo
def test_the_backup_of_a_fifo_skill_file_is_refused_without_hanging(writer, tmp_path):
    """``backup`` of a skill file that is a FIFO: a ConfigError saying it is not a regular file, no hang."""
    fifo = tmp_path / "skills" / "price-totals.md"
    os.mkfifo(fifo)
    unblock_later(str(fifo))
    with pytest.raises(ConfigError, match="not a regular file"):
        writer.backup("price-totals")


def test_the_backup_of_a_huge_skill_file_is_refused(writer, tmp_path):
    """``backup`` of a 70 MB (sparse) skill file: a ConfigError naming the bound; no backup written."""
    with open(tmp_path / "skills" / "price-totals.md", "wb") as f:
        f.write(b"---\nname: price-totals\n---\n")
        f.truncate(70 * 2**20)
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        writer.backup("price-totals")
    assert sorted(os.listdir(tmp_path / "skills")) == ["price-totals.md"]


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant a foreign link")
def test_a_foreign_symlink_skill_file_is_not_followed_by_the_backup(writer, tmp_path):
    """A skill file that is another user's symlink (to a file in the folder): refused, never read or copied."""
    skills = tmp_path / "skills"
    (skills / "notes.txt").write_text("private notes")
    link = skills / "price-totals.md"
    link.symlink_to(skills / "notes.txt")
    os.lchown(link, 12345, 12345)
    with pytest.raises(ConfigError, match="another user"):
        writer.backup("price-totals")
    assert sorted(os.listdir(skills)) == ["notes.txt", "price-totals.md"]
