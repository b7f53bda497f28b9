"""A tool batch's calls end with it: one that raises cancels the others, and a call whose task was cancelled before
it started is closed unrun (no "coroutine was never awaited" warning)."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from zagent.plugins.react.batch import _all_or_none


def test_calls_cancelled_before_they_started_are_closed_without_a_warning():
    """The first call raises before the others get to start: the error comes out, the others never ran, and no
    ``RuntimeWarning`` about a coroutine never awaited is left for the garbage collector."""
    ran = []

    async def fails():
        raise OSError("checkpoint failed")

    async def other(n):
        ran.append(n)

    async def main():
        await _all_or_none([fails(), other(1), other(2)])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(OSError, match="checkpoint failed"):
            asyncio.run(main())
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
    assert ran == []  # the tasks run in order: the first failed before the others started
