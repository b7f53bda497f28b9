"""Packaging: a regular (non-editable) wheel of zagent installs and works, built-in plugins included."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import zagent

REPO = pathlib.Path(zagent.__file__).resolve().parent.parent

CHECK = '''
import json, sys, zagent
k = zagent.Kernel()
print(json.dumps({"file": zagent.__file__, "plugins": {p.name: p.distribution for p in k.plugins()},
                  "testing": __import__("zagent.testing").testing.__file__}))
'''


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory):
    """The repository built as a wheel and installed with ``pip install --target``."""
    if not (REPO / "setup.cfg").exists():
        pytest.skip("not running from a source checkout")
    source = tmp_path_factory.mktemp("source") / "zagent"  # build from a copy: nothing written into the repo
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".venv*", "tests", "bench"))
    target = tmp_path_factory.mktemp("wheel_site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--target", str(target), str(source)],
        capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building/installing the zagent wheel failed:\n{proc.stdout}\n{proc.stderr}")
    return target


def test_wheel_install_loads_builtin_plugins(wheel_site):
    """From a regular install, ``zagent`` and ``zagent.testing`` import from it and built-in plugins load."""
    env = {**os.environ, "PYTHONPATH": str(wheel_site)}
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, cwd=wheel_site)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["file"].startswith(str(wheel_site)) and data["testing"].startswith(str(wheel_site))
    assert data["plugins"].get("cli") == "zagent" and data["plugins"].get("offline") == "zagent"


def test_wheel_install_console_entry_runs(wheel_site):
    """From a regular install, ``python -m zagent.plugins.cli --help`` lists the built-in commands."""
    env = {**os.environ, "PYTHONPATH": str(wheel_site)}
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "--help"], capture_output=True,
                          text=True, env=env, cwd=wheel_site)
    assert proc.returncode == 0 and "plugins" in proc.stdout, proc.stderr


def test_wheel_ships_py_typed(wheel_site):
    """The wheel carries ``zagent/py.typed`` (PEP 561), so users' type checkers read zagent's annotations."""
    assert (wheel_site / "zagent" / "py.typed").is_file()
