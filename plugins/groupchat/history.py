"""``SharedHistory``: the one message history every speaker of a group chat reads and writes.

Append-only and safe under concurrent threads and tasks: each append takes the next sequence number (1, 2,
3 ...) under one lock, readers get immutable snapshots, and nothing awaits or does I/O under the lock
(docs/groupchat.md#shared-history).
"""

from __future__ import annotations

import threading
from typing import Any, Iterable, Optional

import msgspec

from zagent.agentkit.transcripts import turn_text
from zagent.types import Message


class ChatMessage(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """One message of a group chat, as recorded (frozen: a snapshot can never change).

    :ivar seq: position in the history, from 1, without gaps.
    :ivar speaker: who said it (an agent's name, or ``"user"`` for the task and interjections).
    :ivar content: the text everyone sees.
    :ivar round: the chat round that produced it (0 for the task and messages posted from outside).
    :ivar metadata: small, JSON-able details (usage, adapter, duration); never secrets.
    """

    seq: int
    speaker: str
    content: str
    round: int = 0
    metadata: dict[str, Any] = {}


class SharedHistory:
    """An append-only, ordered, thread-safe list of ``ChatMessage`` (see the module docstring)."""

    def __init__(self, messages: Iterable[ChatMessage] = ()):
        self._lock = threading.Lock()
        self._messages: list[ChatMessage] = []
        for m in messages:
            self._messages.append(msgspec.structs.replace(m, seq=len(self._messages) + 1))

    def append(self, speaker: str, content: str, *, round: int = 0,
               metadata: Optional[dict[str, Any]] = None) -> ChatMessage:
        """Record one message and return it with its sequence number; visible to all readers at once."""
        if not isinstance(speaker, str) or not speaker:
            raise ValueError("a chat message needs a speaker name")
        with self._lock:
            message = ChatMessage(seq=len(self._messages) + 1, speaker=speaker, content=str(content),
                                  round=round, metadata=dict(metadata or {}))
            self._messages.append(message)
        return message

    def snapshot(self) -> tuple[ChatMessage, ...]:
        """Every message so far, oldest first, as one consistent tuple."""
        with self._lock:
            return tuple(self._messages)

    def since(self, seq: int) -> tuple[ChatMessage, ...]:
        """Messages with a sequence number greater than ``seq``."""
        with self._lock:
            return tuple(self._messages[max(0, seq):])

    def last(self) -> Optional[ChatMessage]:
        with self._lock:
            return self._messages[-1] if self._messages else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._messages)

    def __repr__(self) -> str:
        return f"<SharedHistory messages={len(self)}>"


def render_transcript(messages: Iterable[ChatMessage], *, limit: Optional[int] = None) -> str:
    """The history as plain text, one ``Speaker: content`` block per message (last ``limit`` only). A message's
    later lines are indented, so a reply cannot start a line that reads as another speaker's turn."""
    items = list(messages)
    if limit is not None:
        items = items[-limit:]
    return "\n\n".join(turn_text(f"{m.speaker}: ", m.content) for m in items)


def as_chat_messages(messages: Iterable[ChatMessage], me: str) -> list[Message]:
    """The history from ``me``'s point of view: my turns as ``assistant``, everyone else's as named ``user``."""
    out: list[Message] = []
    for m in messages:
        if m.speaker == me:
            out.append(Message(role="assistant", content=m.content))
        else:
            out.append(Message(role="user", content=turn_text(f"{m.speaker}: ", m.content),
                               name=_safe_name(m.speaker)))  # indented: a line cannot fake another speaker
    return out


def _safe_name(name: str) -> str:
    """Providers accept ``[A-Za-z0-9_-]`` in a message's name."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
