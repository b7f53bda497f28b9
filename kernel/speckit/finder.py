"""``searching(folders, late, named)``: inside the block, this thread's (or task's) top-level imports look in
``folders`` first and in ``late`` last (only for ``named`` and modules loaded from ``late``). Such modules compile
from source; one others can write is refused."""

from __future__ import annotations

import contextlib
import contextvars
import importlib.machinery
import os
import sys
import threading
from typing import Any, Iterator, Optional, Sequence

__all__ = ["searching"]

_folders: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_spec_folders", default=())
_late: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_late_folders", default=())
_named: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_late_named", default=())
_lock = threading.Lock()
_IMPORTLIB = os.path.dirname(importlib.machinery.__file__) + os.sep  # importlib.import_module's frames
#: the folders of packages loaded from a spec's folder: their submodules load from source too, whenever imported
_packages: frozenset[str] = frozenset()


class SpecFolderFinder:
    """A ``sys.meta_path`` finder just before ``PathFinder``: a top-level module found in the folders this context
    searches (``searching``), and a submodule of a package loaded so, each loading from source
    (``_from_source``); nothing anywhere else. A namespace portion is left to the normal search (never merged from
    a spec's folder)."""

    @staticmethod
    def find_spec(name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Any:
        if path is None:
            folders = _folders.get()
            if not folders:
                return None
            found = importlib.machinery.PathFinder.find_spec(name, list(folders))
        elif _packages and any(_in_package(p) for p in path):
            found = importlib.machinery.PathFinder.find_spec(name, list(path))
            if found is not None and not _in_package(found.origin):
                return None  # found elsewhere along a widened __path__: the normal search decides
        else:
            return None
        if found is None or found.loader is None or found.origin in (None, "namespace"):
            return None
        return _from_source(found, in_package=path is not None or bool(found.submodule_search_locations))

    @staticmethod
    def invalidate_caches() -> None:
        return None


class LateFolderFinder:
    """A ``sys.meta_path`` finder after every other: a top-level module found nowhere else, in the folders this
    context searches last (``searching``'s ``late``), loading from source (``_from_source``); only the module named
    (``named``) or one a module of those folders imports: an installed module's optional import (``try: import
    orjson``) never finds a file planted there."""

    @staticmethod
    def find_spec(name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Any:
        folders = _late.get() if path is None else ()
        if folders and name not in _named.get() and not _imported_from(folders):
            return None
        found = importlib.machinery.PathFinder.find_spec(name, list(folders)) if folders else None
        if found is None or found.loader is None or found.origin in (None, "namespace"):
            return None
        return _from_source(found, in_package=bool(found.submodule_search_locations))

    @staticmethod
    def invalidate_caches() -> None:
        return None


class _SourceOnly(importlib.machinery.SourceFileLoader):
    """A source file's loader that never reads its bytecode cache (a ``.pyc`` carrying the source's time and size,
    or an unchecked hash-based one, runs without the source being read) and so writes none either."""

    def path_stats(self, path: str) -> Any:
        raise OSError("compiled from source: the bytecode cache of a spec folder's module is not used")


def _from_source(found: Any, *, in_package: bool) -> Any:
    """``found`` loading from its source (a package's folders remembered: ``_packages``); ``ImportError`` for a
    file other users can write (or its package's folder, ``in_package``: a spec's own folder was checked before),
    or an extension module or bytecode file that would be loaded in place of the ``.py`` next to it (a review of
    the source would not see its code)."""
    from .trust import _writable_by_others

    global _packages
    origin = str(found.origin)
    if _writable_by_others(origin) or (in_package and _writable_by_others(os.path.dirname(origin))):
        raise ImportError(f"module {found.name!r}: {origin} (or its package folder) can be written by other users "
                          "(or is theirs), who could have put code in it; it was not loaded. Keep it yours alone "
                          "(chmod go-w)", name=found.name)
    if type(found.loader) is importlib.machinery.SourceFileLoader:
        found.loader = _SourceOnly(found.name, origin)
        if found.submodule_search_locations:
            with _lock:
                _packages = _packages.union(p.rstrip(os.sep) for p in found.submodule_search_locations)
        return found
    folder, base = os.path.split(origin)
    suffix = next((s for s in (*importlib.machinery.EXTENSION_SUFFIXES, *importlib.machinery.BYTECODE_SUFFIXES)
                   if base.endswith(s)), None)
    source = os.path.join(folder, base[: -len(suffix)] + ".py") if suffix else None
    if source and os.path.isfile(source):
        raise ImportError(f"module {found.name!r}: {origin} would be loaded in place of the source {source} next to "
                          "it, so code nobody reads there would run; it was not loaded. Delete the file that is not "
                          "yours (or the source, if the compiled module is what you meant)", name=found.name)
    return found


def _imported_from(folders: Sequence[str]) -> bool:
    """Is the module importing now (the first frame outside the import machinery) one these finders loaded from
    ``folders``? (Not merely a file there: a virtual environment made inside the folder holds installed modules.)"""
    try:
        frame = sys._getframe(2)
    except ValueError:  # no caller: nothing imports
        return False
    while frame is not None and (frame.f_code.co_filename.startswith(("<frozen importlib", _IMPORTLIB))
                                 or frame.f_code.co_filename == __file__):
        frame = frame.f_back  # type: ignore[assignment]
    spec = frame.f_globals.get("__spec__") if frame is not None else None
    origin = getattr(spec, "origin", None)
    return (isinstance(getattr(spec, "loader", None), _SourceOnly) and isinstance(origin, str)
            and any(origin.startswith(f.rstrip(os.sep) + os.sep) for f in folders))


def _in_package(path: Optional[str]) -> bool:
    return bool(path) and any(path == p or path.startswith(p + os.sep) for p in _packages)  # type: ignore[union-attr]


def _installed() -> None:
    """Put ``SpecFolderFinder`` on ``sys.meta_path`` once, where ``sys.path`` entries are searched."""
    with _lock:
        if SpecFolderFinder in sys.meta_path:
            return
        at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
        sys.meta_path.insert(at, SpecFolderFinder)
        sys.meta_path.append(LateFolderFinder)


@contextlib.contextmanager
def searching(folders: Sequence[str], late: Sequence[str] = (), named: Sequence[str] = ()) -> Iterator[None]:
    """Search ``folders`` first and ``late`` last for this context's top-level imports inside the block (nested:
    the inner ones first, then the outer ones); ``late`` only for the ``named`` modules and the imports of modules
    loaded from it."""
    if not folders and not late:
        yield
        return
    _installed()
    token = _folders.set(tuple(dict.fromkeys([*folders, *_folders.get()])))
    token_late = _late.set(tuple(dict.fromkeys([*late, *_late.get()])))
    token_named = _named.set(tuple(dict.fromkeys([*named, *_named.get()])))
    try:
        yield
    finally:
        _named.reset(token_named)
        _late.reset(token_late)
        _folders.reset(token)
