"""``RunContext``: per-run state handed to tools, rails and events; the context variables new runs read."""

from __future__ import annotations

import contextvars
import itertools
import os
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Optional, TypeVar

import attrs

from ..errors import ConfigError
from .stash import RunShare, Stash, StashKey, share_of
from ..types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

#: a streamed run's sink (``agentkit.streaming``): new contexts of its task take it as ``on_delta``
STREAM_SINK: "contextvars.ContextVar[Optional[Callable[[Any], Any]]]" = contextvars.ContextVar(
    "zagent_stream_sink", default=None)
#: tags the runs started in this task carry as ``metadata`` (a batch's ``{"batch": id, "item": key}``)
RUN_TAGS: "contextvars.ContextVar[Optional[dict[str, Any]]]" = contextvars.ContextVar("zagent_run_tags", default=None)
#: the workflow node or group-chat turn ``interrupt`` asks through (``agentkit.interrupts.asking``)
ASKING: "contextvars.ContextVar[Optional[Any]]" = contextvars.ContextVar("zagent_asking", default=None)
ASKING_KEY: "StashKey[Any]" = StashKey("zagent.asking")
DepsT = TypeVar("DepsT")
_ids = itertools.count(1)
_prefix = f"{os.getpid():x}-{int(time.time() * 1000) & 0xFFFFFF:x}"


def interrupt(question: Any, *, ctx: "Optional[RunContext[Any]]" = None) -> Any:
    """Ask a person ``question`` from a workflow node or group-chat turn (a sync tool passes its ``ctx``): the
    answer once resumed with one (``resume(run_id, answer=...)``); until then ``Interrupted``, the run paused."""
    scope = asking_scope(ctx)
    if scope is None:
        raise ConfigError("zagent.interrupt() was called outside a workflow node or group-chat turn, so there is no "
                          "run to pause; call it from a node's agent or tool (a sync tool: declare a ctx parameter "
                          "and call interrupt(question, ctx=ctx))")
    return scope.ask(question)


def asking_scope(ctx: "Optional[RunContext[Any]]" = None) -> Any:
    """The interrupt scope of this task (a workflow node, a group-chat turn), else ``ctx``'s, else ``None``."""
    scope = ASKING.get()
    return ctx.stash.get(ASKING_KEY) if scope is None and ctx is not None else scope


def new_run_id() -> str:
    """A short id, unique within this process and unlikely to clash across processes."""
    return f"run-{_prefix}-{next(_ids)}"


@attrs.define(repr=False, eq=False)
class RunContext(Generic[DepsT]):
    """State of one run (``RunContext[Deps]`` types ``deps``): ``kernel``, ``run_id``, ``agent``,
    ``agent_config``, ``usage``, ``stash``, ``metadata`` (in ``run_start`` only), ``offered_tools`` (``None``:
    any), ``call_id`` (in a tool's), ``on_delta`` (a streamed run's chunks), ``shared``, ``frame`` and ``deps`` (the
    app's, never serialized). docs/architecture.md says more of each."""

    kernel: "Kernel"
    run_id: str = attrs.field(factory=new_run_id)
    agent: Optional[str] = None
    agent_config: dict[str, Any] = attrs.field(factory=dict)
    usage: Usage = attrs.field(factory=Usage)
    stash: Stash = attrs.field(factory=Stash)
    metadata: dict[str, Any] = attrs.field(factory=lambda: dict(RUN_TAGS.get() or ()))
    started: float = attrs.field(factory=time.monotonic)
    offered_tools: Optional[frozenset[str]] = None
    call_id: Optional[str] = None
    on_delta: Optional[Callable[[Any], Any]] = attrs.field(factory=STREAM_SINK.get)
    _share: Optional[RunShare] = attrs.field(default=None, alias="share")
    _frame: Optional[Stash] = attrs.field(default=None, alias="frame")
    deps: DepsT = attrs.field(default=None)  # None when the app gives none

    @property
    def shared(self) -> RunShare:
        """The ``RunShare`` of this run looked up on first use."""
        share = self._share
        if share is None:
            share = self._share = share_of(self.kernel, self.run_id)
        return share

    @property
    def frame(self) -> Stash:
        """This agent's own part of the run: where a loop keeps the ids it mints for its calls, the approvals it was
        given and the calls it holds for a person (``agentkit.runkeys``). ``for_agent`` gives a nested agent a new one
        (agents called as tools at once never share an approval); a top-level context's frame is its ``stash``."""
        return self._frame if self._frame is not None else self.stash

    @property
    def idempotency_key(self) -> Optional[str]:
        """``"<run id>:<call id>"`` in a tool's context (``None`` elsewhere), the same when a restored run calls
        it again."""
        return f"{self.run_id}:{self.call_id}" if self.call_id is not None else None

    def for_call(self, call_id: str) -> "RunContext[DepsT]":
        """This run as tool call ``call_id`` sees it, usage from zero (the runner adds it back)."""
        return attrs.evolve(self, call_id=call_id, usage=Usage())

    def add_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage

    def for_agent(self, agent: Optional[str], agent_config: dict[str, Any]) -> "RunContext[DepsT]":
        """This run as an agent called inside it sees it (a workflow node, a chat turn): its own name, config and
        ``frame``, usage from zero (added back with ``add_usage``), ``offered_tools`` unset; ``ConfigError`` as
        ``Kernel.context``'s."""
        self.kernel._check_settings(agent, agent_config)
        return attrs.evolve(self, agent=agent, agent_config=dict(agent_config), usage=Usage(), offered_tools=None,
                            frame=Stash())

    def aemit(self, type: str, **data: Any) -> Awaitable[None]:
        """Send a ``zagent_event`` tagged with this run's id and agent (await it)."""
        return self.kernel._aemit_data(type, self.run_id, self.agent, None, data)

    def emit(self, type: str, **data: Any) -> None:
        """Sync twin of ``aemit`` (``Kernel.emit``'s rules)."""
        self.kernel.emit(type, run_id=self.run_id, agent=self.agent, **data)

    def __repr__(self) -> str:
        return f"<RunContext {self.run_id} agent={self.agent!r} tokens={self.usage.total_tokens}>"
