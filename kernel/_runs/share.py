"""Per-run state shared by every part of a composite run: ``RunShare`` and ``RunCounter``.

A group chat's turns, a workflow's nodes and the agents they call each get a ``RunContext`` of their
own (own agent, settings and ``stash``), all under the run id of the chat or workflow. What must count
across the whole run (a tool budget, a usage limit) lives in ``ctx.shared``: one ``RunShare`` (a
``Stash``) for every live context of that run id, and for contexts derived from them (``for_agent``,
``for_call``, or given ``share=`` explicitly, as a group chat run as a workflow node is). So a spec's
``max_rounds`` or node count cannot multiply a per-run limit::

    counter = shared_counter(ctx, MY_KEY)        # the same RunCounter in every part of the run
    if not counter.take("search", limit): ...

The registry holds shares weakly: a share lives while a context of its run does (a composite run keeps
its own context for its whole length), so a kernel serving many runs keeps nothing of finished ones.
``shared_counter`` also keeps the counter in ``ctx.stash`` under its persistent ``StashKey``, so a loop
that checkpoints its stash saves the counts, and a restored run's saved counts are adopted (never
lowering a count already shared by the run).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Mapping, Optional

from .stash import Stash, StashKey

if TYPE_CHECKING:  # pragma: no cover
    from .context import RunContext

__all__ = ["RunCounter", "RunShare", "check_counters", "check_counts", "join", "share_of", "shared_counter"]

_lock = threading.Lock()
_REGISTRY: "StashKey[weakref.WeakValueDictionary[str, RunShare]]" = StashKey("zagent.runshare")


class RunShare(Stash):
    """The ``Stash`` every context of one run shares (see the module docstring)."""

    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return f"<RunShare {len(self)} key(s)>"


def share_of(kernel: Any, run_id: str) -> RunShare:
    """The share of run ``run_id`` on ``kernel``: the one a live context of that run holds, else a new one."""
    with _lock:
        registry = kernel.stash.get_or_create(_REGISTRY, weakref.WeakValueDictionary)
        share: Optional[RunShare] = registry.get(run_id)
        if share is None:
            share = registry[run_id] = RunShare()
        return share


def join(kernel: Any, run_id: str, share: RunShare, saved: Optional[Mapping[str, Any]] = None) -> None:
    """Make ``share`` the one of run ``run_id`` too (a run inside another counts against the outer one), with
    the counters a resumed run ``saved`` (checked ``RunShare.to_state()`` data, adopted on first use)."""
    with _lock:
        kernel.stash.get_or_create(_REGISTRY, weakref.WeakValueDictionary).setdefault(run_id, share)
    share.restore(saved or {})


class RunCounter:
    """Counts per name for one run (a tool budget, a usage limit); thread-safe, never negative."""

    __slots__ = ("counts", "lock")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def take(self, name: str, limit: int) -> bool:
        """Count one of ``name`` if fewer than ``limit`` were counted; False when the limit is reached."""
        with self.lock:
            used = self.counts.get(name, 0)
            if used >= limit:
                return False
            self.counts[name] = used + 1
            return True

    def give_back(self, name: str) -> None:
        """Un-count one of ``name`` (a later check did not let it through)."""
        with self.lock:
            if self.counts.get(name, 0) > 0:
                self.counts[name] -= 1

    def raise_to(self, counts: Mapping[str, int]) -> None:
        """Make each count at least ``counts[name]`` (adopting saved counts never lowers a shared one)."""
        with self.lock:
            for name, n in counts.items():
                if n > self.counts.get(name, 0):
                    self.counts[name] = n

    def to_state(self) -> dict[str, int]:
        """The counts as plain data (saved with a run's checkpoint)."""
        with self.lock:
            return dict(self.counts)

    @classmethod
    def from_state(cls, counts: Any) -> "RunCounter":
        """Counts saved by ``to_state``; ``ValueError`` unless they are a mapping of names to ints >= 0."""
        counter = cls()
        counter.counts = check_counts(counts)
        return counter

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.counts}>"


def check_counts(counts: Any, where: str = "saved counts") -> dict[str, int]:
    """``counts`` as ``{name: int >= 0}``; ``ValueError`` naming the bad entry otherwise."""
    if not isinstance(counts, Mapping):
        raise ValueError(f"{where} must be an object of name -> count, got {type(counts).__name__}")
    out: dict[str, int] = {}
    for name, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"{where}: the count of {name!r} is {n!r}; counts are whole numbers >= 0")
        out[str(name)] = n
    return out


def shared_counter(ctx: "RunContext[Any]", key: "StashKey[Any]", factory: Any = RunCounter) -> Any:
    """The counter under ``key`` shared by every part of ``ctx``'s run (see the module docstring).

    ``key`` is persistent (``restore=``): counts a restored run saved (plain data in ``ctx.stash`` under its
    name) are checked and adopted with ``raise_to``."""
    stash = ctx.stash
    counter = stash.get(key)
    if counter is not None:
        return counter
    shared = ctx.shared
    with _lock:
        counter = shared.get(key)
        if counter is None:
            counter = shared[key] = factory()
    for holder in (shared, stash):  # counts a restored composite run (its share) or loop (its stash) saved
        saved = holder.pop(key.name, None) if key.name else None
        if saved is not None:
            counter.raise_to(check_counts(saved, f"the saved {key.name!r} counts"))
    return stash.setdefault(key, counter)


def check_counters(data: Any, where: str = "the saved counters") -> dict[str, dict[str, int]]:
    """Saved ``RunShare.to_state()`` data checked: ``{name: {key: int >= 0}}`` (``ValueError`` otherwise)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be an object, got {type(data).__name__}")
    return {str(name): check_counts(counts, f"{where} {name!r}") for name, counts in data.items()}
