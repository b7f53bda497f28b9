"""``Stash`` and ``StashKey[T]``: typed per-kernel (``kernel.stash``) and per-run (``ctx.stash``) storage;
keys compare by identity. A key made with ``restore=`` is persistent: ``to_state()`` saves its value by name
and ``get_or_create`` rebuilds it from restored data on first use.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Mapping, Optional, TypeVar, Union, cast, overload

T = TypeVar("T")


class StashKey(Generic[T]):
    """A key of a ``Stash`` whose value has type ``T``; compares by identity. ``name`` is for reprs
    and, for a persistent key (``restore`` given: plain data -> ``T``), names its saved state."""

    __slots__ = ("name", "restore")

    def __init__(self, name: str = "", *, restore: Optional[Callable[[Any], T]] = None) -> None:
        if restore is not None and not name:
            raise ValueError("a persistent StashKey (restore=...) needs a name to save its state under")
        self.name = name
        self.restore = restore

    def __repr__(self) -> str:
        return f"<StashKey {self.name or hex(id(self))}>"


class Stash(dict[Any, Any]):
    """A dict that is typed for ``StashKey`` keys (see the module docstring)."""

    __slots__ = ()

    @overload
    def __getitem__(self, key: StashKey[T]) -> T: ...
    @overload
    def __getitem__(self, key: str) -> Any: ...

    def __getitem__(self, key: Union[StashKey[Any], str]) -> Any:
        return dict.__getitem__(self, key)

    def get_or_create(self, key: StashKey[T], factory: Callable[[], T]) -> T:
        """The value under ``key``; else, for a persistent key, its restored state; else ``factory()``
        (stored the first time)."""
        try:
            return cast(T, dict.__getitem__(self, key))
        except KeyError:
            pass
        if key.restore is not None and key.name in self:
            value = key.restore(self.pop(key.name))
        else:
            value = factory()
        return cast(T, self.setdefault(key, value))

    def to_state(self) -> dict[str, Any]:
        """Plain data to save with a checkpoint (see the module docstring), by key name."""
        out: dict[str, Any] = {}
        for key, value in list(self.items()):
            persistent = isinstance(key, str) or (isinstance(key, StashKey) and key.restore is not None)
            to_state = getattr(value, "to_state", None)
            if persistent and callable(to_state):
                out[key if isinstance(key, str) else key.name] = to_state()
        return out

    def restore(self, data: Mapping[str, Any]) -> None:
        """Put saved state back under its names (kept values win); persistent keys adopt it on first use."""
        for name, value in data.items():
            self.setdefault(name, value)

    def __repr__(self) -> str:
        return f"<Stash {len(self)} key(s)>"
