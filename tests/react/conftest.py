"""Fixtures for the ReAct tests: a kernel with offline providers, parsers, actions and react; reply and
checkpoint helpers."""

import msgspec
import pytest

from zagent import Kernel

from tests.kernels import with_add

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with an `add` tool."""
    k = with_add(Kernel(plugins=PLUGINS, entry_points=False, strict=True))
    yield k
    k.close()


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def spy_checkpoints(loop):
    """``{step: the loop's state, JSON}`` of every checkpoint ``loop`` goes on to write, taken once it landed."""
    seen = {}
    original = loop._checkpoint

    async def spy():
        await original()
        seen[loop.state.checkpoint] = msgspec.json.encode(loop.state)

    loop._checkpoint = spy
    return seen
