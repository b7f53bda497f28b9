"""The contracts of the things plugins register, as ``Protocol``s: what ``Kernel.parser``, ``tool_format``,
``embedder`` and ``executor`` return, what ``Kernel.memory`` builds, and what a registered entry must provide
(docs/hooks.md has each in full). They are structural: an implementation neither imports nor subclasses them."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Mapping, Optional, Protocol, Sequence, Union

if TYPE_CHECKING:  # pragma: no cover
    from ._runs.context import RunContext
    from .types import Message, ToolCall, ToolSpec

#: what a memory store's ``add`` takes: one message or several, each a ``Message`` or its dict
MessagesIn = Union["Message", Mapping[str, Any], Sequence[Union["Message", Mapping[str, Any]]]]

__all__ = ["Checkpoints", "Embedder", "Executor", "MemoryStore", "MessagesIn", "OutputParser", "TextToolFormat"]


class OutputParser(Protocol):
    """An output format (``zagent_register_parsers``): its prompt section, parsing, rendering and repair, all
    driven by the same fields (``Field``s, dicts or a compiled field spec)."""

    def instructions(self, fields: Any, **options: Any) -> str: ...

    def parse(self, text: str, fields: Any, **options: Any) -> dict[str, Any]: ...

    def parse_typed(self, text: str, fields: Any, **options: Any) -> Any: ...

    def render(self, values: Mapping[str, Any], fields: Any, **options: Any) -> str: ...

    def repair_prompt(self, raw: str, fields: Any, error: Any, **options: Any) -> str: ...

    async def aparse_with_repair(self, text: str, fields: Any, llm: Any, ctx: Optional[RunContext[Any]] = None,
                                 **options: Any) -> dict[str, Any]: ...  # llm: what has ``acomplete``


class TextToolFormat(Protocol):
    """A text tool-call format (``zagent_register_parsers``, for models without native tool calling): the tools'
    prompt section, calls written as the model should write them, the calls read from a reply (``extract``: with
    the problems found and the text left) and the feedback for those problems."""

    def render_tools(self, specs: Sequence[ToolSpec]) -> str: ...

    def render_calls(self, calls: Sequence[ToolCall]) -> str: ...

    def parse_tool_calls(self, text: str) -> list[ToolCall]: ...

    def extract(self, text: str) -> tuple[Sequence[ToolCall], Sequence[Any], str]: ...

    def feedback(self, errors: Sequence[Any]) -> str: ...


class MemoryStore(Protocol):
    """A memory backend (``zagent_register_memory``) of messages per namespace (``"agent"``, ``"agent/session"``)."""

    def add(self, namespace: str, messages: MessagesIn, *, at: Optional[float] = None) -> None: ...

    def last(self, namespace: str, n: int = 10) -> list[Message]: ...

    def search(self, namespace: Optional[str], text: str, limit: int = 10, **filters: Any) -> list[Message]: ...

    def clear(self, namespace: str) -> int: ...

    def namespaces(self) -> list[str]: ...

    def count(self, namespace: Optional[str] = None) -> int: ...

    def close(self) -> None: ...

    async def aadd(self, namespace: str, messages: MessagesIn, *, at: Optional[float] = None) -> None: ...

    async def alast(self, namespace: str, n: int = 10) -> list[Message]: ...

    async def asearch(self, namespace: Optional[str], text: str, limit: int = 10,
                      **filters: Any) -> list[Message]: ...

    async def aclear(self, namespace: str) -> int: ...

    async def anamespaces(self) -> list[str]: ...

    async def acount(self, namespace: Optional[str] = None) -> int: ...

    async def aclose(self) -> None: ...


class Checkpoints(Protocol):
    """A checkpoint store (``kernel.memory("checkpoints")``): each run's steps, as bytes; a state that is not
    bytes is saved as msgspec JSON. ``asave_patch`` and ``chain``/``achain`` are optional (patches, signatures)."""

    def save(self, run_id: str, step: int, state: Any, *, kind: str = "react",
             metadata: Optional[dict[str, Any]] = None) -> None: ...

    def latest(self, run_id: str) -> Optional[tuple[int, bytes]]: ...

    def load(self, run_id: str, step: int) -> Optional[bytes]: ...

    def steps(self, run_id: str) -> builtins.list[int]: ...

    def list(self, kind: Optional[str] = None) -> Sequence[Any]: ...  # one record per run, newest first

    def delete(self, run_id: str) -> int: ...

    def prune(self, keep_last: Optional[int] = None, older_than: Optional[float] = None,
              kind: Optional[str] = None) -> int: ...

    def close(self) -> None: ...

    async def asave(self, run_id: str, step: int, state: Any, *, kind: str = "react",
                    metadata: Optional[dict[str, Any]] = None) -> None: ...

    async def alatest(self, run_id: str) -> Optional[tuple[int, bytes]]: ...

    async def aload(self, run_id: str, step: int) -> Optional[bytes]: ...

    async def asteps(self, run_id: str) -> builtins.list[int]: ...

    async def alist(self, kind: Optional[str] = None) -> Sequence[Any]: ...

    async def adelete(self, run_id: str) -> int: ...

    async def aprune(self, keep_last: Optional[int] = None, older_than: Optional[float] = None,
                     kind: Optional[str] = None) -> int: ...

    async def aclose(self) -> None: ...


class Embedder(Protocol):
    """An embedder (``zagent_register_embedders``): one vector per text, in order."""

    async def aembed(self, texts: list[str]) -> list[list[float]]: ...


class Executor(Protocol):
    """Where units of work run (``zagent_register_executors``); the driver keeps all state, so a lost worker is
    a retried unit. ``in_process``: units share this process; ``concurrency``: its own bound, if any."""

    @property
    def name(self) -> str: ...

    @property
    def in_process(self) -> bool: ...

    @property
    def concurrency(self) -> Optional[int]: ...

    async def submit(self, unit: Any) -> Any: ...  # unit: a ``zagent.agentkit.units.Unit``

    async def aclose(self) -> None: ...
