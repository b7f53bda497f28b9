"""Finding plugins: installed ``zagent`` entry points read from ``*.dist-info`` / ``*.egg-info``
``entry_points.txt`` on ``sys.path`` (first distribution of a name wins; no zipped eggs)."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple, Optional, Sequence


class EntryPoint(NamedTuple):
    """One entry point: ``name = module:attr`` from distribution ``dist`` ``version``."""

    name: str
    value: str
    dist: str
    version: str


def scan(group: str, path: Optional[Sequence[str]] = None) -> list[EntryPoint]:
    """All entry points of ``group`` in the distributions found on ``path`` (default ``sys.path``)."""
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for entry in path if path is not None else sys.path:
        directory = entry or "."
        try:
            names = sorted(e.name for e in os.scandir(directory) if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        for meta in names:
            dist, version = _dist_of(directory, meta)
            key = dist.lower().replace("-", "_").replace(".", "_")
            if key in seen:
                continue
            seen.add(key)
            text = _read(os.path.join(directory, meta, "entry_points.txt"))
            found.extend(EntryPoint(n, v, dist, version) for n, v in parse(text, group))
    return found


def parse(text: str, group: str) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of section ``[group]`` of an ``entry_points.txt``."""
    pairs: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            name, value = line.split("=", 1)
            pairs.append((name.strip(), value.strip()))
    return pairs


def _dist_of(directory: str, meta: str) -> tuple[str, str]:
    stem = meta.rsplit(".", 1)[0]
    if meta.endswith(".dist-info") and "-" in stem:
        name, _, version = stem.rpartition("-")  # "{name}-{version}"; neither part holds "-" when normalised
        return name, version
    lines = _read(os.path.join(directory, meta, "PKG-INFO")).splitlines()[:20]
    return stem.split("-", 1)[0], next((v.split(":", 1)[1].strip() for v in lines if v.startswith("Version:")), "")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""
