"""An event-stream line that never ends costs work linear in its length (a real server on 127.0.0.1).

The work is counted, not timed: every character ``StreamReply.aiter_lines`` hands to its line splitter is
summed, and must stay within twice the body (re-splitting the growing line on every chunk was quadratic).
bench/hostile_limits.py (``sse_no_newline``) shows the CPU seconds.
"""

from __future__ import annotations

import pytest

from tests.servers import hostile
from tests.servers.hostile import HostileServer
from zagent import ZagentError
from zagent.providerkit import stream

SIZE = 4 * 2**20


class _Counting:
    """The line-splitting regex, summing the length of every text it splits."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.chars = 0

    def split(self, text):
        self.chars += len(text)
        return self.pattern.split(text)


@pytest.mark.timeout(120)
def test_a_line_without_newline_is_split_in_linear_work(kernel, monkeypatch):
    """A 4 MiB data: line sent in 16 KiB chunks with no newline is scanned about once, not once per chunk."""
    counting = _Counting(stream._NEWLINES)
    monkeypatch.setattr(stream, "_NEWLINES", counting)
    with HostileServer(hostile.long_line(SIZE)) as server:
        llm = kernel.llm("openai:m", base_url=server.url, api_key="sk-linear-test-key", max_retries=0)
        try:
            list(llm.stream("hi"))
        except ZagentError:
            pass  # what the provider makes of the line does not matter here
    assert counting.chars <= 2 * SIZE, f"{counting.chars} characters split for a {SIZE}-byte line"
