"""Fixtures for memory tests: a fresh kernel with only the memory plugin, a checkpoint store keeping every
step (``store``; a test file may define its own) and child processes.

``run_child(mode, *args)`` starts ``memory_child.py`` in a new interpreter with
its stdout piped, so a test can read what the child reported as committed
and then kill it.
"""

import os
import subprocess
import sys

import pytest

from zagent import Kernel

CHILD = os.path.join(os.path.dirname(__file__), "memory_child.py")


@pytest.fixture
def kernel():
    k = Kernel(plugins=["zagent.plugins.memory"], entry_points=False)
    yield k
    k.close()


@pytest.fixture
def store(kernel, tmp_path):
    """A checkpoint store on a SQLite file in the test's folder that keeps every step (``keep_last=None``)."""
    s = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"), keep_last=None)
    yield s
    s.close()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "memory.db")


@pytest.fixture
def run_child():
    children = []

    def start(mode, *args):
        proc = subprocess.Popen([sys.executable, CHILD, mode, *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1)
        children.append(proc)
        return proc

    yield start
    for proc in children:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
