"""What a rail may answer besides ``None`` (no objection): ``Deny(reason)`` or ``Rewrite(arguments)``."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Deny:
    """Block the call; ``reason`` is told to the model and recorded."""

    reason: str


@attrs.frozen
class Rewrite:
    """Replace a tool call's arguments (they are validated again)."""

    arguments: dict[str, Any]
