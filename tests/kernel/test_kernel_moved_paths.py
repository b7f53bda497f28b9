"""Modules that left the kernel core for a kit: the old import paths re-export them, and the core never imports the kits."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import zagent

#: old path -> new path of every module moved out of the core (kept one release)
MOVED = {
    "zagent.fields": "zagent.agentkit.fields",
    "zagent.toolrefs": "zagent.agentkit.toolrefs",
    "zagent.runkeys": "zagent.agentkit.runkeys",
    "zagent.files": "zagent.agentkit.files",
    "zagent.control": "zagent.agentkit.control",
    "zagent.lazy": "zagent.agentkit.lazy",
    "zagent.credentials": "zagent.providerkit.credentials",
}

KITS = ("agentkit", "providerkit", "testing")
CORE = Path(zagent.__file__).parent


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_re_exports_the_same_objects(old: str) -> None:
    """Every public name of a moved module is importable from its old path as the very same object."""
    new = importlib.import_module(MOVED[old])
    shim = importlib.import_module(old)
    public = new.__all__ if hasattr(new, "__all__") else [n for n in vars(new) if not n.startswith("_")]
    missing = [n for n in public if getattr(shim, n, None) is not getattr(new, n)]
    assert not missing, f"{old} does not re-export {missing} from {MOVED[old]}"


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


SHIMS = {old.split(".")[1] + ".py" for old in MOVED} | {"http.py", "encodeonce.py"}


@pytest.mark.parametrize("path", sorted(p.name for p in CORE.glob("*.py") if p.name not in SHIMS))
def test_core_module_never_imports_a_kit(path: str) -> None:
    """A core module imports neither the agent kit, the provider kit nor the testing kit, not even lazily
    (only the one-release re-export shims do)."""
    assert _kit_imports(CORE / path) == []


def test_the_kit_import_check_sees_imports(tmp_path: Path) -> None:
    """The check above finds relative, absolute and function-level kit imports (so it can fail)."""
    sample = tmp_path / "sample.py"
    sample.write_text("from .agentkit.fields import convert\nimport zagent.providerkit\nfrom . import testing\n"
                      "from .types import Field\ndef f():\n    from zagent.testing import recorder\n", encoding="utf-8")
    assert _kit_imports(sample) == [".agentkit.fields", "zagent.providerkit", ".testing", "zagent.testing"]
