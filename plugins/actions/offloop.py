"""Parsing a long reply off the event loop: past ``OFF_LOOP_CHARS`` the parse runs in a worker thread.

``parse(fn, text)`` never blocks the loop on a long reply; short ones parse inline (docs/http.md).
"""

from __future__ import annotations

from typing import Any, Callable

#: replies longer than this (characters) are parsed in a worker thread
OFF_LOOP_CHARS = 64 * 1024


async def parse(fn: Callable[[str], Any], text: str) -> Any:
    """``fn(text)``, in a worker thread when ``text`` is long."""
    if len(text) <= OFF_LOOP_CHARS:
        return fn(text)
    import asyncio

    return await asyncio.to_thread(fn, text)
