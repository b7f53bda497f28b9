"""Progress of a batch on stderr (``Progress``, an ``on_result``): a bar redrawn at most ten times a second on a
terminal, otherwise a plain line every ``every`` seconds (default 5), so a long batch does not flood a log."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional, TextIO


class Progress:
    """``on_result(record, summary)`` for ``Kernel.abatch``; ``total`` is the number of input lines, if known."""

    def __init__(self, total: Optional[int], stream: Optional[TextIO] = None, *, tty: Optional[bool] = None,
                 every: float = 5.0, width: int = 30):
        from zagent.plugins.cliterminal import raw_stream  # the bar's own \r and erase-line; its text is numbers

        self.total, self.stream, self.width = total, raw_stream(stream or sys.stderr), width
        self.tty = self.stream.isatty() if tty is None else tty
        self.every = 0.1 if self.tty else every
        self.started = time.perf_counter()
        self.last = 0.0
        self.drawn = False

    def __call__(self, record: dict[str, Any], summary: Any) -> None:
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            self.draw(summary, now)

    def draw(self, summary: Any, now: Optional[float] = None) -> None:
        try:
            self._draw(summary, now)
        except (BrokenPipeError, ValueError):  # stderr went away (`2>&1 | head`): the batch goes on, unseen
            self.stream = _Gone()

    def _draw(self, summary: Any, now: Optional[float] = None) -> None:
        elapsed = (now or time.perf_counter()) - self.started
        ran = summary.done + summary.failed
        seen = ran + summary.skipped
        rate = ran / elapsed if elapsed > 0 else 0.0
        counts = f"{seen}/{self.total}" if self.total else f"{seen}"
        tail = f"{rate:.1f} items/s, failed {summary.failed}" + (f", skipped {summary.skipped}" if summary.skipped else "")
        if self.tty:
            bar = ""
            if self.total:
                filled = int(self.width * min(seen, self.total) / self.total)
                eta = (self.total - seen) / rate if rate > 0 else 0
                bar = f"[{'#' * filled}{'.' * (self.width - filled)}] "
                tail += f", eta {eta:.0f} s"
            self.stream.write(f"\r{bar}{counts} {tail}\x1b[K")
            self.drawn = True
        else:
            self.stream.write(f"batch: {counts} items, {tail}\n")
        self.stream.flush()

    def finish(self, summary: Any) -> None:
        """Draw the final state (and end the bar's line on a terminal)."""
        self.draw(summary)
        if self.tty and self.drawn:
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (BrokenPipeError, ValueError):
                self.stream = _Gone()


class _Gone:
    """A stream whose reader left: writes go nowhere."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
