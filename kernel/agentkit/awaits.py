"""``maybe_await``: the value of a callback a plugin's user gives (a selector, a condition, an approver),
awaited when the callback was a coroutine function, as is when it was a plain one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["maybe_await"]


async def maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable, else return it (hooks may return either)."""
    if hasattr(value, "__await__"):
        return await value
    return value
