"""Approvals that ran (docs/security.md, 11): a person's yes to a call held in a workflow node or chat turn runs that
call once. ``mark_ran`` records, outside the run's checkpoint store (``$XDG_DATA_HOME/zagent/approvals-ran/``, one
empty 0600 file per approval, named by a digest of its binding), that the yes ran its call; ``ran_before`` says so
later, also after the store was rolled back to the step holding the yes.
"""

from __future__ import annotations

import hashlib
import os
import threading

__all__ = ["mark_ran", "ran_before"]

_HERE: set[str] = set()  # this process's records, also when the data folder cannot be written
_LOCK = threading.Lock()


def _path(tag: str) -> str:
    from .privatefiles import data_folder

    return data_folder("approvals-ran", hashlib.sha256(tag.encode()).hexdigest())


def ran_before(tag: str) -> bool:
    """Whether the approval bound as ``tag`` already ran its call (in this process or, recorded, another one)."""
    with _LOCK:
        if tag in _HERE:
            return True
    return os.path.lexists(_path(tag))


def mark_ran(tag: str) -> None:
    """Record that the approval bound as ``tag`` runs its call now."""
    from .privatefiles import open_private

    with _LOCK:
        _HERE.add(tag)
    try:
        os.close(open_private(_path(tag), os.O_WRONLY | os.O_CREAT))
    except (OSError, ValueError) as exc:  # a read-only home: kept for this process only, said once per approval
        from .._runs.logs import log

        log.warning("cannot record in %s that an approval ran its call (%s): a run restored from an earlier "
                    "checkpoint in another process could run it again; make the folder writable",
                    os.path.dirname(_path(tag)), exc)
