"""``Stash`` and ``StashKey[T]``: typed per-kernel (``kernel.stash``) and per-run (``ctx.stash``) storage, keys
compared by identity (a ``restore=`` key's value persists by name); ``RunShare``: the stash a run's contexts share."""

from __future__ import annotations

import threading
import weakref
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

    __slots__ = ("_restored",)

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
        """Plain data to save with a checkpoint: each persistent value's ``to_state()``, by key name, and saved
        state ``restore`` put back that no key has adopted yet, as it was (a checkpoint written before its
        plugin runs again must not lose it: a tool budget's counts, say)."""
        out: dict[str, Any] = {}
        restored: dict[str, Any] = getattr(self, "_restored", None) or {}
        for key, value in list(self.items()):
            persistent = isinstance(key, str) or (isinstance(key, StashKey) and key.restore is not None)
            to_state = getattr(value, "to_state", None)
            if persistent and callable(to_state):
                out[key if isinstance(key, str) else key.name] = to_state()
            elif isinstance(key, str) and key in restored and value is restored[key]:
                out[key] = value
        return out

    def restore(self, data: Mapping[str, Any]) -> None:
        """Put saved state back under its names (kept values win); persistent keys adopt it on first use."""
        restored: dict[str, Any] = getattr(self, "_restored", None) or {}
        for name, value in data.items():
            if name not in self:
                self[name] = restored[name] = value
        self._restored = restored

    def __repr__(self) -> str:
        return f"<Stash {len(self)} key(s)>"


class RunShare(Stash):
    """The ``Stash`` every context of one run id shares (``ctx.shared``), held weakly per kernel."""

    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return f"<RunShare {len(self)} key(s)>"


_lock = threading.Lock()
_SHARES: "StashKey[weakref.WeakValueDictionary[str, RunShare]]" = StashKey("zagent.runshare")


def share_of(kernel: Any, run_id: str, share: Optional[RunShare] = None) -> RunShare:
    """The share of run ``run_id`` on ``kernel``: the one a live context of that run holds, else ``share``
    (made the run's share) or a new one."""
    with _lock:
        registry = kernel.stash.get_or_create(_SHARES, weakref.WeakValueDictionary)
        found: Optional[RunShare] = registry.get(run_id)
        if found is None:
            found = registry[run_id] = share if share is not None else RunShare()
        return found
