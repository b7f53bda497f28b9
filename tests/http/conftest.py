"""Fixtures of the HTTP-layer tests: a fresh kernel with the network providers, and an ``llm`` maker."""

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
    """A kernel with the openai, anthropic and ollama providers only, closed after the test."""
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama",
                        "zagent.plugins.offline"], entry_points=False)
    yield k
    k.close()


@pytest.fixture(autouse=True)
def _no_env_timeout(monkeypatch):
    """Tests set ZAGENT_TIMEOUT themselves when they need it."""
    monkeypatch.delenv("ZAGENT_TIMEOUT", raising=False)
