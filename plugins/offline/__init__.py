"""Offline providers: no network, for tests, demos and deterministic replays.

Registers four providers (each module is imported only when its provider is used):

* ``scripted:<name>`` -- replays the ``replies=[...]`` it is given, in order, and
  records every request (``zagent.plugins.offline.scripted``);
* ``test:<name>`` -- needs no script: calls each offered tool once with arguments
  valid for its schema, then answers in the requested output format; the kernel's
  fallback model is ``test:offline`` (``zagent.plugins.offline.testmodel``);
* ``record:<provider>:<model>`` / ``replay:<name>`` -- record real exchanges to a
  JSONL file (secrets stripped) and replay them later offline
  (``zagent.plugins.offline.record``).

Record needs the kernel to resolve the wrapped model, and the test model its parser registry, so the
registration hook closes over the kernel it is given (the models made hold no kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


def _scripted(model: str, **options: Any) -> Any:
    from .scripted import ScriptedLLM

    return ScriptedLLM.build(model, **options)


def _test_factory(kernel: "Kernel") -> Callable[..., Any]:
    parsers = kernel.registry_of("parsers") if kernel is not None else None

    def _test(model: str, **options: Any) -> Any:
        from .testmodel import TestLLM

        return TestLLM.build(model, parsers=parsers, **options)

    return _test


def _replay(model: str, **options: Any) -> Any:
    from .record import ReplayLLM

    return ReplayLLM.build(model, **options)


_replay.zagent_path_options = {"path": (".jsonl",)}  # type: ignore[attr-defined]  # checked like any spec path
#: without ``path`` the file is the user's own recording: a model a spec names must give one (zagent.speckit.paths)
_DEFAULT = {"path": "your own recordings folder ($ZAGENT_RECORDINGS or ~/.local/share/zagent/recordings)"}
_replay.zagent_default_paths = _DEFAULT  # type: ignore[attr-defined]


def _record_factory(kernel: "Kernel") -> Callable[..., Any]:
    def _record(model: str, **options: Any) -> Any:
        from .record import RecordLLM

        return RecordLLM.build(kernel, model, **options)

    _record.zagent_path_options = {"path": (".jsonl",)}  # type: ignore[attr-defined]  # checked like any spec path
    _record.zagent_default_paths = _DEFAULT  # type: ignore[attr-defined]
    return _record


def zagent_register_providers(register: Callable[..., None], kernel: "Kernel") -> None:
    register("scripted", _scripted)
    register("test", _test_factory(kernel))
    register("record", _record_factory(kernel))
    register("replay", _replay)
