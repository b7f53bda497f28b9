"""``RunContext``: per-run state handed to tools, rails and events. It grows by fields with defaults,
never by new hook parameters.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Optional, TypeVar

import attrs

from ..errors import ConfigError
from .stash import Stash, StashKey
from ..types import Usage

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel
    from .share import RunShare

#: set by ``zagent.agentkit.streaming.astream_run`` in the task of a streamed run: the new contexts of that
#: task and its child tasks get it as ``on_delta``, so nested runs (workflow nodes, chat turns) stream too
STREAM_SINK: "contextvars.ContextVar[Optional[Callable[[Any], Any]]]" = contextvars.ContextVar(
    "zagent_stream_sink", default=None)
#: tags (a dict) the runs started in this task and its child tasks carry as ``metadata`` (a batch sets
#: ``{"batch": id, "item": key}`` around each item, so the run log can group a batch's runs)
RUN_TAGS: "contextvars.ContextVar[Optional[dict[str, Any]]]" = contextvars.ContextVar("zagent_run_tags", default=None)
#: the workflow node or group-chat turn running in this task and its child tasks, which ``interrupt`` asks
#: through (``zagent.agentkit.interrupts.asking`` sets it, and ``ASKING_KEY`` in the run's stash for tools)
ASKING: "contextvars.ContextVar[Optional[Any]]" = contextvars.ContextVar("zagent_asking", default=None)
ASKING_KEY: "StashKey[Any]" = StashKey("zagent.asking")
#: the type of ``RunContext.deps`` (``RunContext[MyDeps]`` in a tool's signature)
DepsT = TypeVar("DepsT")
_ids = itertools.count(1)
_prefix = f"{os.getpid():x}-{int(time.time() * 1000) & 0xFFFFFF:x}"


def interrupt(question: Any, *, ctx: "Optional[RunContext[Any]]" = None) -> Any:
    """Ask a person ``question`` from inside a workflow node or a group-chat turn: the answer, once the run was
    resumed with one (``resume(run_id, answer=...)``); until then it raises ``Interrupted`` and the run ends
    ``paused``. A sync tool running in the kernel's tool threads passes its ``ctx``. The answers are matched
    to a node's calls in order (``zagent.agentkit.interrupts``)."""
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
    """State of one run; ``RunContext[Deps]`` types ``deps``.

    :ivar kernel: the kernel the run belongs to.
    :ivar run_id: unique id of the run.
    :ivar agent: name of the agent running, if any.
    :ivar agent_config: the agent's settings rails may read (allow-lists...).
    :ivar usage: tokens spent so far (updated after each LLM call).
    :ivar stash: per-run scratch space for plugins: a ``zagent._runs.stash.Stash`` (typed ``StashKey`` keys, or
        strings named after the plugin).
    :ivar metadata: free-form user data carried along: shared by the run's derived contexts (``for_call``,
        ``for_agent``) and copied into the run's ``run_start`` event only (``zagent logs`` groups a batch's runs
        by it), not into every event: a plugin needing it on later events keeps it by ``run_id``.
    :ivar offered_tools: names of the tools offered to the agent for the current turn; ``Kernel.arun_tool``
        blocks any other name ("tool X was not offered to this agent"). Every agent loop sets it before
        running tools; ``None`` (the default) means unscoped: the embedding app running a tool directly.
    :ivar call_id: in the context a tool receives: the id of the tool call being run (else ``None``).
    :ivar on_delta: set by an agent's ``astream()`` (from ``STREAM_SINK``): every model call of the run streams,
        each text or reasoning ``Chunk`` handed to it (sync or async) as it arrives (``zagent._model.run``).
    :ivar shared: per-run state every context of this run id shares (``RunShare``): what counts across
        a group chat's turns or a workflow's nodes, such as tool budgets. ``share=`` joins another run's.
    :ivar deps: the app's typed dependencies (a database handle, an HTTP client), given with
        ``Kernel.context(deps=...)``, ``Kernel.agent(..., deps=...)`` or an agent's ``deps``; a tool reads them
        as ``ctx.deps`` with ``ctx: RunContext[MyDeps]``. Carried into nested runs (``for_agent``,
        ``for_call``); never serialized (not in checkpoints, events, logs or the repr).
    """

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
    _share: Optional["RunShare"] = attrs.field(default=None, alias="share")
    deps: DepsT = attrs.field(default=None)  # None when the app gives none

    @property
    def shared(self) -> "RunShare":
        """The ``RunShare`` of this run looked up on first use."""
        share = self._share
        if share is None:
            from .share import share_of

            share = self._share = share_of(self.kernel, self.run_id)
        return share

    @property
    def idempotency_key(self) -> Optional[str]:
        """``"<run id>:<call id>"`` in a tool's context (``None`` elsewhere): the same for a call run
        again after a restore, so a side-effecting tool can record it and skip a repeat
        (see "Restoring a run: at-least-once tool calls" in the README)."""
        return f"{self.run_id}:{self.call_id}" if self.call_id is not None else None

    def for_call(self, call_id: str) -> "RunContext[DepsT]":
        """This run as one tool call sees it: same run id, agent, stash and metadata, plus ``call_id``.
        Usage starts at zero: the tool runner adds what the tool spent back to this context."""
        return attrs.evolve(self, call_id=call_id, usage=Usage())

    def add_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage

    def for_agent(self, agent: Optional[str], agent_config: dict[str, Any]) -> "RunContext[DepsT]":
        """This run as seen by an agent called inside it (a workflow node, a group chat turn).

        Same run id, stash, metadata and start time; the agent's own name and
        ``agent_config``, so its rails and plugin settings apply and not the caller's.
        Usage starts at zero: the agent adds it back with ``add_usage`` when done. ``offered_tools`` starts
        unset: the agent's own loop offers its own tools (the caller's set neither widens nor narrows it).
        """
        return attrs.evolve(self, agent=agent, agent_config=dict(agent_config), usage=Usage(), offered_tools=None)

    def aemit(self, type: str, **data: Any) -> Awaitable[None]:
        """Send a ``zagent_event`` tagged with this run's id and agent (await it).

        A plain function returning one coroutine (``zagent._runs.emitting.emit``'s), ``data`` passed on as is."""
        return self.kernel._aemit_data(type, self.run_id, self.agent, None, data)

    def emit(self, type: str, **data: Any) -> None:
        """Sync twin of ``aemit``, as ``Kernel.emit`` is of ``Kernel.aemit`` (and with its rules): sends the
        event, tagged with this run's id and agent, before it returns."""
        self.kernel.emit(type, run_id=self.run_id, agent=self.agent, **data)

    def __repr__(self) -> str:
        return f"<RunContext {self.run_id} agent={self.agent!r} tokens={self.usage.total_tokens}>"
