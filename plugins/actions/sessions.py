"""What ``chat(..., session=...)`` reads from a persistent session (docs/sessions.md).

A session is any object with ``async aget_items()`` and ``async aadd_items(messages)``; only its ``user`` and
``assistant`` text becomes the history, each item checked like a ``history=`` message. Items without ``JUDGED``
are judged again.
"""

from __future__ import annotations

from typing import Any, Optional

from zagent.errors import ConfigError
from zagent.agentkit.inputs import check_text
from zagent.agentkit.inputs import to_messages
from zagent.types import Message

#: in ``Message.metadata`` of the items a chat appends to a session: judged when each was the new turn (a
#: ``SQLiteSession`` keeps it only from ``append_judged``; its public ``add_items`` drops it)
JUDGED = "zagent.judged"


async def session_history(session: Any, limit: Optional[int] = None) -> list[Message]:
    """The conversation so far in ``session``, as chat history (user and assistant text, oldest first):
    its newest ``limit`` items (the agent's ``memory_size``, as for short-term memory), all with ``None``."""
    if not callable(getattr(session, "aget_items", None)) or not callable(getattr(session, "aadd_items", None)):
        raise ConfigError(f"session {session!r} has no aget_items/aadd_items; pass a "
                          "zagent.plugins.memory.SQLiteSession(session_id, path) or an object with both")
    history = []
    for i, message in enumerate(to_messages(list(await session.aget_items(limit)))):
        if message.role not in ("user", "assistant") or not message.content:
            continue
        check_text(message.content, f"item #{i} of session {getattr(session, 'session_id', session)!r}")
        judged = {JUDGED: True} if message.metadata.get(JUDGED) is True else {}
        history.append(Message(role=message.role, content=message.content, metadata=judged))
    return history


async def append_judged(session: Any, messages: list[Message]) -> None:
    """Append a chat's turn, judged, to ``session`` with the ``JUDGED`` mark: through a ``SQLiteSession``'s own
    ``_aadd_judged`` (its public ``add_items`` drops the mark), else ``aadd_items`` with the mark in metadata."""
    import msgspec

    marked = [msgspec.structs.replace(m, metadata={**m.metadata, JUDGED: True}) for m in messages]
    own = getattr(session, "_aadd_judged", None)
    await (own(marked) if callable(own) else session.aadd_items(marked))
