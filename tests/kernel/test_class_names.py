"""Class names are unique across the package: no two classes in ``kernel/``, ``plugins/`` or a ``contrib/``
package share a name (private ones included), so a name in a traceback, a doc or a review says which class.

Read with ``ast``; nothing is imported.
"""

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).parent.parent.parent


def package_files():
    """Every Python file of the package: kernel/, plugins/ and each contrib package's source folder."""
    roots = [ROOT / "kernel", ROOT / "plugins"]
    roots += [p for p in sorted((ROOT / "contrib").glob("*/*")) if p.is_dir() and (p / "__init__.py").exists()
              and p.name not in ("tests", "examples")]
    return [f for r in roots for f in sorted(r.rglob("*.py"))]


def duplicate_classes(sources):
    """``{name: [where, ...]}`` for every class name defined more than once in ``sources`` (``{where: text}``)."""
    seen = collections.defaultdict(list)
    for where, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                seen[node.name].append(f"{where}:{node.lineno}")
    return {name: places for name, places in sorted(seen.items()) if len(places) > 1}


def test_the_scan_covers_kernel_plugins_and_contrib():
    """The scan reads the kernel, the plugins and every contrib package's source."""
    rels = {f.relative_to(ROOT).parts[:2] for f in package_files()}
    assert ("kernel", "kernel.py") in rels and ("plugins", "react") in rels
    assert {("contrib", "zagent-mcp"), ("contrib", "zagent-otel"), ("contrib", "zagent-ray")} <= rels


def test_the_scan_finds_a_name_defined_twice():
    """Two modules (or two scopes of one module) defining one class name are both reported."""
    found = duplicate_classes({"a.py": "class Job:\n    pass\n", "b.py": "def f():\n    class Job: ...\n",
                               "c.py": "class Other: ...\n"})
    assert found == {"Job": ["a.py:1", "b.py:2"]}


def test_no_two_classes_share_a_name():
    """No class name is defined twice in the package; rename one so each name says what it is."""
    found = duplicate_classes({str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in package_files()})
    assert not found, "class names defined more than once:\n" + "\n".join(
        f"  {name}: {', '.join(places)}" for name, places in found.items())
