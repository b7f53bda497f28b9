"""Fixtures for AgentManager tests: a kernel with the plugins declared agents need."""

import pytest
from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory",
           "zagent.plugins.manager"]


@pytest.fixture
def kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


@pytest.fixture
def manager(kernel):
    from zagent.plugins.manager import AgentManager

    return AgentManager(kernel=kernel)


def spec(name="Writer", **over):
    data = {"type": "customize", "name": name, "description": f"{name} writes", "prompt": "Write about {topic}",
            "inputs": [{"name": "topic"}], "outputs": [{"name": "text"}], "parse_mode": "str"}
    data.update(over)
    return data
