"""``mypy --strict`` on the package as it installs, each target against the error count recorded for it.

Targets: ``kernel`` (kernel/, checked as today's ``mypy --strict kernel``), ``plugins`` (plugins/ as
``zagent.plugins``, seen through a tree of symlinks that lays kernel/ and plugins/ out as the installed
``zagent`` package) and ``contrib/NAME`` (each contrib package, checked only when it is installed, since its own
dependencies come with it). Errors in modules a target only imports are not counted (``--follow-imports=silent``).

``tools/mypy_baseline.txt`` holds one ``target count`` line per target. A target fails when it reports more
errors than its count (a missing line means 0: clean); fewer errors print a reminder to lower the count.

    python tools/typecheck.py                       # every target
    python tools/typecheck.py plugins contrib       # plugins/ and every installed contrib package
    python tools/typecheck.py --update plugins      # record the current count of plugins/

``.ci/steps/15-mypy.sh`` runs ``kernel plugins``; ``.ci/steps/45-mypy-contrib.sh`` runs ``contrib`` after the
contrib steps have installed their packages.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "mypy_baseline.txt"
ERROR = re.compile(r"^\S+:\d+(:\d+)?: error:")


def read_baseline(text: str) -> dict[str, int]:
    """``target count`` lines (``#`` starts a comment) as a mapping."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            target, count = line.split()
            counts[target] = int(count)
    return counts


def write_baseline(counts: dict[str, int], old_text: str) -> str:
    """``old_text`` with the given targets' counts replaced (or appended); comments and order are kept."""
    left = dict(counts)
    lines = []
    for line in old_text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2 and fields[0] in left:
            line = f"{fields[0]} {left.pop(fields[0])}"
        lines.append(line)
    lines += [f"{target} {count}" for target, count in left.items()]
    return "\n".join(lines) + "\n"


def verdict(target: str, errors: int, baseline: dict[str, int]) -> tuple[bool, str]:
    """Whether ``target`` passes with ``errors`` errors, and the line that says so."""
    allowed = baseline.get(target, 0)
    if errors > allowed:
        return False, f"{target}: {errors} mypy errors, more than the {allowed} recorded in {BASELINE.name}"
    if errors < allowed:
        return True, (f"{target}: {errors} mypy errors, fewer than the {allowed} recorded: lower its line in "
                      f"{BASELINE.name} (python tools/typecheck.py --update {target})")
    return True, f"{target}: {errors} mypy errors ({'clean' if errors == 0 else 'as recorded'})"


def shadow_tree(into: pathlib.Path) -> pathlib.Path:
    """``into/zagent``: a symlink per entry of kernel/, and ``plugins`` -> plugins/ (the installed layout)."""
    package = into / "zagent"
    package.mkdir()
    for entry in (ROOT / "kernel").iterdir():
        if entry.name not in ("__pycache__", "plugins"):
            (package / entry.name).symlink_to(entry)
    (package / "plugins").symlink_to(ROOT / "plugins")
    return into


def contrib_packages() -> dict[str, tuple[pathlib.Path, str]]:
    """``contrib/NAME`` -> (its folder, its import package) for each folder with a pyproject.toml."""
    found = {}
    for folder in sorted((ROOT / "contrib").iterdir()):
        if (folder / "pyproject.toml").is_file():
            found[f"contrib/{folder.name}"] = (folder, folder.name.replace("-", "_"))
    return found


def _mypy(args: list[str], mypypath: list[pathlib.Path], cache: pathlib.Path, rename: tuple[str, str]) -> list[str]:
    env = {**os.environ, "MYPYPATH": os.pathsep.join(map(str, mypypath))}
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
           "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode not in (0, 1):  # 2: mypy itself failed (a bad flag, a crash)
        raise SystemExit(f"mypy failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    old, new = rename
    return [line.replace(old, new, 1) if line.startswith(old) else line for line in done.stdout.splitlines()]


def run(target: str, scratch: pathlib.Path) -> Optional[list[str]]:
    """mypy's output lines for ``target``, or None when it is a contrib package that is not installed."""
    cache = scratch / "cache"
    if target == "kernel":
        return _mypy(["kernel"], [], cache, ("", ""))
    tree = scratch / "tree"
    if not tree.exists():
        tree.mkdir()
        shadow_tree(tree)
    if target == "plugins":
        return _mypy(["-p", "zagent.plugins"], [tree], cache, (f"{tree}/zagent/plugins/", "plugins/"))
    folder, package = contrib_packages()[target]
    try:
        importlib.metadata.distribution(folder.name)
    except importlib.metadata.PackageNotFoundError:
        return None
    return _mypy(["-p", package], [tree, folder], cache, (f"{folder}/", f"{target}/"))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="kernel, plugins, contrib (all of them) or contrib/NAME")
    parser.add_argument("--update", action="store_true", help="record the counts found instead of comparing")
    args = parser.parse_args(argv)
    contrib = list(contrib_packages())
    targets: list[str] = []
    for name in args.targets or ["kernel", "plugins", "contrib"]:
        targets += contrib if name == "contrib" else [name.rstrip("/")]
    unknown = [t for t in targets if t not in ("kernel", "plugins", *contrib)]
    if unknown:
        parser.error(f"unknown target(s): {', '.join(unknown)}")
    old_text = BASELINE.read_text() if BASELINE.exists() else ""
    baseline, found, ok = read_baseline(old_text), {}, True
    with tempfile.TemporaryDirectory(prefix="zagent-typecheck-") as tmp:
        for target in targets:
            print(f"== mypy --strict: {target}", flush=True)
            lines = run(target, pathlib.Path(tmp))
            if lines is None:
                print(f"{target}: not installed here (its CI step installs it): skipping its type check")
                continue
            errors = sum(1 for line in lines if ERROR.match(line))
            found[target] = errors
            if args.update:
                print(f"{target}: {errors} mypy errors")
                continue
            passed, message = verdict(target, errors, baseline)
            if not passed:
                print("\n".join(lines))
            print(message, flush=True)
            ok = ok and passed
    if args.update:
        BASELINE.write_text(write_baseline(found, old_text))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
