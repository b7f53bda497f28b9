"""``shadowed``: a module name a spec's folder holds a file for, already imported from another file. Importing
it again hands back the first file's module, so a spec would silently run another folder's code. And the notes a
refused import path gets: ``clash_note``, ``withheld_note``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .trust import Trust


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


def withheld_note(module: str, trust: "Trust") -> tuple[str, ...]:
    """Why ``module``, found in a folder ``trust`` withholds (``Trust.withheld``: the ``--agents`` folder, whose
    modules serve its stored agents only), is not the spec's to name, for an error; else nothing. Found as the
    import would find it, nothing run."""
    import importlib.machinery

    top = module.partition(".")[0]
    loaded = getattr(sys.modules.get(top), "__file__", None)
    for folder in trust.withheld:
        try:
            found = loaded if loaded else getattr(importlib.machinery.PathFinder.find_spec(top, [folder]), "origin", None)
        except (ImportError, ValueError):
            continue
        inside = bool(found) and os.path.realpath(str(found)).startswith(folder.rstrip(os.sep) + os.sep)
        if inside:
            return (f"module {top!r} lies in {folder}, the folder of stored agents (--agents), whose modules serve "
                    "only the agents stored there, not the agents this file declares; name the stored agent that uses "
                    "it, move the module next to the file, or pass --trust to trust every import path in the file",)
    return ()
