"""The batch progress display: a redrawn bar on a terminal, plain lines elsewhere."""

import io

from zagent.plugins.batch.driver import Summary
from zagent.plugins.batch.progress import Progress


def test_terminal_gets_a_redrawn_bar():
    """On a terminal the bar is redrawn in place (carriage return) with counts, rate and an ETA."""
    stream = io.StringIO()
    p = Progress(10, stream, tty=True, every=0)
    p({}, Summary(done=5))
    p.finish(Summary(done=10))
    text = stream.getvalue()
    assert text.count("\r") == 2 and "[###############...............] 5/10" in text and "eta" in text
    assert text.endswith("\n")


def test_pipe_gets_plain_lines():
    """Without a terminal each update is a whole plain line (no carriage returns or escape codes)."""
    stream = io.StringIO()
    p = Progress(None, stream, tty=False, every=0)
    p({}, Summary(done=3, failed=1, skipped=2))
    assert stream.getvalue().startswith("batch: 6 items, ") and "failed 1, skipped 2" in stream.getvalue()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()


def test_updates_are_throttled():
    """Updates closer together than ``every`` seconds draw nothing more."""
    stream = io.StringIO()
    p = Progress(100, stream, tty=False, every=60)
    for i in range(50):
        p({}, Summary(done=i))
    assert stream.getvalue().count("\n") == 1
