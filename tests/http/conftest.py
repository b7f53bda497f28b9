"""Fixtures of the HTTP-layer tests: a fresh kernel with the provider plugins only (``tests.kernels.PROVIDERS``)."""

from __future__ import annotations

import pytest

from tests.kernels import PROVIDERS


@pytest.fixture
def kernel(make_kernel):
    """A kernel with the offline, openai, anthropic and ollama providers only, closed after the test."""
    return make_kernel(*PROVIDERS, strict=False)


@pytest.fixture(autouse=True)
def _no_env_timeout(monkeypatch):
    """Tests set ZAGENT_TIMEOUT themselves when they need it."""
    monkeypatch.delenv("ZAGENT_TIMEOUT", raising=False)
