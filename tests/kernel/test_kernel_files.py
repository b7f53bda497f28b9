"""write_atomic: a file is replaced whole, and a failed write leaves the old content and no temp file."""

import os

import pytest

from zagent.agentkit.files import write_atomic


def test_write_atomic_replaces_content(tmp_path):
    """Text and bytes both replace the file's content."""
    path = tmp_path / "a.json"
    write_atomic(path, "one")
    write_atomic(path, b"two")
    assert path.read_text() == "two"


def test_failed_write_keeps_old_content_and_cleans_up(tmp_path, monkeypatch):
    """If the rename fails, the old file is untouched and the temporary file is removed."""
    path = tmp_path / "a.json"
    path.write_text("old")

    def broken(src, dst):
        raise OSError("disk said no")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk said no"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
