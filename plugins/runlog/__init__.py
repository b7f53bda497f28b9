"""Run log plugin: every run's requests, replies, tool calls, usage and timings in a local SQLite file
(docs/observability.md). ``enabled_path(config)`` is that file, or ``None`` when logging is off (the default for an
embedded ``Kernel()``); when on, a ``RunLogger`` records each run, else runs pay nothing. Memory backend ``"runlog"``;
commands ``zagent logs``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup

__all__ = ["enabled_path", "zagent_register_memory", "zagent_kernel_start", "zagent_register_commands"]

OBSERVER = "runlog.observer"
_OFF = ("", "0", "false", "no", "off")


def default_path() -> str:
    """``$ZAGENT_LOG_DB``, else ``$XDG_DATA_HOME/zagent/logs.db``."""
    from zagent.agentkit.privatefiles import users_path

    return users_path("ZAGENT_LOG_DB", "logs.db")


def enabled_path(config: dict[str, Any]) -> Optional[str]:
    """The log file to write for a kernel with ``config``, or ``None`` when logging is off."""
    setting = config.get("log")
    if setting is None:
        setting = os.environ.get("ZAGENT_LOG", "").strip().lower() not in _OFF
    if isinstance(setting, dict):
        return os.fspath(setting.get("path") or default_path()) if setting.get("enabled", True) else None
    if isinstance(setting, (str, os.PathLike)) and not isinstance(setting, bool):
        text = os.fspath(setting)
        return None if text.strip().lower() in _OFF else (default_path() if text.strip().lower() in ("1", "true", "on", "yes") else text)
    return default_path() if setting else None


def make_store(**options: Any) -> Any:
    """Factory of memory backend ``"runlog"``: the run log file (``path=`` defaults as above)."""
    from .store import RunLogStore

    return RunLogStore.open(**options)


#: spans, not an agent's messages: an agent's ``long_term_memory`` naming it is refused before the file is made
make_store.zagent_message_store = False  # type: ignore[attr-defined]


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``log``."""
    return ("log",)


def zagent_register_memory(register: Any) -> None:
    register("runlog", make_store)


def zagent_kernel_start(kernel: "Kernel") -> None:
    path = enabled_path(kernel.config)
    if path is not None and not kernel.has_plugin(OBSERVER):
        from .observer import RunLogger

        kernel.add_plugin(RunLogger(kernel, path), name=OBSERVER)


def zagent_register_commands(cli: "CommandGroup", kernel: "Kernel") -> None:
    from .cli import register_commands

    register_commands(cli, kernel)
