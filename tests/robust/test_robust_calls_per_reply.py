"""One reply with thousands of tool calls runs at most ``max_tool_calls_per_reply`` of them; the rest get one
``blocked`` result the model reads, and the conversation grows by a bounded number of messages."""

from __future__ import annotations

from zagent import Kernel, tool
from zagent.plugins.react import ReActLoop

from tests.robust.conftest import PLUGINS

MANY = 5_000


def _many(n):
    return {"tool_calls": [{"id": f"c{i}", "name": "tick", "arguments": {}} for i in range(n)]}


def _loop(k, replies, **profile):
    ran = []
    k.add_tool(tool(lambda: ran.append(1) or "ok", name="tick", inline=False))
    llm = k.llm("scripted:m", replies=replies, profile=profile or None)
    return ReActLoop(kernel=k, llm=llm, tools=["tick"], max_iterations=4), ran


def test_a_reply_with_thousands_of_calls_runs_only_the_profile_cap():
    """5,000 calls in one reply: the profile's cap (10) run, one blocked result names the cap, the run ends."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        loop, ran = _loop(k, [_many(MANY), "done"], max_tool_calls_per_reply=10)
        result = loop.run("go")
        results = [m for m in loop.state.messages if m.role == "tool"]
    finally:
        k.close()
    assert result.content == "done" and len(ran) == 10
    assert len(results) == 11
    assert "at most 10 run per reply" in results[-1].content and "4989 after it" in results[-1].content


def test_the_default_cap_bounds_a_reply_without_a_profile_setting():
    """Without a profile setting the default cap (64) applies to a 5,000-call reply."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    try:
        loop, ran = _loop(k, [_many(MANY), "done"])
        assert loop.run("go").content == "done"
    finally:
        k.close()
    assert len(ran) == 64


def test_rails_lower_the_cap_for_an_agent():
    """``rails: {max_tool_calls_per_reply: 3}`` in the kernel's config lowers the profile's cap."""
    k = Kernel(plugins=PLUGINS, entry_points=False, config={"rails": {"max_tool_calls_per_reply": 3}})
    try:
        loop, ran = _loop(k, [_many(50), "done"])
        assert loop.run("go").content == "done"
    finally:
        k.close()
    assert len(ran) == 3
