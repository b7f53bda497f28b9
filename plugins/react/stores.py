"""One checkpoint store per agent of a run: ``claim_store`` claims the store a ReAct loop checkpoints into for the
run (``ctx.shared``), so an agent it calls as a tool, a handoff or a parallel node that names the same store is
refused before it saves a step. Agents of one run share its run id: two of them in one store overwrite each other's
steps, and the caller's run no longer checkpoints or resumes (docs/security.md, 8).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Optional

from zagent.errors import ConfigError
from zagent import StashKey

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

#: store identity -> (the loop holding it, its agent's name), per run (``ctx.shared``)
STORES: "StashKey[dict[str, tuple[int, str]]]" = StashKey("zagent.react.stores")


def store_identity(store: Any) -> Optional[str]:
    """The real path of ``store``'s file, or its object identity for a store without one; ``None`` for none."""
    if store is None:
        return None
    path = getattr(getattr(store, "db", None), "path", None) or getattr(store, "path", None)
    if isinstance(path, str) and path and path != ":memory:" and "\x00" not in path:
        return os.path.realpath(path)
    return f"object {id(store)}"


def claim_store(ctx: "RunContext[Any]", store: Any, owner: object, agent: Optional[str]) -> Callable[[], None]:
    """Hold ``store`` for ``owner`` (a loop) in run ``ctx``; the function returned lets go of it. ``ConfigError``
    when another loop of the run holds it."""
    key = store_identity(store)
    if key is None:
        return _nothing
    held = ctx.shared.get_or_create(STORES, dict)
    other = held.get(key)
    if other is not None and other[0] != id(owner):
        raise ConfigError(
            f"agent {agent!r} checkpoints into {key}, the checkpoint store agent {other[1]!r} of this run "
            f"({ctx.run_id}) keeps its steps in; both would save under the run's id and break its checkpoints (it "
            "would no longer resume). Give this agent a checkpoint store of its own (another file), or none")
    if other is not None:  # already its own (a resumed run on the same context)
        return _nothing
    held[key] = (id(owner), agent or "?")

    def release() -> None:
        if held.get(key, (None,))[0] == id(owner):
            del held[key]

    return release


def _nothing() -> None:
    pass
