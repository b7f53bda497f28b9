"""Sealed counts (docs/security.md, 11): a run's counts kept with each checkpoint under a MAC by ``signing.seal``
(the checkpoint key, else the user's own key), so whoever edits an unsigned store cannot lower them below a point
the run reached. ``seal_counts`` makes the record; ``sealed_counts`` checks one on restore: a run read from an
unsigned store without a valid one is refused, unless ``config["accept_unsealed_counts"]``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import msgspec

from ..errors import CheckpointError
from .signing import canonical, seal, sealed

__all__ = ["ACCEPT", "akept_seals", "seal_counts", "sealed_counts"]

ACCEPT = "accept_unsealed_counts"


def seal_counts(kernel: Any, run_id: str, kind: str, counts: Mapping[str, Any], *, store: Any) -> dict[str, Any]:
    """``counts`` (plain JSON data) with the MAC binding them to run ``run_id`` of checkpoint store ``store``
    (``signing.seal``; key ``"mac"``)."""
    return {**counts, "mac": seal(kernel, run_id, f"counts:{kind}", canonical(dict(counts)), store=store)}


def sealed_counts(kernel: Any, run_id: str, kind: str, record: Any, step: int, *, required: bool, store: Any,
                  trusted: str = "") -> Optional[dict[str, Any]]:
    """The counts ``record`` (a ``seal_counts`` result) holds if its MAC is this user's for run ``run_id`` of
    ``store``, else ``None``; when ``required`` (a run read from an unsigned store), a ``CheckpointError`` naming
    checkpoint ``step`` instead, unless the kernel's ``accept_unsealed_counts`` is set (``trusted``: another way
    to resume)."""
    saved = dict(record) if isinstance(record, Mapping) else {}
    mac = saved.pop("mac", None)
    if saved and sealed(kernel, run_id, f"counts:{kind}", canonical(saved), mac, store=store):
        return saved
    if required and not kernel.config.get(ACCEPT):
        raise CheckpointError(
            f"checkpoint {step} of run {run_id!r} does not carry its counts (steps, rounds, usage, tool budgets, "
            "loops) as this user sealed them for this store: the unsigned store was edited, the state was copied "
            "from another store (a run of the same id there), or the run was saved by another user, another "
            "machine or an older zagent. It is not resumed, so that its limits are not reset. Sign "
            "checkpoints (Kernel(config={'checkpoint_key': ...}) on every process that saves or resumes runs); "
            f"to resume runs of a store you trust anyway, set Kernel(config={{'{ACCEPT}': True}}){trusted}",
            run_id=run_id, step=step)
    return None


class _CountedOnly(msgspec.Struct):
    """The part of a saved state ``akept_seals`` reads from a run's other steps."""

    counted: Any = None


async def akept_seals(kernel: Any, store: Any, run_id: str, kind: str, step: int) -> list[dict[str, Any]]:
    """The counts this user sealed in the steps of ``run_id`` that ``store`` keeps besides ``step`` (the one
    restored): a restore from an unsigned store raises its counts to each, so an earlier step's state written over
    the latest one (its seal valid) resets no budget. Damaged steps set no floor; a store without
    ``asteps``/``aload`` gives none."""
    found: list[dict[str, Any]] = []
    steps, load = getattr(store, "asteps", None), getattr(store, "aload", None)
    if steps is None or load is None:  # a store that gives only its latest step: nothing more to read
        return found
    for other in await steps(run_id):
        raw = await load(run_id, other) if other != step else None
        try:
            counted = msgspec.json.decode(raw, type=_CountedOnly).counted if raw else None
        except (msgspec.DecodeError, RecursionError):
            continue
        saved = sealed_counts(kernel, run_id, kind, counted, other, required=False, store=store)
        if saved is not None:
            found.append(saved)
    return found
