"""``GroupChat``: a group chat's settings, building, control and entry points (docs/groupchat.md).

``arun``/``run`` take turns until a termination condition holds; ``pause()``, ``resume()`` and ``abort()`` are
safe from any thread (an abort raises ``RunAborted``). With ``checkpoints`` every turn is saved and
``arun(run_id=...)`` continues the chat; a failed checkpoint write raises ``CheckpointError``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Optional

import attrs
import msgspec

from zagent.agentkit.interrupts import as_data
from zagent.agentkit.lifecycle import NO_ANSWER, no_approvals
from zagent.agentkit.streaming import Streaming
from zagent.errors import ConfigError
from zagent import run_sync

from . import termination as term
from .drive import ChatDrive
from .history import ChatMessage, SharedHistory
from .selection import build_selector, check_names
from .state import ChatState, GroupChatResult, state_decoder

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel, RunContext

DEFAULT_MAX_ROUNDS = 20


@attrs.define(repr=False, eq=False, kw_only=True, slots=False)
class GroupChat(ChatDrive, Streaming):
    """A group chat (docs/groupchat.md).

    :ivar agents: spec dicts, agent instances or names (resolved through ``manager``).
    :ivar selection: a policy name, a ``{"policy": ..., **options}`` mapping or a selector object.
    :ivar termination: a mapping or a list of conditions; ``max_rounds`` (20) is added unless one is ``MaxRounds``.
    :ivar max_consecutive: turns one speaker may take in a row before selection is overruled (``None``: no limit).
    :ivar llm: model (or LLM) given to agents, the judge and the LLM selector built from dicts.
    :ivar on_turn: ``on_turn(message)`` (sync or async) after each recorded turn.
    :ivar output: the key of the outcome (last participant message) in ``result.to_dict()``.
    :ivar deps: typed dependencies the speakers' tools read as ``ctx.deps``; never checkpointed.
    """

    kernel: "Kernel"
    agents: Any = attrs.field(factory=list)
    selection: Any = "round_robin"
    termination: Any = None
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_consecutive: Optional[int] = 3
    name: str = "groupchat"
    description: str = ""
    manager: Any = None
    llm: Any = None
    checkpoints: Any = None
    on_turn: Optional[Callable[[ChatMessage], Any]] = None
    clock: Callable[[], float] = time.monotonic
    output: str = "content"
    deps: Any = None

    def __attrs_post_init__(self) -> None:
        if self.manager is None:
            from zagent.plugins.manager import AgentManager

            self.manager = AgentManager(kernel=self.kernel)
        self._speakers: dict[str, Any] = {}
        seen: dict[str, str] = {}
        for item in self.agents:
            agent = self._resolve_agent(item)
            name = self.manager.name_of(agent)
            if name in self._speakers:
                raise ConfigError(f"group chat {self.name!r}: two agents are named {name!r}")
            key = speaker_key(name)
            if len(name.splitlines()) > 1 or name != name.strip("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"):
                raise ConfigError(f"group chat {self.name!r}: agent {name[:60]!r} has a line break in its name, so "
                                  "its turns could start a transcript line read as another speaker's; give it a "
                                  "name on one line")
            if key == "user":
                raise ConfigError(f"group chat {self.name!r}: agent {name!r} is named like 'user', the speaker of "
                                  "the task and of posts from outside the chat, so its turns would read as the "
                                  "person's; rename the agent")
            if key in seen:
                raise ConfigError(f"group chat {self.name!r}: agents {seen[key]!r} and {name!r} have names that read "
                                  "alike (case, spaces or look-alike characters), so one could speak as the other; "
                                  "give them distinct names")
            seen[key] = name
            self._speakers[name] = agent
        if not self._speakers:
            raise ConfigError(f"group chat {self.name!r} needs at least one agent")
        self._selector = build_selector(self.kernel, self._selection_spec())
        check_names(self._selector, self.speakers)
        self._conditions = self._build_conditions()
        self._keep_public()
        self.history = SharedHistory()
        self.state = None
        self._init_driver()
        self._busy = False  # a run is under way (one at a time)
        self._outer = None  # the share of the run an aexecute call belongs to, taken by the run it starts
        self._store = self.kernel.memory("checkpoints", path=self.checkpoints) \
            if isinstance(self.checkpoints, str) else self.checkpoints

    @classmethod
    def from_dict(cls, data: dict[str, Any], kernel: "Kernel", **options: Any) -> "GroupChat":
        """Build from the declarative form (``spec.GroupChatSpec``); ``options``: manager, llm, checkpoints..."""
        from .spec import from_dict

        return from_dict(data, kernel, **options)

    @classmethod
    def load(cls, path: Any, kernel: "Kernel", **options: Any) -> "GroupChat":
        """Read a JSON or YAML group chat file."""
        from .spec import load

        return load(path, kernel, **options)

    # -- building -----------------------------------------------------------------

    def _resolve_agent(self, item: Any) -> Any:
        if isinstance(item, (str, dict)):
            return self.manager.add_agent(item, llm=self.llm if isinstance(item, dict) else None)
        return self.manager.add_agent(item)

    def _keep_public(self) -> None:
        """Keep the specs it was given (built into speakers, selector and conditions now) in their public form: an
        inline agent's ``api_key`` or secret header is not shown by ``chat.agents`` or ``attrs.asdict(chat)``."""
        from zagent.agentkit.secrets import public_data

        self.agents = [public_data(a) if isinstance(a, dict) else a for a in self.agents]
        for name in ("selection", "termination"):
            if isinstance(getattr(self, name), dict):
                setattr(self, name, public_data(getattr(self, name)))

    def _selection_spec(self) -> Any:
        spec = self.selection
        if isinstance(spec, str) and ":" not in spec:
            spec = {"policy": spec}
        if isinstance(spec, dict) and spec.get("policy") == "llm" and not spec.get("model") and not spec.get("llm"):
            spec = {**spec, "llm": self.llm}
        return spec

    def _build_conditions(self) -> list[Any]:
        if self.termination is None or isinstance(self.termination, dict):
            conditions = term.from_spec(self.termination, self._resolve_agent)
        else:
            conditions = list(self.termination)
        if not any(isinstance(c, term.MaxRounds) for c in conditions):
            conditions.append(term.MaxRounds(self.max_rounds))
        return conditions

    @property
    def speakers(self) -> list[str]:
        """Participants' names, in declaration order (round-robin order)."""
        return list(self._speakers)

    def agent(self, name: str) -> Any:
        return self._speakers[name]

    # -- control (any thread): ``pause``, ``abort`` and ``resume`` are the run driver's -----------

    def post(self, content: str, *, speaker: str = "user") -> ChatMessage:
        """Add a message from outside (a human interjecting); the next speakers see it. Thread-safe."""
        return self.history.append(speaker, content, round=0)

    # -- running ------------------------------------------------------------------------

    async def arun(self, task: Optional[str] = None, *, run_id: Optional[str] = None, deps: Any = None,
                   **inputs: Any) -> GroupChatResult:
        """Run a chat on ``task`` until a termination condition holds; or, with ``run_id`` of a
        checkpointed chat and no task, continue it from its last checkpoint. ``deps`` (else the chat's)
        reach the speakers' tools as ``ctx.deps``."""
        return await self._arun(task, run_id, inputs, NO_ANSWER, deps)

    async def _aresume_run(self, run_id: str, answer: Any, approve: list[str], deny: list[str], deps: Any,
                           options: dict[str, Any]) -> GroupChatResult:
        """Continue chat ``run_id`` from its last checkpoint; given the person's ``answer`` to the question a
        turn's ``zagent.interrupt`` paused it on, it is checkpointed, then that speaker takes the turn again and
        its interrupt returns the answer. A run not in the store, or not paused at an interrupt when an answer
        is given, is a ``ConfigError`` saying so."""
        no_approvals(f"group chat {self.name!r}", approve, deny)
        if options:
            raise ConfigError(f"group chat {self.name!r}: resume takes no {', '.join(map(repr, options))}")
        if self._store is None:
            raise ConfigError(f"group chat {self.name!r} has no checkpoints store, so run {run_id!r} cannot be "
                              "resumed; build it with checkpoints=... (the store the paused run was saved in)")
        given = as_data(answer) if answer is not NO_ANSWER else NO_ANSWER
        return await self._arun(None, run_id, {}, given, deps, resuming=True)

    async def _arun(self, task: Optional[str], run_id: Optional[str], inputs: dict[str, Any],
                    answer: Any, deps: Any = None, resuming: bool = False) -> GroupChatResult:
        control = self._control
        with control.lock:
            if self._busy:
                raise ConfigError(f"group chat {self.name!r} is already running; one run at a time per GroupChat")
            self._busy, control.abort_requested = True, False
        try:
            self._deps = deps if deps is not None else self.deps
            await self._prepare(task, run_id, inputs, answer, resuming)
            return await self._drive()
        finally:
            self._busy, self._outer = False, None
            self._stop_driver()

    def run(self, task: Optional[str] = None, **kwargs: Any) -> GroupChatResult:
        """Sync twin of ``arun``."""
        return run_sync(self.arun(task, **kwargs))

    async def acall(self, **inputs: Any) -> GroupChatResult:
        """Agent-style entry point: ``acall(task=..., **other_inputs)``."""
        return await self.arun(inputs.pop("task", None), **inputs)

    def __call__(self, **inputs: Any) -> GroupChatResult:
        return run_sync(self.acall(**inputs))

    async def aexecute(self, action_name: Optional[str] = None, *, inputs: Optional[dict[str, Any]] = None,
                       ctx: Optional["RunContext[Any]"] = None, msgs: Any = None) -> GroupChatResult:
        """Agent-style entry point (what a workflow node calls): the task is ``inputs["task"]``, else the inputs
        written as ``name: value`` lines. A chat is a run of its own whose tool budgets are ``ctx``'s run's."""
        inputs = dict(inputs or {})
        task = inputs.pop("task", None) or "\n".join(f"{k}: {v}" for k, v in inputs.items())
        self._outer = ctx.shared if ctx is not None else None  # taken by the run this starts
        deps = ctx.deps if ctx is not None and self.deps is None else None  # the caller's, unless the chat has its own
        return await self.arun(task, deps=deps, **inputs)

    def execute(self, action_name: Optional[str] = None, **kwargs: Any) -> GroupChatResult:
        """Sync twin of ``aexecute``."""
        return run_sync(self.aexecute(action_name, **kwargs))

    def snapshot(self) -> ChatState:
        """A copy of the chat's state with the history as it is now."""
        assert self.state is not None, "the chat has not started"
        state = msgspec.structs.replace(self.state, messages=list(self.history.snapshot()))
        return state_decoder.decode(msgspec.json.encode(state))

    def __repr__(self) -> str:
        return f"<GroupChat {self.name!r} speakers={self.speakers} status={self.status}>"


def speaker_key(name: str) -> str:
    """``name`` as a reader takes it: NFKC-normalised, case-folded, trimmed (two speakers may not share one)."""
    import unicodedata

    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
