"""``RunShare``: the ``Stash`` every context of one run id shares (``ctx.shared``), held weakly per kernel.

Per-run counters on top of it are in ``zagent.agentkit.counters``; docs/architecture.md says why.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Optional

from .stash import Stash, StashKey

__all__ = ["RunShare", "share_of"]

_lock = threading.Lock()
_REGISTRY: "StashKey[weakref.WeakValueDictionary[str, RunShare]]" = StashKey("zagent.runshare")


class RunShare(Stash):
    """The ``Stash`` every context of one run shares."""

    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return f"<RunShare {len(self)} key(s)>"


def share_of(kernel: Any, run_id: str, share: Optional[RunShare] = None) -> RunShare:
    """The share of run ``run_id`` on ``kernel``: the one a live context of that run holds, else ``share``
    (made the run's share) or a new one."""
    with _lock:
        registry = kernel.stash.get_or_create(_REGISTRY, weakref.WeakValueDictionary)
        found: Optional[RunShare] = registry.get(run_id)
        if found is None:
            found = registry[run_id] = share if share is not None else RunShare()
        return found
