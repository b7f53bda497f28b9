"""``shadowed``: a module name a spec's folder holds a file for, already imported from another file. Importing
it again hands back the first file's module, so a spec would silently run another folder's code."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence


def shadowed(module: str, search: Sequence[str]) -> Optional[tuple[str, str]]:
    """``(the imported file, the folder's file)`` when ``module``'s top-level name is imported from a file other
    than the one the first folder of ``search`` holding such a file has; else ``None``."""
    top = module.partition(".")[0]
    loaded = getattr(sys.modules.get(top), "__file__", None)
    if not loaded:
        return None
    for folder in search:
        for candidate in (os.path.join(folder, top + ".py"), os.path.join(folder, top, "__init__.py")):
            if os.path.isfile(candidate):
                same = os.path.realpath(candidate) == os.path.realpath(loaded)
                return None if same else (loaded, candidate)
    return None


def clash_note(module: str, search: Sequence[str]) -> tuple[str, ...]:
    """Why ``module``, next to a spec in ``search``, is not the one imported (``shadowed``), for an error; else
    nothing."""
    clash = shadowed(module, search)
    return (f"module {module.partition('.')[0]!r} is imported already, from {clash[0]}, so {clash[1]} cannot be "
            "imported under that name; rename one of them",) if clash else ()
