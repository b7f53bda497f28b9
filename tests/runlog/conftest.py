"""Fixtures for the run log tests: a kernel with the offline scenarios' plugins and the run log on."""

import pytest

from zagent import Kernel
from zagent.plugins.offline import scenarios

PLUGINS = scenarios.PLUGINS + ["zagent.plugins.runlog", "zagent.plugins.cli"]


@pytest.fixture
def log_path(tmp_path):
    return str(tmp_path / "logs.db")


@pytest.fixture
def make_logged(log_path):
    """``make_logged()``: a fresh kernel logging to ``log_path``; closed after the test."""
    made = []

    def make(**config):
        k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": log_path, **config})
        made.append(k)
        return k

    yield make
    for k in made:
        k.close()


def run_scenario(make_logged, name):
    """Run one of ``zagent.plugins.offline.scenarios`` on a logging kernel, closed afterwards."""
    k = make_logged()
    result = getattr(scenarios, name)(k)
    k.close()
    return result
