"""Rewrite imports and module references in files after modules moved (``tools/moves.txt``).

Each line of the moves file is ``old.dotted.path new.dotted.path``. Run this on files of a tree in which the
modules are already at their new place (``git mv``); a file that itself moved is recognised by its new path, and
its relative imports are resolved from its *old* place and written again from its new one. It rewrites:

- ``from X import ...`` (absolute, or relative inside ``kernel/`` and ``plugins/``), including
  ``from zagent import old`` (the module imported by name: ``from zagent._pkg import new as old``), also as
  text (code in a string or a doc) when it imports that one name;
- every other dotted reference ``zagent.old...`` (``import zagent.old``, strings such as
  ``monkeypatch.setattr("zagent.old.name", ...)``, docs) and file paths ``kernel/old.py``.

    python tools/apply_moves.py FILE...                  # rewrite in place, print the files changed
    python tools/apply_moves.py --check FILE...          # print what would change, exit 1 if anything would
    python tools/apply_moves.py --moves other.txt FILE...
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import re
import sys
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: folder -> the import package it is (``setup.py``'s package_dir); relative imports are resolved only there
PACKAGE_DIRS = (("kernel", "zagent"), ("plugins", "zagent.plugins"))


def read_moves(path: pathlib.Path) -> dict[str, str]:
    moves: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise SystemExit(f"{path}:{number}: expected 'old.module new.module', got {line!r}")
        moves[parts[0]] = parts[1]
    return moves


def module_of(path: pathlib.Path) -> Optional[tuple[str, bool]]:
    """``(dotted module name, is a package __init__)`` of a file under a mapped folder, else None."""
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return None
    for folder, package in PACKAGE_DIRS:
        if rel.parts and rel.parts[0] == folder and rel.suffix == ".py":
            parts = [package, *rel.parts[1:-1]]
            if rel.stem != "__init__":
                parts.append(rel.stem)
            return ".".join(parts), rel.stem == "__init__"
    return None


def _resolve(level: int, module: Optional[str], package: str) -> Optional[str]:
    """The absolute module ``from <level dots><module> import`` names inside ``package`` (None: above the top)."""
    base = package.split(".")
    if level - 1 >= len(base):
        return None
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def _exists(module: str) -> bool:
    """Whether ``module`` is a file of this tree (``kernel/a/b.py`` or ``kernel/a/b/__init__.py`` for zagent.a.b)."""
    for folder, package in sorted(PACKAGE_DIRS, key=lambda fp: -len(fp[1])):
        if module == package or module.startswith(package + "."):
            rest = module[len(package):].lstrip(".").split(".") if module != package else []
            path = ROOT.joinpath(folder, *rest)
            return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
    return False


def _base(node: ast.ImportFrom, old_package: str, new_package: str, moves: dict[str, str]) -> Optional[str]:
    """The absolute old-layout module a relative import names. In a file that moved, a relative import may be
    written from its old place (not yet rewritten) or its new one (rewritten, or added after the move): the old
    reading wins when it names a moved module, the new one when it names an existing module; so running this
    twice changes nothing the second time."""
    old = _resolve(node.level, node.module, old_package)
    if old_package == new_package:
        return old
    if old is not None and old in moves:
        return old
    new = _resolve(node.level, node.module, new_package)
    if new is None or not _exists(new):
        return old
    if old is None:
        return new
    old_names = sum(f"{old}.{a.name}" in moves for a in node.names)  # names of moved modules, read the old way
    new_names = sum(_exists(f"{new}.{a.name}") for a in node.names)  # names of existing modules, the new way
    return old if old_names > new_names else new


def _relative(target: str, package: str) -> tuple[int, str]:
    """``(level, module)`` naming absolute ``target`` from inside ``package``."""
    t, p = target.split("."), package.split(".")
    common = 0
    while common < min(len(t), len(p)) and t[common] == p[common]:
        common += 1
    return len(p) - common + 1, ".".join(t[common:])


def _rewrite_from_imports(source: str, moves: dict[str, str], path: pathlib.Path) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    inverse = {new: old for old, new in moves.items()}
    here = module_of(path)
    if here is not None:
        new_module, is_package = here
        old_module = inverse.get(new_module, new_module)
        old_package = old_module if is_package else old_module.rpartition(".")[0]
        new_package = new_module if is_package else new_module.rpartition(".")[0]
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line index, last line index, replacement text)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            found = None if here is None else _base(node, old_package, new_package, moves)
            if found is None:
                continue
            base = found
        else:
            base = node.module or ""
            if not (base == "zagent" or base.startswith("zagent.")):
                continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if alias.name != "*" and full in moves:
                target, _, name = moves[full].rpartition(".")
                local = alias.asname or alias.name
                groups.setdefault(target, []).append(name if local == name else f"{name} as {local}")
            else:
                groups.setdefault(moves.get(base, base), []).append(
                    alias.name if not alias.asname else f"{alias.name} as {alias.asname}")

        def spell(target: str) -> str:
            if node.level:
                level, module = _relative(target, new_package)
                return "." * level + module
            return target

        original = "." * node.level + (node.module or "")
        names_kept = all(f"{base}.{a.name}" not in moves for a in node.names)
        if len(groups) == 1 and names_kept and spell(next(iter(groups))) == original:
            continue  # nothing moved for this statement
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        head = re.compile(r"from\s+[.\w]+\s+import\b")
        line = lines[first]
        if len(groups) == 1 and names_kept and head.match(line, node.col_offset):
            new = head.sub(f"from {spell(next(iter(groups)))} import", line[node.col_offset:], count=1)
            edits.append((first, first, line[: node.col_offset] + new))
            continue
        indent = line[: node.col_offset]
        tail = lines[last][node.end_col_offset or 0:]
        text = "".join(f"{indent if i else ''}from {spell(t)} import {', '.join(names)}\n"
                       for i, (t, names) in enumerate(groups.items()))
        edits.append((first, last, indent + text.rstrip("\n") + tail))
    for first, last, text in sorted(edits, reverse=True):
        lines[first: last + 1] = [text]
    return "".join(lines)


def _reference_pattern(moves: dict[str, str]) -> tuple[re.Pattern[str], dict[str, str]]:
    table = dict(moves)
    for old, new in moves.items():
        table["kernel/" + "/".join(old.split(".")[1:]) + ".py"] = "kernel/" + "/".join(new.split(".")[1:]) + ".py"
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w./])(" + "|".join(map(re.escape, keys)) + r")(?!\w)")
    return pattern, table


def rewrite(source: str, moves: dict[str, str], path: pathlib.Path) -> str:
    if path.suffix == ".py":
        source = _rewrite_from_imports(source, moves, path)
    source = _FROM_PACKAGE.sub(lambda m: _from_package(m, moves), source)
    pattern, table = _reference_pattern(moves)
    return pattern.sub(lambda m: table[m.group(1)], source)


#: ``from zagent import old`` left in text (code inside a string, docs): one module name, nothing after it
_FROM_PACKAGE = re.compile(r"\bfrom (zagent(?:\.\w+)*) import (\w+)(?=[ \t]*(?:$|[\n;#\"']))", re.M)


def _from_package(match: re.Match[str], moves: dict[str, str]) -> str:
    full = f"{match.group(1)}.{match.group(2)}"
    if full not in moves:
        return match.group(0)
    target, _, name = moves[full].rpartition(".")
    alias = "" if name == match.group(2) else f" as {match.group(2)}"
    return f"from {target} import {name}{alias}"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=pathlib.Path, default=ROOT / "tools" / "moves.txt")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    moves = read_moves(args.moves)
    changed = []
    for path in args.files:
        if path.resolve() == args.moves.resolve() or not path.is_file():
            continue
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(source, moves, path)
        if new != source:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in changed:
        print(path)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
