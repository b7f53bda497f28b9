"""Parsing a long reply off the event loop: past ``OFF_LOOP_CHARS`` the parse runs in a worker thread.

Reading a reply (strict JSON, then the lenient search of ``zagent.plugins.parsers.jsontext``, bounded by
its repair size and search budget) is CPU work: a 10 MB reply can take a second or more. On the loop that
second freezes every other task and the caller's own deadline; in a thread the loop goes on and a
cancelled caller returns at once. Short replies (nearly all) parse inline: a thread hop costs more.
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
