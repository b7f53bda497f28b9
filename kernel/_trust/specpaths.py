"""Where the spec being built comes from, for the checks of ``zagent.speckit.paths``: ``spec_file(path)`` (its
file and folder, read by ``current_spec_file`` and ``spec_folders``), ``UsersModel`` (a model name the user chose,
not a spec) and ``checking_options(check)``: a check every model built inside the block goes through before its
provider's factory runs (``zagent.speckit.paths.untrusted_options`` sets it for an untrusted spec).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

#: ``check(factory, spec, options, kernel)`` run on the options of every model made inside ``checking_options``
OptionCheck = Callable[[Optional[Callable[..., Any]], str, Mapping[str, Any], "Optional[Kernel]"], None]

_folders: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_spec_folders", default=())
_file: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("zagent_spec_file", default=None)
_check: "contextvars.ContextVar[Optional[OptionCheck]]" = contextvars.ContextVar("zagent_option_check", default=None)


class UsersModel(str):
    """A ``provider:model`` name the user chose (the CLI's ``--model``, an app's ``llm=`` argument), not one a
    spec file names: its wrapper's default file in the user's data folder is theirs to use. A spec file
    cannot make one (JSON and YAML give plain ``str``)."""

    __slots__ = ()


@contextlib.contextmanager
def spec_file(path: "Optional[str | os.PathLike[str]]") -> Iterator[None]:
    """Specs built inside the block come from the file ``path``: the paths they name may lie in its folder,
    and ``current_spec_file()`` is its real path (its identity, e.g. for its memory namespace)."""
    if path is None:
        yield
        return
    from .imports import dubious_folder

    real = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(real)  # not one other users can write: they could plant links and files there
    token = _folders.set(_folders.get() + ((folder,) if dubious_folder(folder) is None else ()))
    file_token = _file.set(real)
    try:
        yield
    finally:
        _file.reset(file_token)
        _folders.reset(token)


def current_spec_file() -> Optional[str]:
    """The real path of the spec file being built (``None`` for a spec given as a dict)."""
    return _file.get()


def spec_folders() -> tuple[str, ...]:
    """The folders of the spec files being built (outermost first), other users' writable ones left out."""
    return _folders.get()


@contextlib.contextmanager
def checking_options(check: OptionCheck) -> Iterator[None]:
    """Models made inside the block have their options checked by ``check`` first (``option_check``)."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def option_check() -> Optional[OptionCheck]:
    """The check in force for the options of the model being made (one context-variable read), if any."""
    return _check.get()
