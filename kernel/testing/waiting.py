"""``wait_until``: block a test thread until a condition holds, polling every millisecond; only after a generous
bound does it raise ``AssertionError`` naming what was awaited. For tests that pause, resume or abort runs from
another thread.
"""

from __future__ import annotations

import threading
from typing import Callable


def wait_until(predicate: Callable[[], object], what: str, *, polls: int = 20000) -> None:
    """Return once ``predicate()`` is true; raise ``AssertionError`` after ``polls`` ms-long polls."""
    tick = threading.Event()
    for _ in range(polls):
        if predicate():
            return
        tick.wait(0.001)
    raise AssertionError(f"gave up waiting for {what}")
