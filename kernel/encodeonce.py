"""Old import path of ``encoded_once``: it moved to ``zagent.providerkit.encodeonce`` (one release)."""

from __future__ import annotations

from .providerkit.encodeonce import encoded_once

__all__ = ["encoded_once"]
