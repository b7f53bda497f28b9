"""What plugins use of the run machinery: run ids, run tags, a run's share, the ``zagent`` logger, the
interrupt scope and zagent's background event loop."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Coroutine, TypeVar

from .._runs.context import ASKING, ASKING_KEY, RUN_TAGS, asking_scope, new_run_id
from .._runs.logs import log
from .._runs.stash import RunShare
from .._runs.sync import _background_loop

__all__ = ["ASKING", "ASKING_KEY", "RUN_TAGS", "RunShare", "asking_scope", "in_background", "log", "new_run_id"]
T = TypeVar("T")


def in_background(coro: Coroutine[Any, Any, T]) -> "Future[T]":
    """Start ``coro`` on zagent's background event loop (the one ``run_sync`` uses); its concurrent future."""
    import asyncio

    return asyncio.run_coroutine_threadsafe(coro, _background_loop())
