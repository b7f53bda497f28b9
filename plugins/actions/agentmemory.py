"""``AgentMemory``: an ``Agent``'s short-term memory (the last messages, each maybe cut) and its optional
long-term memory (every message whole, in ``kernel.memory(...)``, searched by ``recall``).

``cut_message`` is the short-term cut (crewai's history cut: the last three characters "...").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec

from zagent import ConfigError, run_sync
from zagent.types import Message

#: what long-term memory calls on its store (``zagent.contracts.MemoryStore``)
MESSAGE_STORE_METHODS = ("aadd", "alast", "asearch", "aclear", "clear")

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


class AgentMemory:
    """The memory of an ``Agent`` (a base of it; its fields are declared on ``Agent``)."""

    kernel: "Kernel"
    name: str
    memory_size: Optional[int]
    memory_chars: Optional[int]
    use_long_term_memory: bool
    long_term_memory: Optional[dict[str, Any]]
    memory_key: Optional[str]
    _memory: list[Message]
    _ltm: Any

    @property
    def messages(self) -> list[Message]:
        """Short-term memory, oldest first (a copy)."""
        return list(self._memory)

    async def _remember(self, messages: list[Message]) -> None:
        self._keep(messages)
        if self.use_long_term_memory:
            await self._long_term().aadd(self.namespace, messages)

    def _keep(self, messages: list[Message]) -> None:
        """``_remember`` in short-term memory only (without long-term memory there is nothing to await)."""
        memory = self._memory
        if self.memory_chars is not None:
            messages = [cut_message(m, self.memory_chars) for m in messages]
        memory.extend(messages)
        if self.memory_size is not None and len(memory) > self.memory_size:
            del memory[: len(memory) - self.memory_size]

    @property
    def namespace(self) -> str:
        """Where long-term memory keeps this agent's messages: its name, or ``name/session`` when
        ``long_term_memory={"session": ...}`` is set."""
        session = (self.long_term_memory or {}).get("session")
        root = self.memory_key or self.name
        return f"{root}/{session}" if session else root

    async def arecall(self, text: str, limit: int = 10) -> list[Message]:
        """Messages from this agent's long-term memory matching ``text``, best first (full-text search;
        empty ``text``: the newest). Empty without long-term memory."""
        if not self.use_long_term_memory:
            return []
        return list(await self._long_term().asearch(self.namespace, text, limit))

    def recall(self, text: str, limit: int = 10) -> list[Message]:
        """Sync twin of ``arecall``."""
        return run_sync(self.arecall(text, limit))

    def _long_term(self) -> Any:
        if self._ltm is None:
            opts = dict(self.long_term_memory or {})
            opts.pop("session", None)
            name = opts.pop("name", "sqlite")
            check_message_store(self.kernel, name, f"agent {self.name!r}")  # before a file of it is made
            store = self.kernel.memory(name, **opts)
            missing = [m for m in MESSAGE_STORE_METHODS if not callable(getattr(store, m, None))]
            if missing:  # e.g. the run log, or a checkpoint store: never written to as messages
                close = getattr(store, "close", None)
                if callable(close):
                    close()
                raise ConfigError(f"agent {self.name!r}: long_term_memory {name!r} is not a message store (it has "
                                  f"no {', '.join(missing)}); name one that keeps messages, such as 'sqlite' or "
                                  "'inprocess'")
            self._ltm = store
        return self._ltm

    def clear_memory(self, *, long_term: bool = False) -> None:
        """Forget the short-term memory (and the long-term namespace of this agent if asked)."""
        self._memory.clear()
        if long_term and self.use_long_term_memory:
            self._long_term().clear(self.namespace)


def check_message_store(kernel: "Kernel", name: Any, who: str) -> None:
    """``ConfigError`` when memory backend ``name`` declares it keeps no messages (its factory's
    ``zagent_message_store = False``: the run log, a checkpoint store), before it opens or creates its file."""
    factory = kernel.find("memory", name) if isinstance(name, str) else None
    if getattr(factory, "zagent_message_store", True) is False:
        raise ConfigError(f"{who}: long_term_memory {name!r} is not a message store (it keeps no messages; its file "
                          "was not opened); name one that keeps messages, such as 'sqlite' or 'inprocess'")


def cut_message(message: Message, limit: int) -> Message:
    """``message`` with its text cut to ``limit`` characters, the last three "..." (crewai's history cut)."""
    text = message.content
    if text is None or len(text) <= limit:
        return message
    return msgspec.structs.replace(message, content=text[:max(limit - 3, 0)] + "..." if limit > 3 else text[:limit])
