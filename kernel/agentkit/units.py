"""Units of work that drivers (batch, the workflow executor) hand to an executor (docs/hooks.md, executors): a
``Unit`` runs ``local()`` here or, on a worker, ``run_unit(kernel, runner, payload)``; a lost worker is ``UnitLost``
(retried, bounded), a remote exception ``UnitFailed``. ``BatchJob`` makes a batch item's ``Unit``; ``shipped`` and
``worker_agent`` rebuild specs under the driver's trust.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterator, Optional

import attrs

from .._runs.stash import StashKey
from ..errors import ConfigError, ZagentError
from ..speckit.paths import current_spec_file, reserved_files, reserving, spec_folders, spec_origin
from ..speckit.trust import NO_TRUST, Trust, current_trust, dubious_folder, trusting

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["BatchJob", "Unit", "UnitFailed", "UnitLost", "WORKER_AGENTS", "run_unit", "shipped", "shipped_trust",
           "trust_from", "worker_agent"]


class UnitLost(ZagentError):
    """The worker running a unit died or vanished before answering; running the unit again may succeed."""


class UnitFailed(ZagentError):
    """A unit ran on a worker and raised; ``type_name`` is the remote exception's class name."""

    def __init__(self, message: str, *, type_name: str = "Exception"):
        super().__init__(message)
        self.type_name = type_name


@attrs.frozen(repr=False)
class Unit:
    """One unit of work: ``key`` names it in errors and logs; see the module docstring for the rest."""

    key: str
    local: Callable[[], Awaitable[Any]]
    runner: Optional[str] = None
    payload: Optional[Callable[[], dict[str, Any]]] = None

    def remote_parts(self, executor: str) -> tuple[str, dict[str, Any]]:
        """``(runner, payload)`` for a remote executor, or a ``ConfigError`` saying why it cannot travel."""
        if self.runner is None or self.payload is None:
            raise ConfigError(
                f"unit {self.key!r} holds Python objects that cannot be sent to executor {executor!r}; "
                "declare the agent or workflow as a spec (a dict or a file) to run it there, or use executor 'local'")
        return self.runner, self.payload()

    def __repr__(self) -> str:
        return f"<Unit {self.key!r} runner={self.runner!r}>"


@attrs.frozen(repr=False)
class BatchJob:
    """What each item runs: ``local(inputs)`` here, or ``runner`` with ``{**payload, "inputs": ...}`` elsewhere.

    Both return ``{"output": {...}, "usage": {"input_tokens": .., "output_tokens": .., "calls": ..}}``.
    """

    name: str
    local: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
    runner: Optional[str] = None
    payload: Optional[dict[str, Any]] = None

    def unit(self, key: str, inputs: dict[str, Any]) -> Unit:
        base = self.payload
        payload = None if base is None else (lambda: {**base, "inputs": inputs})
        return Unit(key=key, local=lambda: self.local(inputs), runner=self.runner, payload=payload)

    def __repr__(self) -> str:
        return f"<BatchJob {self.name!r} runner={self.runner!r}>"


async def run_unit(kernel: Any, runner: str, payload: dict[str, Any]) -> Any:
    """What a worker does with a shipped unit: import ``runner`` and await ``runner(kernel, payload)``."""
    import importlib

    module_name, sep, attr = runner.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"unit runner {runner!r} is not an import path 'package.module:function'")
    fn: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        fn = getattr(fn, part)
    result = fn(kernel, payload)
    if hasattr(result, "__await__"):
        result = await result
    return result


def shipped_trust(source: Optional[str] = None) -> dict[str, Any]:
    """The trust in force here (``zagent.speckit.trusting``) and the spec file being built (``spec_file``; else
    ``source``, a file the driver read the spec from) as plain data for a payload: a worker rebuilding a spec
    imports exactly what the driver was allowed to and gives it the file's identity (memory namespace, relative
    paths, its folder for files), neither widened nor dropped (the driver chose it; workers trust the driver)."""
    trust = current_trust()
    file = current_spec_file() or (os.path.realpath(source) if source else None)
    folders = list(spec_folders()) if current_spec_file() else \
        [os.path.dirname(file)] if file and dubious_folder(os.path.dirname(file)) is None else []
    return {"everything": trust.everything, "folders": list(trust.folders), "dry": trust.dry,
            "refused": list(trust.refused), "spec_file": file, "spec_folders": folders,
            "reserved": [[p, what] for p, what in reserved_files().items()]}  # the run's files: never the spec's


def trust_from(payload: dict[str, Any]) -> Trust:
    """The ``Trust`` a payload's ``trust`` entry names (none when absent)."""
    data = payload.get("trust")
    if not isinstance(data, dict):
        return NO_TRUST
    return Trust(everything=data.get("everything") is True, folders=tuple(str(f) for f in data.get("folders") or ()),
                 dry=data.get("dry") is True, refused=tuple(str(r) for r in data.get("refused") or ()))


@contextlib.contextmanager
def shipped(payload: dict[str, Any]) -> Iterator[Trust]:
    """Build specs inside the block as the driver did (``shipped_trust``): under its trust, as from its spec file,
    never naming the files the driver's run keeps (``reserving``)."""
    data = payload.get("trust")
    data = data if isinstance(data, dict) else {}
    file = data.get("spec_file") if isinstance(data.get("spec_file"), str) else None
    folders = tuple(str(f) for f in data.get("spec_folders") or ()) if file else ()
    taken = {str(p[0]): str(p[1]) for p in data.get("reserved") or () if isinstance(p, (list, tuple)) and len(p) == 2}
    with spec_origin(file, folders), reserving(taken), trusting(trust_from(payload)) as trust:
        yield trust


#: a worker kernel's agents built from shipped specs (batch items, workflow nodes), by encoded (spec, trust, memory key)
WORKER_AGENTS: "StashKey[dict[bytes, Any]]" = StashKey("zagent.worker_agents")
#: the most agents a worker keeps built (least recently used first out)
MAX_WORKER_AGENTS = 256


def worker_agent(kernel: "Kernel", spec: dict[str, Any], payload: dict[str, Any],
                 memory_key: Optional[str] = None) -> Any:
    """The agent of ``spec`` on a worker's ``kernel``, built once per spec, shipped trust and ``memory_key`` (the
    driver's agent's long-term namespace root, when the driver gave its agent a model of its own) under
    ``shipped(payload)`` and kept in ``kernel.stash``."""
    import msgspec

    built = kernel.stash.get_or_create(WORKER_AGENTS, dict)
    key = msgspec.json.encode([spec, payload.get("trust"), memory_key])
    agent = built.pop(key, None)
    if agent is None:
        with shipped(payload):
            agent = kernel.agent(spec)
        if memory_key is not None and hasattr(agent, "memory_key"):
            agent.memory_key = memory_key
        while len(built) >= MAX_WORKER_AGENTS:  # generated plans ship new specs for ever: the oldest go
            del built[next(iter(built))]
    built[key] = agent  # last: the most recently used
    return agent
