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


class _ClosedPipe(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_progress_pipe_does_not_stop_the_batch(kernel, tmp_path):
    """`zagent batch ... 2>&1 | head`: once the reader has gone, progress is dropped and every item still runs."""
    from .conftest import QA, read_jsonl, write_jsonl

    inputs = write_jsonl(tmp_path / "in.jsonl", [{"question": f"q{i}"} for i in range(12)])
    out = tmp_path / "out.jsonl"
    progress = Progress(12, _ClosedPipe(), tty=False, every=0)
    kernel.batch(QA, str(inputs), out=str(out), on_result=progress)
    progress.finish(Summary(done=12))
    assert len(read_jsonl(out)) == 12
