"""Offline providers, no network, for tests, demos and replays: ``scripted:<name>`` (given replies),
``test:<name>`` (no script; the kernel's fallback is ``test:offline``) and ``record:<provider>:<model>`` /
``replay:<name>`` (real exchanges to JSONL and back). Each module is imported only when its provider is used.
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
