"""Who vouches for a spec's import paths (``Trust``, in force inside ``trusting(...)``) and the import of a
``module:attr`` path (``import_path``, ``load``); the check itself is ``zagent.speckit.trust.resolve``.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import sys
import traceback
from typing import Any, Iterator, Optional, Sequence

import attrs

from ..errors import ConfigError


@attrs.frozen
class Trust:
    """Who vouches for the spec being built: ``everything`` (``--trust``), modules in ``folders`` (searched first),
    or nothing imported at all (``dry``: a ``NotImported`` stand-in)."""

    everything: bool = False
    folders: tuple[str, ...] = ()
    dry: bool = False
    #: why a spec's folder was not trusted (``for_file``), named when an import from it is refused
    refused: tuple[str, ...] = ()

    @classmethod
    def for_file(cls, path: "str | os.PathLike[str]", *, everything: bool = False, dry: bool = False) -> "Trust":
        """The CLI's trust for a spec file: its folder (everything with ``--trust``), unless ``dubious_folder``."""
        folder = os.path.dirname(os.path.realpath(os.fspath(path)))
        problem = dubious_folder(folder)
        return cls(everything=everything, folders=() if problem else (folder,), dry=dry,
                   refused=(problem,) if problem else ())


def dubious_folder(folder: str) -> Optional[str]:
    """Why modules in ``folder`` must not be trusted (``None``: they may): other users could plant one there."""
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
    """Import ``module:attr`` (or a bare ``module``) the caller already trusts, with no check; failures are
    ``ConfigError``s with file and line."""
    module, attr = split_path(value, key, module_ok=True)
    return load(module, attr, value, key, ())


def load(module: str, attr: str, value: str, key: str, search: Sequence[str]) -> Any:
    """Import ``module`` (``search`` put first on ``sys.path`` meanwhile) and get ``attr`` from it; failures
    are ``ConfigError``s naming ``key`` and ``value`` with file and line."""
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

