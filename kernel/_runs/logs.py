"""The ``zagent`` logger (``log``), importing ``logging`` on first use."""

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
