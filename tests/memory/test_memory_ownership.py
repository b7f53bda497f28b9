"""The kernel owns the stores it hands out: ``Kernel.close()`` closes them (file descriptors back), a closed
store raises a typed error, and a file that cannot be written (immutable, read-only directory) is read
without SIGBUS. Real SQLite files; ``chattr`` for immutable files (skipped where it is not permitted)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from zagent import Kernel
from zagent.plugins.memory.errors import StoreError

CHILD = str(pathlib.Path(__file__).with_name("immutable_child.py"))


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _kernel():
    return Kernel(plugins=["zagent.plugins.memory"], entry_points=False)


def _can_chattr(tmp_path) -> bool:
    probe = tmp_path / "probe"
    probe.write_text("x")
    ok = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["chattr", "-i", str(probe)], check=True)
    return ok


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_kernel_close_closes_the_stores_it_handed_out(tmp_path):
    """Stores from ``k.memory`` still referenced after ``k.close()`` hold no file descriptors: 30 kernels
    leave the count where it was."""
    kept = []
    before = None
    for i in range(30):
        k = _kernel()
        s = k.memory("checkpoints", path=str(tmp_path / f"runs{i}.db"))
        s.save("r", 1, {"i": i})
        k.close()
        kept.append(s)
        if i == 0:
            before = _fds()
    assert _fds() <= before


def test_a_store_used_after_kernel_close_raises_store_error(tmp_path):
    """A checkpoint store read after its kernel closed raises StoreError saying it is closed."""
    k = _kernel()
    s = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    s.save("r", 1, {"a": 1})
    k.close()
    with pytest.raises(StoreError, match="closed"):
        s.latest("r")


def test_reopening_an_open_store_whose_files_turned_immutable_is_typed_not_sigbus(tmp_path):
    """A store left open, its files made immutable, the same file opened again in the process: a typed
    error (its write-ahead log cannot be read safely), never SIGBUS."""
    if not _can_chattr(tmp_path):
        pytest.skip("chattr +i is not permitted here")
    proc = subprocess.run([sys.executable, CHILD, str(tmp_path / "runs.db")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"child died with {proc.returncode}: {proc.stderr[-500:]}"
    assert proc.stdout.strip().splitlines()[-1] == "typed StoreError"


def test_checkpoints_are_readable_in_a_directory_that_cannot_be_written(tmp_path):
    """A closed checkpoint file in an immutable directory (as on a read-only file system) is read back;
    a write to it is a StoreError."""
    if not _can_chattr(tmp_path):
        pytest.skip("chattr +i is not permitted here")
    folder = tmp_path / "ro"
    folder.mkdir()
    path = str(folder / "runs.db")
    k = _kernel()
    k.memory("checkpoints", path=path).save("r", 1, {"a": 1})
    k.close()
    subprocess.run(["chattr", "+i", path, str(folder)], check=True)
    k = _kernel()
    try:
        s = k.memory("checkpoints", path=path)
        assert s.latest("r") == (1, b'{"a":1}')
        with pytest.raises(StoreError):
            s.save("r", 2, {"a": 2})
    finally:
        k.close()
        subprocess.run(["chattr", "-i", path, str(folder)], check=True)
