"""Modules that left the kernel core for a kit or a plugin: the old import paths re-export them (those of code now
in a plugin with a ``DeprecationWarning``), and the core never imports the kits."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType

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

#: old path -> new path of every module moved into a plugin: a shim that warns ``DeprecationWarning`` (one release)
DEPRECATED = {
    "zagent.batch": "zagent.plugins.batch.driver",
    "zagent.batchfiles": "zagent.plugins.batch.files",
}

KITS = ("agentkit", "providerkit", "testing")
CORE = Path(zagent.__file__).parent


def _fresh_import(name: str) -> ModuleType:
    """Import ``name`` anew (a shim warns when it is executed, so a cached module would not)."""
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted({**MOVED, **DEPRECATED}))
def test_old_path_re_exports_the_same_objects(old: str) -> None:
    """Every public name of a moved module is importable from its old path as the very same object."""
    target = {**MOVED, **DEPRECATED}[old]
    new = importlib.import_module(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        shim = importlib.import_module(old)
    public = new.__all__ if hasattr(new, "__all__") else [n for n in vars(new) if not n.startswith("_")]
    missing = [n for n in public if getattr(shim, n, None) is not getattr(new, n)]
    assert not missing, f"{old} does not re-export {missing} from {target}"
    assert sorted(getattr(shim, "__all__", public)) == sorted(public), f"{old}.__all__ differs from {target}'s"


@pytest.mark.parametrize("old", sorted(DEPRECATED))
def test_old_batch_path_warns_naming_the_new_path(old: str) -> None:
    """Importing an old batch path warns ``DeprecationWarning`` naming the module to import instead."""
    with pytest.warns(DeprecationWarning, match=re.escape(f"import {DEPRECATED[old]} instead")):
        _fresh_import(old)


def test_old_batch_paths_work_as_before(tmp_path: Path) -> None:
    """Code written against the old paths still runs: ``zagent.batch.abatch`` drives a batch whose results
    ``zagent.batchfiles.ResultsFile`` reads back."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        batch = _fresh_import("zagent.batch")
        batchfiles = _fresh_import("zagent.batchfiles")

    async def double(inputs: dict[str, int]) -> dict[str, object]:
        return {"output": {"n": inputs["n"] * 2}, "usage": {}}

    class Doubler:
        def batch_job(self, kernel: object) -> object:
            return batch.Job(name="double", local=double)

    out = tmp_path / "out.jsonl"
    with zagent.Kernel(plugins=["zagent.plugins.batch"], entry_points=False) as k:
        report = zagent.run_sync(batch.abatch(k, Doubler(), [{"id": "a", "n": 2}], out=str(out)))
    assert report.summary.done == 1 and report.summary.failed == 0
    results = batchfiles.ResultsFile(out)
    try:
        assert results.done.ids == {"a"}
    finally:
        results.close()


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
