"""Each plugin package's lazy exports (``_EXPORTS``, resolved by ``lazy_exports``) are also named in its
``if TYPE_CHECKING:`` block as ``from .module import Name as Name``, so type checkers see their real types
instead of the ``Any`` of the module ``__getattr__``. The file is read, not imported.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = sorted(p for p in (ROOT / "plugins").glob("*/__init__.py") if "_EXPORTS" in p.read_text())
#: packages whose lazy exports are not typed yet (none)
NOT_YET: set[str] = set()


def _exports(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("no _EXPORTS")


def _typed_names(tree):
    """``{name: module}`` of the ``import X as X`` lines of the ``if TYPE_CHECKING:`` block (relative: ``.mod``)."""
    named = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if alias.asname == alias.name:
                            named[alias.name] = "." * stmt.level + (stmt.module or "")
    return named


def test_the_packages_with_lazy_exports_are_found():
    """The scan finds the plugin packages that export names lazily (actions, react, workflow...)."""
    names = {p.parent.name for p in PACKAGES}
    assert {"actions", "react", "workflow"} <= names


@pytest.mark.parametrize("init", [p for p in PACKAGES if p.parent.name not in NOT_YET], ids=lambda p: p.parent.name)
def test_every_lazy_export_is_typed_from_its_module(init):
    """Every name of ``_EXPORTS`` is re-exported for type checkers, from the module ``_EXPORTS`` names
    (or, for a name that module re-exports itself, from an absolute import)."""
    tree = ast.parse(init.read_text())
    exports, typed = _exports(tree), _typed_names(tree)
    assert sorted(set(exports) - set(typed)) == [], "names missing from the TYPE_CHECKING block"
    assert sorted(set(typed) - set(exports)) == [], "names typed but not exported"
    wrong = {n: m for n, m in typed.items() if m.startswith(".") and m != "." + exports[n]}
    assert wrong == {}, "names imported from another module than _EXPORTS says"
