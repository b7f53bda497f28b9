"""The one ``module:attr`` resolver (``resolve``), and the trust rules for import paths that come from spec
files: a path is imported only when the app (``trusted_imports``, ``trust=True``) or the CLI user (the spec's
own folder, ``--trust``) trusts it, else ``ConfigError``; ``Trust(dry=True)`` imports nothing. The trust in
force is a context variable (``trusting(...)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.machinery
import os
import sys
import traceback
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

import attrs

from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

HOW_TO_TRUST = ("trust it: Kernel(config={'trusted_imports': ['<module pattern>']}) or k.agent(spec, trust=True) "
                "in Python; on the command line, keep the module next to the spec file or pass --trust")


@attrs.frozen
class Trust:
    """Who vouches for the import paths of the spec being built.

    :ivar everything: any import path may be imported (``trust=True``, ``--trust``).
    :ivar folders: modules whose file lies inside one of these folders may be imported
        (the CLI passes the spec file's folder); they are also searched first.
    :ivar dry: resolve nothing: check the form only and return a ``NotImported`` stand-in.
    """

    everything: bool = False
    folders: tuple[str, ...] = ()
    dry: bool = False
    #: why a spec's folder was not trusted (``for_file``): named when an import from it is refused
    refused: tuple[str, ...] = ()

    @classmethod
    def for_file(cls, path: "str | os.PathLike[str]", *, everything: bool = False, dry: bool = False) -> "Trust":
        """The CLI's trust for a spec file: its own folder (and everything with ``--trust``), unless other
        users can write that folder (``dubious_folder``): then nothing in it is trusted, as git refuses a
        repository of "dubious ownership"."""
        folder = os.path.dirname(os.path.realpath(os.fspath(path)))
        problem = dubious_folder(folder)
        if problem is not None:
            return cls(everything=everything, folders=(), dry=dry, refused=(problem,))
        return cls(everything=everything, folders=(folder,), dry=dry)


def dubious_folder(folder: str) -> Optional[str]:
    """Why modules in ``folder`` must not be trusted (``None``: they may): it is writable by every user,
    owned by another user (not root), or inside a folder every user may rename things in (world-writable
    without the sticky bit). Then anyone on the machine could plant a module there."""
    import stat

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
    raise ConfigError(f"trust must be True, False, None or a zagent._trust.imports.Trust, got {value!r}")


def current_trust() -> Trust:
    """The trust in force here (``NO_TRUST`` unless inside ``trusting``)."""
    return _current.get()


@contextlib.contextmanager
def trusting(trust: Optional[Trust]) -> Iterator[Trust]:
    """Build specs under ``trust`` inside the block (``None`` keeps the current one)."""
    if trust is None:
        yield _current.get()
        return
    token = _current.set(trust)
    try:
        yield trust
    finally:
        _current.reset(token)


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


def split_path(value: Any, key: str, *, module_ok: bool = False) -> tuple[str, str]:
    """``(module, attr)`` of an import path ``package.module:attr`` (``attr`` may be empty with
    ``module_ok``: the module itself); ``ConfigError`` for anything else."""
    if not isinstance(value, str) or "\x00" in value:
        raise ConfigError(f"{key} {value!r} is not an import path; write it as 'package.module:function'")
    module, sep, attr = value.strip().partition(":")
    module, attr = module.strip(), attr.strip()
    if module_ok and not attr:
        sep, attr = ":", ""
    if (not sep or not module or (not attr and not module_ok) or module.startswith(".")
            or not all(p.isidentifier() for p in module.split("."))
            or not all(p.isidentifier() for p in attr.split(".") if p or not module_ok)):
        raise ConfigError(f"{key} {value!r} is not an import path; write it as 'package.module:function' "
                          "(an absolute module name, no relative '.module')")
    return module, attr


def import_path(value: str, key: str = "import path") -> Any:
    """Import ``module:attr`` (or a bare ``module``) with no trust check: for code the caller already
    trusts (plugins named in ``Kernel(plugins=[...])``, entry points, ``Kernel.config``).
    Import failures are ``ConfigError``s with file and line."""
    module, attr = split_path(value, key, module_ok=True)
    return _load(module, attr, value, key, ())


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
        why = "".join(f" ({r})" for r in trust.refused)
        raise ConfigError(f"{key} {value!r} in the spec is not trusted, so it was not imported (a spec file "
                          f"is data; naming code in it runs that code){why}; {HOW_TO_TRUST}")
    obj = _load(module, attr, value, key, search)
    if folders and not (trust.everything or trusted_name(module, kernel)):
        _check_landed(module, folders, value, key)
    return obj


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
    if loaded is not None:
        return _file_in(getattr(loaded, "__file__", None), folders)
    found = importlib.machinery.PathFinder.find_spec(top, list(folders))
    if found is None:
        return False
    where = found.origin if found.origin not in (None, "namespace") else next(iter(found.submodule_search_locations or []), None)
    if where and found.submodule_search_locations and found.origin not in (None, "namespace"):
        if _writable_by_others(os.path.dirname(where)):  # a package folder anyone can add a module to
            return False
    return _file_in(where, folders) and not (where and _writable_by_others(where))


def _writable_by_others(path: str) -> bool:
    """Is ``path`` (a module file or a package folder) writable by every user, or owned by another user?"""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return False
    me = os.getuid() if hasattr(os, "getuid") else None
    return bool(st.st_mode & stat.S_IWOTH) or (me is not None and st.st_uid not in (me, 0))


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


def _load(module: str, attr: str, value: str, key: str, search: Sequence[str]) -> Any:
    added = [d for d in search if d not in sys.path]
    sys.path[:0] = added
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name and (module + ".").startswith(exc.name + "."):
            raise ConfigError(f"cannot import {key} {value!r}: no module named {exc.name!r}") from None
        raise ConfigError(f"cannot import {key} {value!r}: {_where(exc)}") from None
    except SyntaxError as exc:
        raise ConfigError(f"cannot import {key} {value!r}: {exc.filename}:{exc.lineno}: SyntaxError: "
                          f"{exc.msg}") from None
    except Exception as exc:  # the module's own top-level code raised
        raise ConfigError(f"cannot import {key} {value!r}: {_where(exc)}") from None
    finally:
        for d in added:
            try:
                sys.path.remove(d)
            except ValueError:
                pass
    for part in filter(None, attr.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"cannot import {key} {value!r}: module {module!r} has no attribute "
                              f"{attr!r}") from None
    return obj


def _where(exc: BaseException) -> str:
    """``file:line: Type: message`` of the innermost frame of an import failure."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "importlib" not in f.filename and "<frozen" not in f.filename]
    last = inner or list(frames)
    at = f"{last[-1].filename}:{last[-1].lineno}: " if last else ""
    return f"{at}{type(exc).__name__}: {exc}"

