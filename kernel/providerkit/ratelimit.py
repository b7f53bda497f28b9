"""``RateLimiter``: ``rpm`` requests per minute, shared by every LLM of a kernel for one provider and URL."""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Optional

from ..errors import (
    ConfigError,
)
from .._runs.stash import Stash, StashKey


class RateLimiter:
    """At most ``rpm`` requests start in any 60-second window (a sliding log of reserved start times).

    Safe across event loops and tasks: a slot is reserved synchronously, then
    the caller sleeps until it comes.
    """

    def __init__(self, rpm: float):
        if rpm <= 0:
            raise ConfigError(f"rpm must be a positive number of requests per minute, got {rpm!r}")
        self.rpm = rpm
        self.window = 60.0
        self._size = max(1, int(rpm))
        self._starts: deque[float] = deque()

    def reserve(self) -> float:
        """Reserve the next start time; return seconds to wait for it."""
        now = time.monotonic()
        starts = self._starts
        slot = now if len(starts) < self._size else max(now, starts[0] + self.window * self._size / self.rpm)
        starts.append(slot)
        if len(starts) > self._size:
            starts.popleft()
        return slot - now

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            import asyncio

            await asyncio.sleep(wait)

    def __repr__(self) -> str:
        return f"<RateLimiter {self.rpm:g}/min>"


#: a kernel's limiters by provider and URL, in ``kernel.stash`` (per kernel, gone with it)
LIMITERS: "StashKey[dict[str, RateLimiter]]" = StashKey("zagent.providerkit.rpm")


def shared_limiter(kernel: Any, key: str, rpm: float) -> RateLimiter:
    """The limiter of ``key`` in ``kernel`` (all agents of a kernel share it); a private one without a kernel."""
    if kernel is None:
        return RateLimiter(rpm)
    stash: Optional[Stash] = getattr(kernel, "stash", None)
    if stash is None:  # not a zagent Kernel: no sharing
        return RateLimiter(rpm)
    per_kernel = stash.get_or_create(LIMITERS, dict)
    limiter = per_kernel.get(key)
    if limiter is None or limiter.rpm != rpm:
        limiter = per_kernel[key] = RateLimiter(rpm)
    return limiter


# -- helpers ------------------------------------------------------------------------
