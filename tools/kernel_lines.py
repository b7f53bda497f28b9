"""Kernel layout report: per-module line counts of kernel/ (the ``zagent`` package), the core total, and the
core's runtime import cycles.

The *core* is kernel/ minus the testing kit (``testing/``), the support packages the kernel never imports
(``providerkit/``, ``agentkit/``, ``speckit/``) and pure re-export modules (whose body is only imports, ``__all__`` and at
most one ``DeprecationWarning``). A shim that warns is a *deprecated alias*: the only kind of kernel/ module
allowed to import a plugin (an old path of code that moved into one, e.g. ``zagent.batch``).
A *runtime* import is any ``import`` not under ``if TYPE_CHECKING:``, at module level or inside a function.

    python tools/kernel_lines.py            # this tree
    python tools/kernel_lines.py --rev 634c268   # the tree of a git revision

``tests/kernel/test_layout.py`` asserts on the same analysis (``analyse``).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import subprocess
import sys
from typing import Iterator, Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "zagent"
NOT_CORE = ("testing/", "providerkit/", "agentkit/", "speckit/")


def kernel_files(rev: Optional[str] = None) -> dict[str, str]:
    """``{path relative to kernel/: source}`` of this tree or of git revision ``rev``."""
    if rev is None:
        base = ROOT / "kernel"
        return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*.py"))}
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, "kernel/"],
                           capture_output=True, text=True, check=True).stdout.split()
    return {n[len("kernel/"):]: subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{n}"], capture_output=True,
                                               text=True, check=True).stdout for n in names if n.endswith(".py")}


def module_name(rel: str) -> str:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def is_shim(tree: ast.Module) -> bool:
    """Only a docstring, imports, ``__all__`` and at most a ``DeprecationWarning`` (a re-export, e.g. of an old
    import path)."""
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return (bool(body) and sum(map(_is_deprecation, body)) <= 1 and
            all(isinstance(n, (ast.Import, ast.ImportFrom)) or _is_all(n) or _is_deprecation(n) for n in body))


def is_deprecated_alias(tree: ast.Module) -> bool:
    """A shim that warns ``DeprecationWarning`` when imported: an old import path kept one release. Only such a
    module of kernel/ may import a plugin (``zagent.batch`` -> ``zagent.plugins.batch.driver``)."""
    return is_shim(tree) and any(_is_deprecation(n) for n in tree.body)


def _is_deprecation(node: ast.stmt) -> bool:
    """``warnings.warn(..., DeprecationWarning, ...)`` as a statement."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    call = node.value
    named = ast.unparse(call.func) in ("warnings.warn", "warn")
    args = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "category")]
    return named and any(ast.unparse(a) == "DeprecationWarning" for a in args)


def _is_all(node: ast.stmt) -> bool:
    return (isinstance(node, (ast.Assign, ast.AugAssign)) and
            all(isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])))


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for other in child.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield child
        yield from _runtime_nodes(child)


def imports(tree: ast.Module, module: str, is_package: bool, known: frozenset[str] = frozenset()) -> set[str]:
    """Absolute names of the modules ``tree`` imports at run time: ``from x import y`` gives ``x.y`` when that is
    a module in ``known`` (a submodule import), else ``x``."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return found


def analyse(files: dict[str, str]) -> dict[str, dict[str, object]]:
    """``{rel: {"module", "lines", "core", "deprecated", "imports"}}`` for every file (``deprecated``: a
    deprecated-alias shim, see ``is_deprecated_alias``)."""
    out: dict[str, dict[str, object]] = {}
    known = frozenset(module_name(rel) for rel in files)
    for rel, source in files.items():
        tree = ast.parse(source)
        module = module_name(rel)
        core = not rel.startswith(NOT_CORE) and not is_shim(tree)
        out[rel] = {"module": module, "lines": len(source.splitlines()), "core": core,
                    "deprecated": not rel.startswith(NOT_CORE) and is_deprecated_alias(tree),
                    "imports": imports(tree, module, rel.endswith("__init__.py"), known)}
    return out


def cycles(info: dict[str, dict[str, object]]) -> list[list[str]]:
    """Runtime import cycles among core modules (strongly connected components of more than one module,
    or a module importing itself)."""
    core = {str(v["module"]): v for v in info.values() if v["core"]}
    graph = {m: sorted(t for t in v["imports"] if t in core and t != m) for m, v in core.items()}  # type: ignore[attr-defined]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    return found


def report(rev: Optional[str]) -> str:
    info = analyse(kernel_files(rev))
    rows = sorted(info.items(), key=lambda kv: (not kv[1]["core"], -int(kv[1]["lines"]), kv[0]))  # type: ignore[call-overload]
    lines = [f"kernel modules at {rev or 'working tree'}", f"{'module':<34} {'lines':>6}  part"]
    for rel, v in rows:
        part = ("core" if v["core"] else "deprecated alias" if v["deprecated"] else
                "re-export" if not rel.startswith(NOT_CORE) else rel.split("/")[0])
        lines.append(f"{rel:<34} {v['lines']:>6}  {part}")
    core_total = sum(int(v["lines"]) for v in info.values() if v["core"])  # type: ignore[call-overload]
    lines.append(f"{'core total':<34} {core_total:>6}  ({sum(1 for v in info.values() if v['core'])} modules)")
    lines.append(f"{'all of kernel/':<34} {sum(int(v['lines']) for v in info.values()):>6}")  # type: ignore[call-overload]
    found = cycles(info)
    lines.append("runtime import cycles in the core: " + ("none" if not found else "; ".join(" <-> ".join(c) for c in found)))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", help="a git revision to report on instead of the working tree")
    print(report(parser.parse_args().rev))


if __name__ == "__main__":
    main()
