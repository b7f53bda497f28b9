"""``RunContext[Deps]`` type-checks: ``mypy --strict`` passes a tool reading ``ctx.deps.db`` and rejects a wrong
attribute (issue 32, item 9). Runs mypy in a subprocess on the files beside this one."""

import os
import pathlib
import subprocess
import sys

import pytest

import zagent

HERE = pathlib.Path(__file__).parent
pytest.importorskip("mypy")


def _mypy(tmp_path, name):
    (tmp_path / "zagent").symlink_to(pathlib.Path(zagent.__file__).parent)  # the kernel as mypy sees it
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), str(HERE / name)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_a_tool_typed_with_its_deps_passes_mypy_strict(tmp_path):
    """deps_ok.py (ctx: RunContext[MyDeps], ctx.deps.db.lookup(...)) has no mypy --strict errors."""
    done = _mypy(tmp_path, "deps_ok.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wrong_deps_attribute_fails_mypy(tmp_path):
    """deps_bad.py reads ctx.deps.database, which MyDeps lacks: mypy reports it."""
    done = _mypy(tmp_path, "deps_bad.py")
    assert done.returncode == 1 and '"MyDeps" has no attribute "database"' in done.stdout
