"""When a memory file can only be read (an immutable file, a read-only file system, an unwritable ``-shm``):
``read_only_reason`` says why before SQLite touches the file, and ``Database`` opens it ``immutable=1``
(``read_only_uri``): reads work, writes raise ``StoreError``. A ``-wal`` holding unmerged changes raises ``StoreError``
saying how to recover it.
"""

from __future__ import annotations

import os
from typing import Optional
from urllib.parse import quote

from .errors import StoreError


def read_only_reason(path: str) -> Optional[str]:
    """Why ``path`` (an existing SQLite file) must be opened read-only, or ``None`` when it can be written."""
    if not os.path.exists(path):
        return None
    shm = path + "-shm"
    if not os.access(path, os.W_OK):
        return "the file cannot be written (read-only file system, immutable file or permissions)"
    for _ in range(3):  # another process's last connection may delete the -shm between two checks
        if not os.path.exists(shm):
            break
        if os.access(shm, os.W_OK):
            return None
        if os.path.exists(shm):  # still there, and not writable (not merely gone in between)
            return f"its shared-memory file {shm} cannot be written"
    directory = os.path.dirname(os.path.realpath(path))  # no lexical '..' after a symlinked folder
    return None if os.access(directory, os.W_OK) else f"its directory {directory} cannot be written"


def read_only_uri(path: str, reason: str) -> str:
    """The ``file:`` URI opening ``path`` immutable; ``StoreError`` when its ``-wal`` holds unmerged changes."""
    wal = path + "-wal"
    try:
        pending = os.path.getsize(wal)
    except OSError:
        pending = 0
    if pending:
        raise StoreError(
            f"cannot open memory file {path} read-only: {reason}, and its write-ahead log {wal} holds "
            f"{pending} bytes of changes not yet merged into it (a store on it was not closed). Make the "
            "file, its -wal and -shm writable again, or close the store that still has it open, then retry",
            path=path)
    return "file:" + quote(os.path.realpath(path)) + "?immutable=1"
