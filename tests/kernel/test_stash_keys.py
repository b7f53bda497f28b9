"""The package keeps its own state in ``ctx.stash`` / ``kernel.stash`` under typed ``StashKey``s only: no
raw string key (a literal, or a module constant holding a string) in ``kernel/``, ``plugins/`` or a
``contrib/`` package. Read with ``ast``; a checkpoint's saved stash (plain data by name) is not a Stash.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).parent.parent.parent
OWNERS = {"ctx", "_ctx", "context", "kernel", "_kernel", "root", "parent"}
METHODS = {"get", "setdefault", "pop", "get_or_create"}


def package_files():
    roots = [ROOT / "kernel", ROOT / "plugins"] + [
        p for p in sorted((ROOT / "contrib").glob("*/*"))
        if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("tests", "examples")]
    return [f for r in roots for f in sorted(r.rglob("*.py"))]


def _owner(node):
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _is_stash(node):
    """``<owner>.stash`` for a run context or a kernel (``ctx.stash``, ``self.kernel.stash``...)."""
    return isinstance(node, ast.Attribute) and node.attr == "stash" and _owner(node.value) in OWNERS


def string_keys(source):
    """``[(line, text)]`` of each ``ctx.stash``/``kernel.stash`` access whose key is a string."""
    tree = ast.parse(source)
    strings = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
               and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}

    def is_string(key):
        return (isinstance(key, ast.Constant) and isinstance(key.value, str)) or (
            isinstance(key, ast.Name) and key.id in strings) or isinstance(key, ast.JoinedStr)

    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and _is_stash(node.value):
            key = node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS
              and _is_stash(node.func.value) and node.args):
            key = node.args[0]
        elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
              and _is_stash(node.comparators[0])):
            key = node.left
        if key is not None and is_string(key):
            found.append((node.lineno, ast.unparse(node)))
    return found


@pytest.mark.parametrize("source, hits", [
    ('ctx.stash["zagent.skills"] = {}', 1),
    ('KEY = "zagent.cost_usd"\nctx.stash.get(KEY, 0.0)', 1),
    ('"x" in self._ctx.stash', 1),
    ('kernel.stash.setdefault("k", [])', 1),
    ('KEY = StashKey("zagent.cost_usd")\nctx.stash[KEY] = 1.0', 0),
    ('state.stash.get("zagent.rails.budget")', 0),
])
def test_the_scan_finds_string_keys(source, hits):
    """Literal and constant string keys into a context's or kernel's stash are found; typed keys and a saved
    state's plain dict are not."""
    assert len(string_keys(source)) == hits, string_keys(source)


def test_no_string_keys_into_a_stash_in_the_package():
    """No module of the package reads or writes ``ctx.stash``/``kernel.stash`` under a string key."""
    found = [f"{f.relative_to(ROOT)}:{line}: {text}" for f in package_files()
             for line, text in string_keys(f.read_text(encoding="utf-8"))]
    assert not found, "use a StashKey (zagent._runs.stash):\n" + "\n".join(found)
