"""Fixtures of the provider tests: a fresh, isolated Kernel per test (the loopback servers are in tests/servers)."""

from __future__ import annotations

import pytest

from tests.kernels import PROVIDERS


@pytest.fixture
def kernel(make_kernel):
    """A kernel with only the built-in provider plugins (``tests.kernels.PROVIDERS``), closed after the test."""
    return make_kernel(*PROVIDERS, strict=False)


@pytest.fixture
def offline(make_kernel):
    """A kernel with the offline providers only."""
    return make_kernel("zagent.plugins.offline", strict=False)
