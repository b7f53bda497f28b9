"""examples/plugin-template installs against this checkout's zagent and passes the provider and tool kits."""

import os
import pathlib
import shutil
import subprocess
import sys

TEMPLATE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "plugin-template"


def test_the_plugin_template_installs_and_passes_the_kits(tmp_path):
    """pip-installed with --no-deps beside this zagent, the template's own tests (both kits) pass (from a copy:
    the checkout's folder gets no build/ or *.egg-info, which made parallel runs of this test race)."""
    copy = tmp_path / "plugin-template"  # a copy: building writes build/ and *.egg-info next to the sources
    shutil.copytree(TEMPLATE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--target", str(site), str(copy)], capture_output=True, text=True)
    assert proc.returncode == 0, f"pip install of the template failed:\n{proc.stdout}\n{proc.stderr}"
    tests = tmp_path / "tests"
    shutil.copytree(copy / "tests", tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    assert not (TEMPLATE / "build").exists() and not list(TEMPLATE.glob("*.egg-info"))
