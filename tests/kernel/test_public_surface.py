"""The public surface is listed in one place (docs/architecture.md, PUBLIC) and is what the docs use.

Each package's exports match the names that section lists for it, every listed name imports, the
lazy ones stay out of ``import zagent``, and README.md and docs/*.md (but architecture.md, which says
where code lives) never show a private ``zagent._*`` import path.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_PATH = re.compile(r"\bzagent\._[a-z]\w*")
EXPORTING = ("zagent", "zagent.contracts", "zagent.providerkit", "zagent.speckit", "zagent.testing")


def _public_section() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("## PUBLIC")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _listed(module: str) -> set[str]:
    """The names the PUBLIC section's bullet for ``module`` lists (its ``module.__all__`` aside)."""
    bullets = re.split(r"\n- ", _public_section())
    (bullet,) = [b for b in bullets if b.startswith(f"**`{module}`**")]
    names = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", bullet.split(":", 1)[1]))
    return names - {"__all__"}


@pytest.mark.parametrize("module", EXPORTING)
def test_public_section_lists_exactly_the_exports(module):
    """The PUBLIC section names every export of the package and nothing it does not export."""
    exported = set(importlib.import_module(module).__all__)
    listed = _listed(module)
    assert not exported - listed, f"{module} exports names docs/architecture.md (PUBLIC) does not list"
    assert not listed - exported, f"docs/architecture.md (PUBLIC) lists names {module} does not export"


@pytest.mark.parametrize("module", EXPORTING)
def test_every_exported_name_imports(module):
    """Every name in the package's ``__all__`` resolves (lazy ones included) and appears once."""
    mod = importlib.import_module(module)
    assert len(mod.__all__) == len(set(mod.__all__))
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing


def test_every_listed_hookspecs_name_imports():
    """The markers the PUBLIC section names in ``zagent.hookspecs`` are there."""
    import zagent.hookspecs as hookspecs

    for name in ("hookimpl", "hookspec", "PROJECT", "zagent_event", "zagent_register_tools", "zagent_run_end"):
        assert hasattr(hookspecs, name), name


def test_the_spec_kit_is_not_imported_by_import_zagent():
    """``import zagent`` (and ``Kernel()``) import no spec kit module; its names import their module on first use."""
    code = ("import sys, zagent\n"
            "zagent.Kernel(entry_points=False)\n"
            "assert not [m for m in sys.modules if m.startswith('zagent.speckit')]\n"
            "import zagent.speckit\n"
            "assert 'zagent.speckit.trust' not in sys.modules\n"
            "zagent.speckit.Trust\n"
            "assert 'zagent.speckit.trust' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_unknown_attribute_is_an_attribute_error():
    """A name ``zagent`` does not have is an ``AttributeError`` naming it, not an import of something."""
    import zagent

    with pytest.raises(AttributeError, match="no_such_name"):
        zagent.no_such_name  # noqa: B018


def _user_docs() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "architecture.md")
    return [ROOT / "README.md", *docs]


def test_user_docs_show_no_private_import_path():
    """README.md and docs/*.md (architecture.md aside) never name a ``zagent._*`` module."""
    found = []
    for path in _user_docs():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{n}: {m}" for m in PRIVATE_PATH.findall(line)]
    assert not found, "use the public name (docs/architecture.md, PUBLIC):\n" + "\n".join(found)


def test_private_path_check_finds_one():
    """The check above would see a private import path in a doc line."""
    assert PRIVATE_PATH.findall("from zagent._runs.stash import StashKey") == ["zagent._runs"]
    assert not PRIVATE_PATH.findall("the `zagent._*` subpackages, `zagent.StashKey`")


def test_examples_import_no_private_module():
    """The examples import only public paths."""
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.py")
             if PRIVATE_PATH.search(p.read_text(encoding="utf-8"))]
    assert not found
