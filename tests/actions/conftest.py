"""Fixtures for the actions plugin tests: a kernel with the plugins a declared agent needs."""

import pytest

from zagent import Kernel

from tests.kernels import with_add

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.openai"]


@pytest.fixture
def kernel():
    """A fresh isolated kernel with offline providers, parsers and actions, plus an `add` tool."""
    k = with_add(Kernel(plugins=PLUGINS, entry_points=False, strict=True))
    yield k
    k.close()


def qa_spec(**over):
    spec = {"type": "customize", "name": "QA", "prompt": "Answer: {question}",
            "inputs": [{"name": "question", "type": "string"}],
            "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"}
    spec.update(over)
    return spec
