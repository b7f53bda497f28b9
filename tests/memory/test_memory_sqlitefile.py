"""The small stores' shared SQLite opener (``plugins/memory/sqlitefile.py``): private files, clear refusals."""

import os
import stat
import sys

import pytest

from zagent.errors import ConfigError
from zagent.plugins.memory.documents import DocumentStore
from zagent.plugins.memory.session import SQLiteSession
from zagent.plugins.memory.sqlitefile import open_private


def _open_descriptors_on(path):
    folder = "/proc/self/fd"
    found = []
    for fd in os.listdir(folder):
        try:
            if os.readlink(os.path.join(folder, fd)) == str(path):
                found.append(fd)
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_a_refused_file_leaves_no_connection_open(tmp_path):
    """A file SQLite cannot use is refused with ConfigError and its connection is closed, not left to the GC."""
    bad = tmp_path / "notes.db"
    bad.write_text("not a database at all" * 100)
    with pytest.raises(ConfigError, match="notes.db") as caught:
        open_private(str(bad), ("CREATE TABLE t (x)",), busy_timeout=1.0, what="test file", refused="give another")
    assert "give another" in str(caught.value)
    assert _open_descriptors_on(bad) == []


@pytest.mark.parametrize("make", [lambda p: SQLiteSession("s", p), lambda p: DocumentStore(p)],
                         ids=["session", "documents"])
def test_both_stores_create_their_file_private_in_a_private_folder(tmp_path, make):
    """Sessions and documents open through one helper: a new file is 0600 and a folder it makes 0700."""
    path = tmp_path / "new" / "store.db"
    store = make(str(path))
    store._db()
    store.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_the_document_store_refusal_names_the_file_and_what_to_give(tmp_path):
    """A document path holding something else is a ConfigError naming the file and asking for a new one."""
    bad = tmp_path / "notes.db"
    bad.write_text("not a database at all" * 100)
    with pytest.raises(ConfigError, match=r"document store .*notes\.db.*give a new file"):
        DocumentStore(str(bad)).count()
