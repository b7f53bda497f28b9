"""A sync tool on the event loop never returns success past its timeout, and a short timeout keeps a tool in
threads (where the timeout holds) however quick its calls are."""

from __future__ import annotations

from zagent import Kernel, tool
from zagent._tools.run import _probes
from zagent._tools.threads import PROBES


def count(n: int) -> int:
    """Count to n."""
    total = 0
    for i in range(n):
        total += i
    return total


def test_a_tool_with_a_short_timeout_is_never_promoted_to_the_loop():
    """``timeout=2`` on a pure counting loop: after many quick calls it still runs in threads."""
    k = Kernel(entry_points=False)
    t = k.add_tool(tool(count, timeout=2))
    try:
        for _ in range(PROBES * 3):
            assert k.run_tool({"name": "count", "arguments": {"n": 1}}).state == "success"
        assert not _probes[t].inline
    finally:
        k.close()


def test_a_call_on_the_loop_past_its_timeout_is_a_timeout_not_a_success():
    """An inline tool whose call runs past its timeout gives a ``timeout`` result (its value dropped)."""
    k = Kernel(entry_points=False)
    k.add_tool(tool(count, timeout=0.01, inline=True))
    try:
        result = k.run_tool({"name": "count", "arguments": {"n": 30_000_000}})
    finally:
        k.close()
    assert result.state == "timeout" and "did not finish within 0.01 s" in result.content
    assert "event loop" in result.content
