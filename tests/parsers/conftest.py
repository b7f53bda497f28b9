"""Fixtures for the parsers plugin tests: a fresh isolated kernel with only the parsers plugin."""

import pytest
from zagent import Kernel

PLUGIN = "zagent.plugins.parsers"


@pytest.fixture
def kernel():
    k = Kernel(plugins=[PLUGIN], entry_points=False, strict=True)
    yield k
    k.close()
