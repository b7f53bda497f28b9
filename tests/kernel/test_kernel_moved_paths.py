"""Modules that left the kernel core for a kit or a plugin are gone from their old paths (one import path per
name), and the core never imports the kits."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import zagent

#: the old import paths removed in 0.1.0 (their code lives in a kit or a plugin)
REMOVED = ("zagent.fields", "zagent.toolrefs", "zagent.runkeys", "zagent.files", "zagent.control", "zagent.lazy",
           "zagent.credentials", "zagent.http", "zagent.encodeonce", "zagent.batch", "zagent.batchfiles")

KITS = ("agentkit", "providerkit", "speckit", "testing")
CORE = Path(zagent.__file__).parent


@pytest.mark.parametrize("old", REMOVED)
def test_old_import_path_is_gone(old: str) -> None:
    """A removed old import path no longer imports (each name has one import path)."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_kernel_module_no_longer_re_exports_spec_loaders() -> None:
    """``zagent.kernel`` no longer re-exports ``convert_spec``/``load_spec_file`` (they live in the spec kit)."""
    import zagent.kernel

    assert not hasattr(zagent.kernel, "convert_spec") and not hasattr(zagent.kernel, "load_spec_file")


def _is_kit(dotted: str) -> bool:
    parts = dotted.split(".")
    return len(parts) >= 2 and parts[0] == "zagent" and parts[1] in KITS


def _kit_imports(path: Path) -> list[str]:
    """The kit modules a core file imports, at module level or inside functions (relative or absolute)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 and module.split(".")[0] in KITS:
                found.append("." + module)
            elif node.level == 1 and not module:
                found += ["." + a.name for a in node.names if a.name in KITS]
            elif node.level == 0 and _is_kit(module):
                found.append(module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if _is_kit(a.name)]
    return found


@pytest.mark.parametrize("path", sorted(p.name for p in CORE.glob("*.py") ))
def test_core_module_never_imports_a_kit(path: str) -> None:
    """A core module imports neither the agent kit, the provider kit nor the testing kit, not even lazily."""
    assert _kit_imports(CORE / path) == []


def test_the_kit_import_check_sees_imports(tmp_path: Path) -> None:
    """The check above finds relative, absolute and function-level kit imports (so it can fail)."""
    sample = tmp_path / "sample.py"
    sample.write_text("from .agentkit.fields import convert\nimport zagent.providerkit\nfrom . import testing\n"
                      "from .types import Field\ndef f():\n    from zagent.testing import recorder\n", encoding="utf-8")
    assert _kit_imports(sample) == [".agentkit.fields", "zagent.providerkit", ".testing", "zagent.testing"]


def _moves() -> list[tuple[str, str, bool]]:
    """``(old, new, out of the core)`` for each line of tools/moves.txt; the third is true from the section of
    moves into the kits on."""
    out, into_kits = [], False
    for line in (CORE.parent / "tools" / "moves.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("# issue 30, moves out of the core"):
            into_kits = True
        if line.strip() and not line.startswith("#"):
            old, new = line.split()
            out.append((old, new, into_kits))
    return out


def _resolves(path: str) -> bool:
    """Does the dotted ``path`` name a module, or an attribute of one?"""
    try:
        importlib.import_module(path)
        return True
    except ImportError:
        module, _, name = path.rpartition(".")
        try:
            return hasattr(importlib.import_module(module), name)
        except ImportError:
            return False


@pytest.mark.parametrize("old, new, into_kits", _moves())
def test_a_moved_path_is_gone_and_its_new_one_resolves(old: str, new: str, into_kits: bool) -> None:
    """Each old path of tools/moves.txt is gone (no shim, no re-export alias left behind); a name moved into a
    kit resolves at its new path."""
    assert not _resolves(old), f"{old} still imports: one import path per name"
    if into_kits:
        assert _resolves(new), new
