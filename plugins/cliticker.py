"""The CLI's "waiting for the model" ticker, ``WaitTicker``: elapsed time on stderr while a model call runs.

On a terminal one line is rewritten every second and erased at the reply; elsewhere one line a call every
``ZAGENT_PROGRESS_INTERVAL`` seconds (default 30). Without ``ZAGENT_MODEL``, the offline test model's first call
prints ``OFFLINE_MODEL_NOTE`` once.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Optional, TextIO

from .cliterminal import printable, raw_stream

OFFLINE_MODEL_NOTE = ("zagent: ZAGENT_MODEL is not set, so the offline test model answers (canned replies and "
                      "placeholder values such as 'example report'); set ZAGENT_MODEL=provider:model for a real LLM")


class WaitTicker:
    """A ``zagent_event`` observer with a ticker thread; ``start()`` then ``stop()``."""

    def __init__(self, stream: Optional[TextIO] = None, interval: Optional[float] = None):
        self.stream = raw_stream(stream or sys.stderr)  # its own erase-line sequence; the text is made printable
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False
        if interval is None:
            interval = 1.0 if self.tty else _env_interval()
        self.interval = interval
        self._calls: dict[tuple[Optional[str], Optional[str]], float] = {}  # (run_id, agent) -> start time
        self._steps: dict[Optional[str], Any] = {}
        self._nodes: dict[str, None] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._shown = False  # a tty line is on screen
        self._offline_said = False

    # -- the observer -----------------------------------------------------------------

    def zagent_event(self, event: Any) -> None:
        kind, data = event.type, event.data or {}
        with self._lock:
            if kind == "llm_start":
                if data.get("provider") == "test" and not self._offline_said:
                    self._say_offline()
                self._calls[(event.run_id, event.agent)] = time.monotonic()
            elif kind == "llm_end":
                self._calls.pop((event.run_id, event.agent), None)
                if not self._calls:
                    self._erase()
            elif kind == "step_start":
                self._steps[event.agent] = data.get("step")
            elif kind == "node_start" and data.get("node") is not None:
                self._nodes[str(data["node"])] = None
            elif kind == "node_end":
                self._nodes.pop(str(data.get("node")), None)

    # -- the thread ---------------------------------------------------------------------

    def start(self) -> "WaitTicker":
        self._thread = threading.Thread(target=self._run, name="zagent-cli-ticker", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        with self._lock:
            self._erase()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                self.tick(time.monotonic())

    def tick(self, now: float) -> Optional[str]:
        """Write the waiting line(s) for ``now``; return the text written (for tests)."""
        if not self._calls:
            return None
        parts = [f"{self._label(agent)}: {now - started:.0f} s" for (_r, agent), started in self._calls.items()]
        text = "… waiting for the model: " + "; ".join(parts)
        if self._nodes:
            text += f" (running: {', '.join(self._nodes)})"
        text = printable(text, layout=False)  # agent and node names come from specs
        try:
            if self.tty:
                self.stream.write("\r\x1b[K" + text)
                self._shown = True
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed: nothing to show
            self._stop.set()
        return text

    def _say_offline(self) -> None:
        self._offline_said = True
        if os.environ.get("ZAGENT_MODEL"):  # the user chose the model (the test one, then)
            return
        self._erase()
        try:
            self.stream.write(OFFLINE_MODEL_NOTE + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _label(self, agent: Optional[str]) -> str:
        step = self._steps.get(agent)
        name = agent or "model call"
        return f"{name}, step {step}" if step is not None else name

    def _erase(self) -> None:
        if self._shown:
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self._shown = False


def _env_interval() -> float:
    try:
        value = float(os.environ.get("ZAGENT_PROGRESS_INTERVAL", "30"))
    except ValueError:
        return 30.0
    return value if value > 0 else 30.0
