"""The ``zagent`` logger, created on first use.

``logging`` (with ``traceback``, ``string`` and friends) costs about 2 ms to
import, a noticeable share of ``import zagent``'s budget, and most processes
never log anything from the kernel. ``log`` forwards every attribute to
``logging.getLogger("zagent")``, importing logging the first time it is used.
Configure it as any logger: ``logging.getLogger("zagent")``.
"""

from __future__ import annotations

from typing import Any


class _LazyLogger:
    """Stands in for ``logging.getLogger("zagent")`` until something is logged."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        import logging

        return getattr(logging.getLogger("zagent"), name)

    def __repr__(self) -> str:
        return "<lazy logger 'zagent'>"


log = _LazyLogger()
