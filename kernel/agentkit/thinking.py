"""A reply's text as parsers and tool-call readers read it: without its ``<think>`` spans (``strip_think``; the
spans are found by ``zagent.providerkit.think.split_think``, the kit providers' own reading of them).
"""

from __future__ import annotations

from ..providerkit.think import split_think

__all__ = ["strip_think"]


def strip_think(text: str) -> str:
    """``text`` without its think spans (what parsers and tool-call readers read)."""
    if "<think" not in text and "</think" not in text:
        return text
    return split_think(text)[0]
