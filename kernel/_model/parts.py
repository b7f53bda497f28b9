"""``check_media``: the check that a model takes the parts of a request's messages (the part builders are in
``zagent.types``, ``read_part`` in ``zagent.agentkit.media``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ProviderConfigError
from ..types import Message

__all__ = ["check_media"]


def check_media(llm: Any, messages: Iterable[Message]) -> None:
    """Raise ``ProviderConfigError`` before any request when a part's kind is one the model does not take."""
    accepted = None
    for m in messages:
        if not m.parts:
            continue
        if accepted is None:
            accepted = llm.profile.input_media
            if accepted is None:
                accepted = type(llm).input_media
        for part in m.parts:
            kind = part.type
            if kind == "text" or kind in accepted or (kind == "file" and part.media_type in accepted):
                continue
            takes = ", ".join(accepted) or "text only"
            raise ProviderConfigError(
                f"{llm.name} cannot take {kind} parts ({part.media_type or part.url or kind}); it takes: {takes}. "
                f"Use a model that accepts {kind}s, drop the part, or, if the model does accept it, "
                f"set profile={{'input_media': ['{kind}', ...]}}", provider=llm.provider)
