"""Fixtures of the provider tests: a fresh, isolated Kernel per test and the loopback servers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # make ``tests.servers`` importable however pytest is started
    sys.path.insert(0, str(ROOT))

from zagent import Kernel  # noqa: E402


@pytest.fixture
def kernel():
    """A kernel with only the built-in provider plugins, closed after the test."""
    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.anthropic",
                        "zagent.plugins.ollama"], entry_points=False)
    yield k
    k.close()


@pytest.fixture
def offline():
    """A kernel with the offline providers only."""
    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False)
    yield k
    k.close()
