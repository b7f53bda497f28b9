"""``Stash`` and ``StashKey[T]``: typed per-kernel and per-run storage for plugins (pytest's idea).

A plugin keeps its state for one kernel (``kernel.stash``) or one run
(``ctx.stash``) under a key object it owns, instead of a module-level dict
keyed by kernel or a string shared by convention::

    WINDOWS: StashKey[RateWindows] = StashKey("zagent.rails.rpm")

    windows = kernel.stash.setdefault(WINDOWS, RateWindows())   # typed as RateWindows

Keys compare by identity, so two plugins cannot collide by accident, and a
type checker knows what each key holds. A ``Stash`` is a ``dict``: string
keys (the older convention of ``ctx.stash``) keep working beside typed ones.
Keys two plugins share (the ReAct loop and the rails) live in ``zagent.agentkit.runkeys``.

Per-run state that must survive a checkpoint: a key made with
``restore=`` is *persistent*. ``to_state()`` gives, by key name, the
``to_state()`` of every persistent key's value (and of string-keyed values
that have one); ``restore(data)`` puts that plain data back under the names;
``get_or_create`` on a persistent key adopts the data under its name through
``restore`` first. So a restored run rebuilds a plugin's object on first use,
even when the plugin is imported only after the restore.
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
