"""Who vouches for a spec's import paths (``Trust``, in force inside ``trusting(...)``, read with
``current_trust()``: the app or the CLI user) and ``resolve``, which imports a path from a spec only when trusted,
else ``ConfigError`` (``Trust(dry=True)``: a ``NotImported`` stand-in). ``import_path`` imports a path the caller
already trusts.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.machinery
import importlib.util
import os
import stat
import sys
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

import attrs

from .._trust.imports import import_attr, import_path, split_path
from ..errors import ConfigError
from .shadowing import clash_note, shadowed, withheld_note

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["HOW_TO_TRUST", "NO_TRUST", "NotImported", "Trust", "as_trust", "current_trust", "dubious_file", "dubious_folder",
           "for_named_file", "import_path", "load", "resolve", "trusted_name", "trusting"]

HOW_TO_TRUST = ("trust it: Kernel(config={'trusted_imports': ['<module pattern>']}) or k.agent(spec, trust=True) "
                "in Python; on the command line, keep the module next to the spec file or pass --trust")


@attrs.frozen
class Trust:
    """Who vouches for the spec being built: ``everything`` (``--trust``), modules in ``folders`` (searched first),
    or nothing imported at all (``dry``: a ``NotImported`` stand-in). ``withheld``: folders trusted for other specs
    only (the CLI's ``--agents`` folder, for the agents stored there), named when an import from one is refused.
    ``fallback``: folders searched after ``sys.path`` (the working folder, for the user's own flags)."""

    everything: bool = False
    folders: tuple[str, ...] = ()
    dry: bool = False
    #: why a spec's folder was not trusted (``for_file``), named when an import from it is refused
    refused: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()

    @classmethod
    def for_file(cls, path: "str | os.PathLike[str]", *, everything: bool = False, dry: bool = False) -> "Trust":
        """The CLI's trust for a spec file: its folder (everything with ``--trust``), unless ``dubious_folder``
        or ``dubious_file`` (others could have written the spec)."""
        real = os.path.realpath(os.fspath(path))
        trust = cls.for_folder(os.path.dirname(real), everything=everything, dry=dry)
        problem = dubious_file(real)
        return attrs.evolve(trust, folders=(), refused=(*trust.refused, problem)) if problem else trust

    @classmethod
    def for_folder(cls, folder: str, *, everything: bool = False, dry: bool = False, last: bool = False) -> "Trust":
        """Modules in ``folder`` searched first (``last``: after ``sys.path``, never shadowing an installed module:
        the working folder of the user's flags), unless ``dubious_folder``; ``everything`` (``--trust``) overrides."""
        folder = os.path.realpath(folder)
        problem = dubious_folder(folder)
        found, refused = ((), (problem,)) if problem else ((folder,), ())
        return cls(everything, () if last else found, dry, refused, fallback=found if last else ())


def dubious_file(path: str) -> Optional[str]:
    """Why the folder of the spec file ``path`` must not be trusted for it (``None``: it may): other users could
    have written the file, so what it names is not the user's choice."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    how = (f"Make it yours alone (chmod go-w), or trust its folder explicitly in Python: "
           f"Trust(folders=({os.path.dirname(path)!r},))")
    if st.st_mode & stat.S_IWOTH:
        return (f"the spec file {path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o}), so the "
                f"modules next to it are not trusted for it. {how}")
    if hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0):
        return (f"the spec file {path} is owned by another user (uid {st.st_uid}), so the modules next to it are "
                f"not trusted for it (other users could have written it). {how}")
    return None


def for_named_file(path: str, trust: Trust) -> Trust:
    """``trust`` for a spec file read on another's behalf (an agent file a spec names, a stored agent), unless other
    users could have written it (the file or its folder): then none of it, saying why."""
    real = os.path.realpath(path)
    if not (trust.everything or trust.folders) or not (dubious_file(real) or dubious_folder(os.path.dirname(real))):
        return trust
    return Trust(dry=trust.dry, refused=(f"the agent file {real} can be written by other users (it or its folder), so "
                                         "the trust given to the spec or command naming it does not reach it; make "
                                         "both yours alone (chmod go-w)",))


def dubious_folder(folder: str) -> Optional[str]:
    """Why modules in ``folder`` must not be trusted (``None``: they may): other users could plant one there."""
    me = os.getuid() if hasattr(os, "getuid") else None
    try:
        st = os.stat(folder)
    except OSError:
        return None  # nothing there to import from
    how = (f"Move the spec and its modules into a folder only you can write, or trust it explicitly: --trust "
           f"on the command line, Trust(folders=({folder!r},)) or k.agent(spec, trust=True) in Python")
    if st.st_mode & stat.S_IWOTH:
        return (f"the spec's folder {folder} is writable by every user (mode {stat.S_IMODE(st.st_mode):o}), so "
                f"anyone could plant a module there; its modules are not trusted. {how}")
    if me is not None and st.st_uid not in (me, 0):
        return (f"the spec's folder {folder} is owned by another user (uid {st.st_uid}), so its modules are not "
                f"trusted (as git refuses a repository of dubious ownership). {how}")
    parent = os.path.dirname(folder)
    while parent and parent != folder:
        try:
            pst = os.stat(parent)
        except OSError:
            break
        if pst.st_mode & stat.S_IWOTH and not pst.st_mode & stat.S_ISVTX:
            return (f"the spec's folder {folder} is inside {parent}, which every user can write (no sticky bit), "
                    f"so anyone could replace it; its modules are not trusted. {how}")
        if me is not None and pst.st_uid not in (me, 0):  # its owner may rename what is inside, sticky or not
            return (f"the spec's folder {folder} is inside {parent}, owned by another user (uid {pst.st_uid}), who "
                    f"could replace it; its modules are not trusted. {how}")
        folder, parent = parent, os.path.dirname(parent)
    return None


NO_TRUST = Trust()
_current: "contextvars.ContextVar[Trust]" = contextvars.ContextVar("zagent_trust", default=NO_TRUST)


def as_trust(value: Any) -> Optional[Trust]:
    """``True`` -> trust everything, ``False`` -> nothing, a ``Trust`` as is, ``None`` -> keep the current one."""
    if value is None or isinstance(value, Trust):
        return value
    if value is True:
        return Trust(everything=True)
    if value is False:
        return NO_TRUST
    raise ConfigError(f"trust must be True, False, None or a zagent.speckit.Trust, got {value!r}")


def current_trust() -> Trust:
    """The trust in force here (``NO_TRUST`` unless inside ``trusting``)."""
    return _current.get()


@contextlib.contextmanager
def trusting(trust: "Trust | bool | None") -> Iterator[Trust]:
    """Build specs under ``trust`` inside the block (``True``, ``False`` or a ``Trust``; ``None`` keeps the current one)."""
    trust = as_trust(trust)
    if trust is None:
        yield _current.get()
        return
    token = _current.set(trust)
    try:
        yield trust
    finally:
        _current.reset(token)


def load(module: str, attr: str, value: str, key: str, search: Sequence[str], *, within: Sequence[str] = (),
         late: Sequence[str] = ()) -> Any:
    """Import ``module`` (this thread's top-level imports search ``search`` first and ``late`` last meanwhile;
    ``sys.path`` is left alone: ``finder.searching``) and get ``attr`` from it; failures are ``ConfigError``s naming
    ``key`` and ``value`` with file and line. ``within``: each submodule on the way must be found in these folders,
    checked before it is imported."""
    from .finder import searching

    clash = shadowed(module, search)
    if clash is not None:
        raise ConfigError(f"{key} {value!r}: module {module.partition('.')[0]!r} is imported already, from {clash[0]}, "
                          f"so {clash[1]} cannot be imported under that name; rename one of them")
    with searching(search, late, (module.partition(".")[0],)):
        if within:
            _check_found(module, within, value, key)
        return import_attr(module, attr, value, key)


@attrs.frozen
class NotImported:
    """What a dry resolve returns in place of the object: calling it says that nothing was imported."""

    path: str
    key: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ConfigError(f"{self.key} {self.path!r} was not imported (this command only reads the spec)")

    @property
    def __name__(self) -> str:  # tools name themselves after the function
        return self.path.rpartition(":")[2].rpartition(".")[2]


def resolve(value: Any, *, key: str, kernel: Optional["Kernel"] = None, trust: Optional[Trust] = None,
            base_dir: Optional[str] = None) -> Any:
    """The object a spec names by import path, if the spec is trusted to name it (see the module docstring).

    :param key: the spec key, for errors (``"tool"``, ``"parse_func"``, ``"rails.approver"``...).
    :param kernel: its ``config["trusted_imports"]`` globs apply.
    :param trust: defaults to ``current_trust()``.
    :param base_dir: the spec file's folder: searched first when it is trusted (``trust.folders``).
    """
    trust = current_trust() if trust is None else trust
    module, attr = split_path(value, key)
    if trust.dry:
        return NotImported(value, key)
    folders = tuple(trust.folders)
    if base_dir and not trust.everything and os.path.realpath(base_dir) not in folders:
        base_dir = None  # a folder is searched only when it is trusted
    search = tuple(dict.fromkeys(([os.path.realpath(base_dir)] if base_dir else []) + list(folders)))
    if not (trust.everything or trusted_name(module, kernel) or _in_folders(module, folders)):
        why = "".join(f" ({r})" for r in (*trust.refused, *clash_note(module, search), *withheld_note(module, trust)))
        raise ConfigError(f"{key} {value!r} in the spec is not trusted, so it was not imported (a spec file "
                          f"is data; naming code in it runs that code){why}; {HOW_TO_TRUST}")
    dunders = [p for p in (*module.split("."), *attr.split(".")) if p.startswith("__")]
    if dunders and not trust.everything:  # checked before anything is imported
        raise ConfigError(f"{key} {value!r} in the spec is not trusted: it names {', '.join(dunders)}; a dunder "
                          "attribute reaches past what the module defines (its globals, its imports), a package's "
                          "__main__ runs its command line and __init__ its start-up code again; name the module that "
                          f"defines a public function (e.g. 'pkg.tools:fn'); {HOW_TO_TRUST}")
    by_folder = bool(folders) and not (trust.everything or trusted_name(module, kernel))
    obj = load(module, "", value, key, search, within=folders if by_folder else (), late=trust.fallback)
    if by_folder:
        _check_landed(module, folders, value, key)
    return _walk(obj, module, attr, value, key, None if trust.everything else (kernel, folders))


def _walk(obj: Any, module: str, attr: str, value: str, key: str, check: Any) -> Any:
    """``attr`` (dotted) of the trusted ``module``; with ``check`` (``(kernel, folders)``), refused when a step is
    another module, or code of one (a function, class, callable object or ``Tool``: ``owners.code_owners``), that
    is not trusted itself."""
    from .owners import code_owners

    for part in attr.split("."):
        obj = _get(obj, module, attr, part, value, key)
        if check is None:
            continue
        for owner in code_owners(obj):
            if owner != module and not _trusted_module(owner, *check):
                raise ConfigError(f"{key} {value!r} in the spec is not trusted: {part!r} is code of module {owner!r}, "
                                  f"which {module!r} imports but which is not trusted itself, so it was not used; "
                                  f"name that module's function directly, or {HOW_TO_TRUST}")
    return obj


def _get(obj: Any, module: str, attr: str, part: str, value: str, key: str) -> Any:
    try:
        return getattr(obj, part)
    except AttributeError:
        raise ConfigError(f"cannot import {key} {value!r}: module {module!r} has no attribute {attr!r}") from None


def _trusted_module(name: str, kernel: Optional["Kernel"], folders: Sequence[str]) -> bool:
    """Is the (imported) module ``name`` trusted by ``trusted_imports`` or loaded from one of ``folders``?"""
    mod = sys.modules.get(name)
    return trusted_name(name, kernel) or bool(folders and _file_in(getattr(mod, "__file__", None), folders))


def trusted_name(module: str, kernel: Optional["Kernel"]) -> bool:
    """Does ``kernel.config["trusted_imports"]`` cover ``module``?"""
    patterns: Sequence[str] = (kernel.config.get("trusted_imports") or ()) if kernel is not None else ()
    if isinstance(patterns, str):
        patterns = [patterns]
    for p in patterns:
        if fnmatchcase(module, p) or (p.endswith(".*") and module == p[:-2]):
            return True
    return False


def _in_folders(module: str, folders: Sequence[str]) -> bool:
    """Would ``module`` be loaded from one of ``folders``? Checked without running anything:
    its top-level name must not be built in, frozen or already imported from elsewhere, and must be found there."""
    if not folders:
        return False
    top = module.partition(".")[0]
    if top in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(top) is not None:
        return False
    loaded = sys.modules.get(top)
    if loaded is not None:  # imported before (another spec, an earlier tool): what lies below is checked still
        places = list(getattr(loaded, "__path__", None) or [])
        if not _file_in(getattr(loaded, "__file__", None), folders) or any(map(_writable_by_others, places)):
            return False
        _refuse_planted(module, _planted_below(places, module.split(".")[1:]) if places else None)
        return True
    found = importlib.machinery.PathFinder.find_spec(top, list(folders))
    if found is None:
        return False
    if found.origin in (None, "namespace") and found.submodule_search_locations:
        portion = next(iter(found.submodule_search_locations))
        raise ConfigError(f"module {module!r} is next to the spec, but {portion} is a namespace package (a folder "
                          "without __init__.py): Python joins it with same-named folders anywhere on sys.path, and a "
                          f"module {top!r} elsewhere wins over it, so it was not imported. Add an __init__.py to "
                          f"{portion}, or {HOW_TO_TRUST}")
    where = found.origin if found.origin not in (None, "namespace") else next(iter(found.submodule_search_locations or []), None)
    if where and found.submodule_search_locations and found.origin not in (None, "namespace"):
        if _writable_by_others(os.path.dirname(where)):  # a package folder anyone can add a module to
            return False
    planted = _bytecode_planted(where) if where and _file_in(where, folders) else None
    if not planted and where and found.submodule_search_locations and _file_in(where, folders):
        planted = _planted_below(list(found.submodule_search_locations), module.split(".")[1:])
    _refuse_planted(module, planted)
    return _file_in(where, folders) and not (where and _writable_by_others(where))


def _refuse_planted(module: str, planted: Optional[str]) -> None:
    """``ConfigError`` saying what others can write on the way to ``module`` (``planted``: a file, a package folder
    or a bytecode cache), if anything."""
    if planted and os.path.isfile(planted) and "__pycache__" not in planted.split(os.sep):
        raise ConfigError(f"module {module!r} is next to the spec, but its file {planted} can be written by other "
                          "users (or is theirs), who could have put code in it: it was not imported. Keep it yours "
                          "alone (chmod go-w), or trust it explicitly (--trust, Trust(folders=...) in Python)")
    if planted and os.path.basename(planted) != "__pycache__" and os.path.isdir(planted):
        raise ConfigError(f"module {module!r} is next to the spec, but its package folder {planted} can be written "
                          "by other users (or is theirs), who could replace the module: it was not imported. Keep "
                          "the folder yours alone (chmod go-w)")
    if planted:
        raise ConfigError(f"module {module!r} is next to the spec, but its bytecode cache {planted} can be written "
                          "by other users (or is theirs), and Python runs a cached .pyc instead of the source: it "
                          "was not imported. Delete that __pycache__ and keep the folder yours alone (chmod go-w)")


def _planted_below(locations: list[str], parts: list[str]) -> Optional[str]:
    """For ``pkg.a.b`` (``parts`` ``["a", "b"]`` below ``pkg``'s folders): the first package folder, ``__init__.py``
    or module file (source, extension or bytecode) on the way other users can write, or planted bytecode of one;
    found as the import finds it, without importing anything."""
    for part in parts:
        found = importlib.machinery.PathFinder.find_spec(part, locations)
        if found is None:
            return None
        origin = found.origin if found.origin not in (None, "namespace") else None
        places = [*(found.submodule_search_locations or ()), origin]
        planted = next((p for p in places if p and _writable_by_others(p)), None) or (
            _bytecode_planted(origin) if origin else None)
        if planted or not found.submodule_search_locations:
            return planted
        locations = list(found.submodule_search_locations)
    return None


def _bytecode_planted(source: str) -> Optional[str]:
    """The bytecode another user could have planted for ``source`` (``None``: none): its ``__pycache__``
    folder, or the cached file itself, writable by every user or owned by another (a ``.pyc`` whose header
    matches the source's time and size is run without reading the source)."""
    if not source.endswith(".py"):
        return None
    cache = os.path.join(os.path.dirname(source), "__pycache__")
    if _writable_by_others(cache):
        return cache
    try:
        cached = importlib.util.cache_from_source(source)
    except (NotImplementedError, ValueError):  # no bytecode cache on this interpreter
        return None
    return cached if os.path.lexists(cached) and _writable_by_others(cached) else None


def _writable_by_others(path: str) -> bool:
    """Is ``path`` (a module file or a package folder) writable by every user, or owned by another user?"""
    try:
        st = os.stat(path)
    except OSError:
        return False
    me = os.getuid() if hasattr(os, "getuid") else None
    return bool(st.st_mode & stat.S_IWOTH) or (me is not None and st.st_uid not in (me, 0))


def _check_found(module: str, folders: Sequence[str], value: str, key: str) -> None:
    """Each package of ``module`` below the top one, and the module, is found in ``folders`` by the real import
    (its parent imported, searched along the parent's ``__path__``, which ``pkgutil.extend_path`` may widen),
    checked before it is imported."""
    parts = module.split(".")
    for i in range(2, len(parts) + 1):
        name = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(name)  # imports the parent only, checked one step before
        except Exception:  # the import itself reports it, with file and line
            return
        if found is None:
            return
        places = [found.origin] if found.origin not in (None, "namespace") else list(found.submodule_search_locations or [])
        if not places or not all(_file_in(p, folders) for p in places):
            raise ConfigError(f"{key} {value!r}: module {name!r} would be imported from {places[0] if places else '?'}, "
                              f"not from the spec's folder (its package's __path__ reaches further), so it was not "
                              f"imported; {HOW_TO_TRUST}")


def _check_landed(module: str, folders: Sequence[str], value: str, key: str) -> None:
    """After the import: the module really came from a trusted folder (not a same-named one found first)."""
    mod = sys.modules.get(module)
    if not _file_in(getattr(mod, "__file__", None), folders):
        raise ConfigError(f"{key} {value!r}: module {module!r} was not loaded from the spec's folder; {HOW_TO_TRUST}")


def _file_in(path: Optional[str], folders: Sequence[str]) -> bool:
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)
