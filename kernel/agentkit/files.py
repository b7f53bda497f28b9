"""``write_atomic``: replace a file so readers and crashes see the old or the new content, never half.

The data goes to a temporary file next to the target (same filesystem),
is flushed and fsynced, then renamed over the target with ``os.replace``.
The temporary name carries the process and thread ids, so two writers of
the same file never write into one temporary file.
"""

from __future__ import annotations

import os
import threading

__all__ = ["write_atomic"]
from typing import Union


def write_atomic(path: Union[str, "os.PathLike[str]"], data: Union[str, bytes]) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically."""
    target = os.fspath(path)
    tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
