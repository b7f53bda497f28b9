"""``RunCounter``: per-run counts (a tool budget, a usage limit), thread-safe, never negative.
``shared_counter(ctx, KEY)`` gives every part of a composite run the same counter, saved with its checkpoints under
``KEY`` and adopted on restore without lowering a count (docs/security.md, "A run is a run").
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TypeVar

from .._runs.stash import RunShare, share_of

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from .._runs.stash import StashKey

__all__ = ["RunCounter", "check_counters", "check_counts", "join", "rail_counts", "rail_counts_of", "raise_counters",
           "shared_counter"]

C = TypeVar("C", bound="RunCounter")
_lock = threading.Lock()


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
    def from_state(cls: type[C], counts: Any) -> C:
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


def check_counters(data: Any, where: str = "the saved counters") -> dict[str, dict[str, int]]:
    """Saved ``RunShare.to_state()`` data checked: ``{name: {key: int >= 0}}`` (``ValueError`` otherwise)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be an object, got {type(data).__name__}")
    return {str(name): check_counts(counts, f"{where} {name!r}") for name, counts in data.items()}


def shared_counter(ctx: "RunContext[Any]", key: "StashKey[C]", factory: Callable[[], C] = RunCounter) -> C:  # type: ignore[assignment]
    """The counter under ``key`` shared by every part of ``ctx``'s run; ``key`` is persistent (``restore=``):
    counts a restored run saved (plain data under its name) are checked and adopted with ``raise_to``."""
    stash = ctx.stash
    counter: Optional[C] = stash.get(key)
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
    return stash.setdefault(key, counter)  # type: ignore[no-any-return]


def rail_counts(share: RunShare) -> dict[str, dict[str, int]]:
    """The run's tool-budget and usage counts now (``runkeys.BUDGET_COUNTS``, ``USAGE_COUNTS``), to keep with what a
    composite run records of each part (a workflow's trace entry, a chat's message): see ``raise_counters``."""
    return rail_counts_of(share.to_state())


def rail_counts_of(counters: Mapping[str, Any]) -> dict[str, Any]:
    """The tool-budget and usage entries of saved counters (``RunShare.to_state()`` data), as ``rail_counts``."""
    from .runkeys import BUDGET_COUNTS, USAGE_COUNTS

    return {k: v for k, v in counters.items() if k in (BUDGET_COUNTS, USAGE_COUNTS) and v}


def raise_counters(counters: dict[str, dict[str, int]], shown: Any, where: str) -> None:
    """``counters`` (saved, checked) raised to the counts ``shown`` (``rail_counts`` data a run recorded), so
    counters dropped from an unsigned store reset no limit; ``ValueError`` naming ``where`` for bad counts."""
    for name, counts in check_counters(shown or {}, where).items():
        have = counters.setdefault(name, {})
        for key, n in counts.items():
            have[key] = max(have.get(key, 0), n)


def join(kernel: Any, run_id: str, share: RunShare, saved: Optional[Mapping[str, Any]] = None) -> None:
    """Make ``share`` the one of run ``run_id`` too (a run inside another counts against the outer one), with
    the counters a resumed run ``saved`` (checked ``RunShare.to_state()`` data, adopted on first use)."""
    share_of(kernel, run_id, share)
    share.restore(saved or {})
