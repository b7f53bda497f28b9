"""Executors: where a unit of work (a batch item, a workflow node run) runs.

A driver (``Kernel.abatch``, the workflow executor) keeps all state -- what is
done, checkpoints, the output file -- and hands each unit to an executor by
name (``Kernel.executor(name)``; plugins add names through
``zagent_register_executors``). The executor only runs the unit and returns its
result, so a lost worker costs a retried unit, never a lost or corrupt run.

A ``Unit`` carries two ways to run it:

* ``local``: a coroutine function run in this process, on this kernel (what
  the built-in ``local`` executor does: today's asyncio behaviour, no copies);
* ``runner`` + ``payload()``: an import path ``"package.module:function"`` and
  plain data (msgspec-encodable). A remote executor ships both to a worker,
  which imports the runner from its installed packages and awaits
  ``runner(kernel, payload)`` on a kernel of its own. The runner is chosen by
  the driver's code, never by input data.

An executor is any object with ``async submit(unit) -> result``, ``in_process``
(``True`` when units run on the caller's kernel and event loop),
``concurrency`` (units it can usefully run at once, or ``None``) and
``async aclose()``. When a worker is lost for good it raises ``UnitLost``
(the driver retries the unit a bounded number of times); a unit that ran and
failed raises ``UnitFailed`` carrying the remote error's type name.

A ``Job`` is what a batch driver runs per item; it makes the item's ``Unit``
(the workflow plugin's graphs build one; the batch plugin's driver runs them).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

import attrs

from ..errors import ConfigError, ZagentError

DEFAULT = "local"


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
class Job:
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
        return f"<Job {self.name!r} runner={self.runner!r}>"


class LocalExecutor:
    """The default executor: awaits ``unit.local()`` on the caller's event loop (no copies, no threads)."""

    name = DEFAULT
    in_process = True
    concurrency: Optional[int] = None

    async def submit(self, unit: Unit) -> Any:
        return await unit.local()

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return "<LocalExecutor>"


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


def shipped_trust() -> dict[str, Any]:
    """The trust in force here (``zagent._trust.imports``) as plain data for a payload: a worker rebuilding a spec
    imports exactly what the driver was allowed to (the driver chose it; workers trust the driver)."""
    from .._trust.imports import current_trust

    trust = current_trust()
    return {"everything": trust.everything, "folders": list(trust.folders)}


def trust_from(payload: dict[str, Any]) -> Any:
    """The ``Trust`` a payload's ``trust`` entry names (none when absent)."""
    from .._trust.imports import NO_TRUST, Trust

    data = payload.get("trust")
    if not isinstance(data, dict):
        return NO_TRUST
    return Trust(everything=data.get("everything") is True, folders=tuple(str(f) for f in data.get("folders") or ()))


def pick(kernel: Any, name: Optional[str], options: dict[str, Any]) -> Any:
    """The executor named ``name`` (default: ``kernel.config['executor']``, else ``ZAGENT_EXECUTOR``, else
    ``local``); a registered factory is called with ``options``."""
    import os

    name = name or kernel.config.get("executor") or os.environ.get("ZAGENT_EXECUTOR") or DEFAULT
    factory = kernel.registries["executors"].get(name)
    if factory is None:
        if name == DEFAULT:
            if options:
                raise ConfigError(f"executor 'local' takes no options, got {sorted(options)}")
            return LocalExecutor()
        installed = ", ".join(["local", *(n for n in kernel.registries["executors"] if n != DEFAULT)])
        raise ConfigError(f"unknown executor {name!r}; installed executors: {installed}. Install the plugin that "
                          f"provides it (e.g. pip install zagent-{name}) or fix the name")
    return factory(**options)
