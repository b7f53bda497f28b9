"""SIGTERM for the ``zagent`` command: ``stop_on_sigterm()`` makes it raise ``Terminated`` (a ``KeyboardInterrupt``)
in the main thread, so ``timeout``, ``kill`` or a CI cancel stop a command as Ctrl-C does: runs cancelled and kept
in the run log, files whole, exit 143 (the process died before, and the run log never had the run).
"""

from __future__ import annotations

from typing import Any, Callable


class Terminated(KeyboardInterrupt):
    """The process got SIGTERM (the CLI stops as for Ctrl-C and exits 143)."""


def stop_on_sigterm() -> Callable[[], None]:
    """Raise ``Terminated`` on SIGTERM until the returned undo runs; a no-op off the main thread or where SIGTERM
    is not the default (an app or a supervisor chose what it does)."""
    import signal

    def on_term(signum: int, frame: Any) -> None:
        raise Terminated("terminated (SIGTERM)")

    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return lambda: None
        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, AttributeError):  # not the main thread, or no SIGTERM here
        return lambda: None

    def undo() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return undo
