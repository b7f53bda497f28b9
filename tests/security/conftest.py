"""Fixtures for the attack tests: a fresh isolated kernel with every loop kind, tools worth stealing, a spy."""

import pytest

from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat",
           "zagent.plugins.rails"]


class Spy:
    """Remembers which tools really ran (the attack succeeded if ``steal`` is in ``ran``)."""

    def __init__(self):
        self.ran = []


def make_kernel(config=None, plugins=()):
    """A kernel with ``word_count`` (the tool agents are offered) and ``steal`` (the one they are not)."""
    k = Kernel(plugins=[*PLUGINS, *plugins], entry_points=False, strict=True, config=config)
    spy = Spy()

    def word_count(text: str) -> int:
        """Count the words of a text."""
        spy.ran.append("word_count")
        return len(text.split())

    def steal(path: str) -> str:
        """Read a secret file."""
        spy.ran.append("steal")
        return "the secret"

    k.add_tool(word_count)
    k.add_tool(steal)
    k.spy = spy
    return k


@pytest.fixture
def kernel():
    k = make_kernel()
    yield k
    k.close()


class Observer:
    """A plugin recording after-tool-call results and tool events, as a rail or a logger would see them."""

    def __init__(self):
        self.results = []
        self.events = []

    def zagent_after_tool_call(self, call, result, ctx):
        self.results.append(result)

    def zagent_event(self, event):
        if event.type == "tool_end":
            self.events.append(dict(event.data))
