"""``AgentManager``: agents registered and reused by name, each AVAILABLE or RUNNING. ``add_agent`` takes a name,
a spec or an instance; ``acquire``/``using`` wait for a busy agent; ``save_all``/``load_all`` (docs/workflows.md)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import threading
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Optional, Union

import attrs
from zagent.errors import ConfigError, ZagentError
from zagent.agentkit.toolrefs import check_lent_agent
from zagent.speckit import Trust, current_trust, trusting
from zagent.speckit.paths import reserving
from zagent.speckit.trust import for_named_file  # a stored agent others can write gets no trust

from .inline import check_inline, check_room
from .stored import check_file_names, decode_record, file_name, is_db, load_file, save_file, spec_of

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

SPEC_KIND = "agent_spec"


class AgentState(str, enum.Enum):
    AVAILABLE = "available"
    RUNNING = "running"


class AgentTimeout(ZagentError, TimeoutError):
    """An agent stayed RUNNING longer than the caller was willing to wait."""


@attrs.define(repr=False, eq=False)
class AgentManager:
    """Agents by name with states (see the module docstring).

    :param kernel: builds agents from dicts and opens stores.
    :param storage: where ``add_agent("Name")`` finds agents it does not know yet:
        a directory of ``<name>.json`` files or an SQLite file (``.db``).
    :param storage_trust: the import trust of the agents loaded from ``storage`` (``None``: the trust in force
        where one is loaded); such an agent is lent to any spec naming it (the CLI's ``--agents``: ``stored``).
    """

    checks_inline = True  # add_agent(dict) runs inline.check_inline: callers need not
    kernel: "Kernel"
    storage: Optional[Union[str, os.PathLike[str]]] = None
    storage_trust: Optional[Trust] = None
    _homes: dict[str, Trust] = attrs.field(factory=dict, init=False)  # stored agents: the trust they were loaded with
    _origins: dict[str, tuple[Trust, Optional[str]]] = attrs.field(factory=dict, init=False)  # ... and their file
    _agents: dict[str, Any] = attrs.field(factory=dict, init=False)
    _states: dict[str, AgentState] = attrs.field(factory=dict, init=False)
    _cond: threading.Condition = attrs.field(factory=threading.Condition, init=False)
    _waiters: dict[str, list[tuple[Any, Any]]] = attrs.field(factory=dict, init=False)

    # -- registering ------------------------------------------------------------

    def add_agent(self, agent: Any, *, llm: Any = None) -> Any:
        """Register ``agent`` (a name, a spec dict or an instance) and return the agent kept under its name.

        ``llm`` (an LLM or ``"provider:model"``) is given to agents built here from a dict or file.
        """
        if isinstance(agent, str):  # a pooled agent whose tools run code a spec imported: only if trusted for it
            found = self._agents.get(agent)
            return self._lend(agent, found) if found is not None else self._insert(agent, *self._load_named(agent, llm))
        if isinstance(agent, dict):  # data: named like a held or stored agent, it is that agent (gaining no tools)
            name = check_inline(self, agent, llm)
            found = self._agents.get(name)
            return self._lend(name, found) if found is not None else self._insert(name, self._build(agent, llm))
        return self._insert(self.name_of(agent), agent)

    def add_agents(self, agents: Any, *, llm: Any = None) -> list[Any]:
        return [self.add_agent(a, llm=llm) for a in agents]

    def _insert(self, name: str, agent: Any, home: Optional[Trust] = None) -> Any:
        with self._cond:
            found = self._agents.get(name)
            if found is not None:
                return found
            check_room(len(self._agents), name)  # a long-lived executor adds each run's inline agents
            self._agents[name] = agent
            self._states[name] = AgentState.AVAILABLE
            if home is not None:
                self._homes[name] = home
            return agent

    def origin_of(self, name: str) -> Optional[tuple[Trust, Optional[str]]]:
        """``(trust, file)`` the stored agent ``name`` was built with (its store's trust; its file, ``None`` for a
        ``.db`` record), else ``None``: a remote worker rebuilds it so, never as the spec naming it."""
        return self._origins.get(name) if name in self._homes else None

    def _lend(self, name: str, found: Any) -> Any:
        """The held ``found`` for a spec naming it, unless its tools run code a spec imported that the trust in force
        may not name; a stored agent's are checked under the trust it was loaded with (``storage_trust``)."""
        with trusting(self._homes.get(name)):
            return check_lent_agent(self.kernel, found, f"agent {name!r}")

    def _build(self, spec: dict[str, Any], llm: Any) -> Any:
        """An agent from a spec; a declared (customize) agent gets ``llm`` without resolving its own first. The spec
        may not name this manager's SQLite store (``--agents agents.db``) for its memory or checkpoints."""
        store = os.fspath(self.storage) if self.storage is not None else ""
        with reserving({store if is_db(store) else None: "the agents store of this manager (--agents)"}):
            return self._built(spec, llm)

    def _built(self, spec: dict[str, Any], llm: Any) -> Any:
        if llm is not None and spec.get("type", "customize") == "customize":
            from zagent.plugins.actions import CustomizeAgent

            llm = self.kernel.llm(llm) if isinstance(llm, str) else llm
            return CustomizeAgent.from_dict({k: v for k, v in spec.items() if k not in ("llm", "llm_config")},
                                            self.kernel, llm=llm)
        return self._with_llm(self.kernel.agent(spec), llm)

    def _with_llm(self, agent: Any, llm: Any) -> Any:
        if llm is not None and hasattr(agent, "llm"):
            agent.llm = self.kernel.llm(llm) if isinstance(llm, str) else llm
        return agent

    @staticmethod
    def name_of(agent: Any) -> str:
        """The name an agent is kept under: its ``name``, else a function's ``__name__``."""
        name = getattr(agent, "name", None)
        if not isinstance(name, str):
            name = getattr(agent, "__name__", None)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"cannot tell the name of agent {agent!r}; give it a 'name' attribute")
        return name

    def add_agents_from_workflow(self, graph: Any, *, llm: Any = None) -> list[Any]:
        """Register every agent named or specified by the nodes of ``graph``; return them in node order."""
        return [self.add_agent(ref, llm=llm) for node in graph.nodes for ref in node.agents]

    def remove_agent(self, name: str) -> Any:
        """Forget an AVAILABLE agent and return it (a RUNNING one cannot be removed)."""
        with self._cond:
            self._require(name)
            if self._states[name] is AgentState.RUNNING:
                raise ConfigError(f"agent {name!r} is running; wait for it before removing it")
            del self._states[name]
            self._homes.pop(name, None)
            self._origins.pop(name, None)
            return self._agents.pop(name)

    # -- looking up ---------------------------------------------------------------

    def get_agent(self, name: str) -> Any:
        self._require(name)
        return self._agents[name]

    __getitem__ = get_agent

    def has_agent(self, name: str) -> bool:
        return name in self._agents

    __contains__ = has_agent

    @property
    def names(self) -> list[str]:
        return list(self._agents)

    @property
    def agents(self) -> list[Any]:
        return list(self._agents.values())

    def __len__(self) -> int:
        return len(self._agents)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._agents.values()))

    def describe(self) -> list[dict[str, Any]]:
        """Name, description, inputs and outputs of every agent (for prompts that select agents)."""
        return [_description(name, agent) for name, agent in list(self._agents.items())]

    def _require(self, name: str) -> None:
        if name not in self._agents:
            raise ConfigError(f"unknown agent {name!r}; known agents: {', '.join(self._agents) or 'none'}")

    # -- states -------------------------------------------------------------------

    def get_state(self, name: str) -> AgentState:
        self._require(name)
        return self._states[name]

    def set_state(self, name: str, state: Union[AgentState, str]) -> None:
        state = AgentState(state)
        with self._cond:
            self._require(name)
            self._states[name] = state
            if state is AgentState.AVAILABLE:
                self._wake(name)

    def _wake(self, name: str) -> None:
        """Wake thread and coroutine waiters of ``name`` (the lock is held)."""
        self._cond.notify_all()
        for loop, future in self._waiters.pop(name, ()):
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_resolve, future)

    def wait_for_available(self, name: str, timeout: Optional[float] = None) -> bool:
        """Block this thread until ``name`` is AVAILABLE; ``False`` on timeout. In async code use ``await_available``."""
        with self._cond:
            self._require(name)
            return self._cond.wait_for(lambda: self._states.get(name) is not AgentState.RUNNING, timeout)

    async def await_available(self, name: str, timeout: Optional[float] = None) -> bool:
        """Wait (without blocking the loop) until ``name`` is AVAILABLE; ``False`` on timeout."""
        return await self._await(name, timeout, take=False) is not None

    def acquire(self, name: str, timeout: Optional[float] = None) -> Any:
        """Wait until ``name`` is AVAILABLE, mark it RUNNING and return it; ``AgentTimeout`` after ``timeout`` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._require(name)
            while self._states[name] is AgentState.RUNNING:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise self._timeout(name, timeout)
                self._cond.wait(left)
                self._require(name)
            self._states[name] = AgentState.RUNNING
            return self._agents[name]

    async def aacquire(self, name: str, timeout: Optional[float] = None) -> Any:
        """Async twin of ``acquire``."""
        agent = await self._await(name, timeout, take=True)
        if agent is None:
            raise self._timeout(name, timeout)
        return agent

    def release(self, name: str) -> None:
        """Mark ``name`` AVAILABLE again and wake whoever waits for it."""
        self.set_state(name, AgentState.AVAILABLE)

    @contextlib.contextmanager
    def using(self, name: str, timeout: Optional[float] = None) -> Iterator[Any]:
        """``with manager.using("Writer") as agent:`` -- acquire, then release however the block ends."""
        agent = self.acquire(name, timeout)
        try:
            yield agent
        finally:
            self.release(name)

    @contextlib.asynccontextmanager
    async def ausing(self, name: str, timeout: Optional[float] = None) -> AsyncIterator[Any]:
        """Async twin of ``using``."""
        agent = await self.aacquire(name, timeout)
        try:
            yield agent
        finally:
            self.release(name)

    async def _await(self, name: str, timeout: Optional[float], *, take: bool) -> Any:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            with self._cond:
                self._require(name)
                if self._states[name] is AgentState.AVAILABLE:
                    if take:
                        self._states[name] = AgentState.RUNNING
                    return self._agents[name]
                future = loop.create_future()
                self._waiters.setdefault(name, []).append((loop, future))
            left = None if deadline is None else deadline - loop.time()
            try:
                if left is not None and left <= 0:
                    return None
                await asyncio.wait_for(future, left)
            except asyncio.TimeoutError:
                return None
            finally:
                self._forget(name, future)

    def _forget(self, name: str, future: Any) -> None:
        with self._cond:
            waiting = self._waiters.get(name)
            if waiting:
                waiting[:] = [w for w in waiting if w[1] is not future]

    def _timeout(self, name: str, timeout: Optional[float]) -> AgentTimeout:
        return AgentTimeout(f"agent {name!r} stayed running for more than {timeout} s; wait longer, "
                            "or give the work to another agent")

    # -- storage ------------------------------------------------------------------

    def save_all(self, target: Optional[Union[str, os.PathLike[str]]] = None) -> list[str]:
        """Save every agent that can be saved (to a directory or an SQLite file); return their names."""
        where = self._where(target)
        todo = [(name, agent, data) for name, agent in list(self._agents.items()) if (data := spec_of(agent)) is not None]
        if todo and not is_db(where):
            from zagent.agentkit.privatefiles import private_folder

            private_folder(where)  # made 0700 (its files are 0600), as every folder zagent makes
            check_file_names(where, [name for name, _, _ in todo])  # evil.json over Evil.json (macOS): before a write
        saved: list[str] = []
        for name, agent, data in todo:
            if is_db(where):
                self._store(where).save(f"agent:{name}", 0, data, kind=SPEC_KIND, metadata={"name": name})
            else:
                save_file(agent, data, os.path.join(where, file_name(name)))
            saved.append(name)
        return saved

    def load_all(self, source: Optional[Union[str, os.PathLike[str]]] = None, *, llm: Any = None) -> list[Any]:
        """Add every agent saved in a directory or SQLite file (names already known are reused)."""
        where = self._where(source)
        home = self._home(where)
        if is_db(where):  # each record is a stored agent (inline.check_inline): loaded by name from the storage
            store = self._store(where)
            with trusting(for_named_file(where, home or current_trust())):
                return [self.add_agent(decode_record(store.latest(r.run_id)), llm=llm) for r in store.list(kind=SPEC_KIND)]
        if not os.path.isdir(where):
            raise ConfigError(f"agent directory {where!r} does not exist")
        files = sorted(f for f in os.listdir(where) if f.endswith((".json", ".yaml", ".yml")))
        return [self._insert_loaded(os.path.join(where, f), llm, home) for f in files]

    def _insert_loaded(self, path: str, llm: Any, home: Optional[Trust]) -> Any:  # named like a held or stored
        agent = self._with_llm(load_file(self.kernel, path, home or current_trust()), llm)  # agent: that one
        name = self.name_of(agent)
        if home is not None:
            self._origins[name] = (for_named_file(path, home), path)
        if name not in self and self._stored_file(name) == os.path.realpath(path):  # the stored agent itself
            return self._insert(name, agent, home)  # (check_inline would build it a second time)
        named = {k: list(getattr(getattr(agent, "spec", None), k, None) or []) for k in ("tools", "agents")}
        return self._insert(check_inline(self, {"name": name, **named}, llm), agent, home)

    def _stored_file(self, name: str) -> Optional[str]:
        """The real path of the storage folder's file of agent ``name`` (as ``_load_named`` finds it), else None."""
        where = None if self.storage is None else os.fspath(self.storage)
        found = [p for ext in (".json", ".yaml", ".yml") if where and os.path.exists(p := os.path.join(where, file_name(name, ext)))]
        return os.path.realpath(found[0]) if found else None

    def _home(self, where: str) -> Optional[Trust]:
        """``storage_trust`` for agents loaded from the storage itself (else ``None``: the trust in force)."""
        if self.storage_trust is None or self.storage is None:
            return None
        return self.storage_trust if os.path.realpath(where) == os.path.realpath(os.fspath(self.storage)) else None

    def _load_named(self, name: str, llm: Any) -> tuple[Any, Optional[Trust]]:
        if self.storage is None:
            raise ConfigError(f"unknown agent {name!r}; known agents: {', '.join(self._agents) or 'none'}. "
                              "Add it as a dict or an instance, or give the manager a storage to load it from")
        where = os.fspath(self.storage)
        home = self._home(where)
        if is_db(where):
            found = self._store(where).latest(f"agent:{name}")
            if found is None:
                raise ConfigError(f"agent {name!r} is not saved in {where!r}")
            with trusting(for_named_file(where, home or current_trust())) as used:
                built = self._build(decode_record(found), llm)
            if home is not None:
                self._origins[name] = (used, None)
            return built, home
        for ext in (".json", ".yaml", ".yml"):
            path = os.path.join(where, file_name(name, ext))
            if os.path.exists(path):
                if home is not None:
                    self._origins[name] = (for_named_file(path, home), path)
                return self._with_llm(load_file(self.kernel, path, home or current_trust()), llm), home
        raise ConfigError(f"agent {name!r} is not known and there is no {file_name(name)} in {where!r}")

    def _where(self, target: Optional[Union[str, os.PathLike[str]]]) -> str:
        where = target if target is not None else self.storage
        if where is None:
            raise ConfigError("give a directory or an SQLite file (or set the manager's storage)")
        return os.fspath(where)

    def _store(self, path: str) -> Any:
        return self.kernel.memory("checkpoints", path=path)

    def __repr__(self) -> str:
        running = sum(1 for s in self._states.values() if s is AgentState.RUNNING)
        return f"<AgentManager agents={len(self._agents)} running={running}>"


def _resolve(future: Any) -> None:
    if not future.done():
        future.set_result(None)


def _description(name: str, agent: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": getattr(agent, "description", "") or ""}
    action = getattr(agent, "action", None)
    if callable(action):
        with contextlib.suppress(Exception):
            act = action()
            out["inputs"] = list(act.input_spec.names)
            out["outputs"] = list(act.output_spec.names)
    return out
