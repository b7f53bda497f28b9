"""Where the spec being built comes from (``spec_file``), a model name the user chose (``UsersModel``) and the
check of a model's options in force (``option_check``; ``zagent.speckit.paths`` sets these context variables).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

#: ``check(factory, spec, options, kernel)`` run on the options of every model made while it is in ``_check``
OptionCheck = Callable[[Optional[Callable[..., Any]], str, Mapping[str, Any], "Optional[Kernel]"], None]

_folders: "contextvars.ContextVar[tuple[str, ...]]" = contextvars.ContextVar("zagent_spec_folders", default=())
_file: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("zagent_spec_file", default=None)
_check: "contextvars.ContextVar[Optional[OptionCheck]]" = contextvars.ContextVar("zagent_option_check", default=None)


class UsersModel(str):
    """A ``provider:model`` name the user chose (``--model``, an app's ``llm=``), never one from a spec file."""

    __slots__ = ()


@contextlib.contextmanager
def spec_file(path: "Optional[str | os.PathLike[str]]") -> Iterator[None]:
    """Specs built inside the block come from the file ``path`` (``current_spec_file()``; its folder, unless other
    users can write it, joins the spec folders)."""
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


def option_check() -> Optional[OptionCheck]:
    """The check in force for the options of the model being made (one context-variable read), if any."""
    return _check.get()
