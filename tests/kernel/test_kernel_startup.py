"""Start-up stays light: what ``import zagent`` and ``Kernel()`` import (in fresh interpreters)."""

import json
import subprocess
import sys

HEAVY = ("httpx", "asyncio", "sqlite3", "ssl")


def modules_after(code: str) -> dict:
    probe = code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_import_zagent_adds_only_the_standard_library():
    """``import zagent`` adds nothing beyond the standard library to pluggy, attrs and msgspec."""
    base = modules_after("import pluggy, attrs, msgspec")
    added = modules_after("import pluggy, attrs, msgspec, zagent") - base
    foreign = {m for m in added if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "zagent"}
    assert foreign == set()


def test_import_zagent_imports_no_heavy_module():
    """``import zagent`` imports no asyncio, httpx, sqlite3 or ssl."""
    assert modules_after("import zagent") & set(HEAVY) == set()


def test_kernel_with_installed_plugins_imports_no_heavy_module():
    """``Kernel()`` with every installed plugin loaded imports no httpx, asyncio, sqlite3 (loaded on first use)."""
    loaded = modules_after("import zagent; zagent.Kernel()")
    assert loaded & set(HEAVY) == set()
