"""``Stash`` and ``StashKey[T]``: typed per-kernel and per-run storage for plugins (pytest's idea).

A plugin keeps its state for one kernel (``kernel.stash``) or one run
(``ctx.stash``) under a key object it owns, instead of a module-level dict
keyed by kernel or a string shared by convention::

    WINDOWS: StashKey[RateWindows] = StashKey("zagent.rails.rpm")

    windows = kernel.stash.setdefault(WINDOWS, RateWindows())   # typed as RateWindows

Keys compare by identity, so two plugins cannot collide by accident, and a
type checker knows what each key holds. A ``Stash`` is a ``dict``: string
keys (the older convention of ``ctx.stash``) keep working beside typed ones.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar, Union, cast, overload

T = TypeVar("T")


class StashKey(Generic[T]):
    """A key of a ``Stash`` whose value has type ``T``; compares by identity. ``name`` is for reprs."""

    __slots__ = ("name",)

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<StashKey {self.name or hex(id(self))}>"


class Stash(dict):  # type: ignore[type-arg]
    """A dict that is typed for ``StashKey`` keys (see the module docstring)."""

    __slots__ = ()

    @overload
    def __getitem__(self, key: StashKey[T]) -> T: ...
    @overload
    def __getitem__(self, key: str) -> Any: ...

    def __getitem__(self, key: Union[StashKey[Any], str]) -> Any:
        return dict.__getitem__(self, key)

    def get_or_create(self, key: StashKey[T], factory: Callable[[], T]) -> T:
        """The value under ``key``, made with ``factory()`` and stored the first time."""
        try:
            return cast(T, dict.__getitem__(self, key))
        except KeyError:
            value = factory()
            return cast(T, self.setdefault(key, value))

    def __repr__(self) -> str:
        return f"<Stash {len(self)} key(s)>"
