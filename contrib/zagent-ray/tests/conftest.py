"""Fixtures for zagent-ray's tests: one local Ray instance (2 CPUs) for the session, kernels, input files.

The Ray workers find this directory's helper modules (``raytest_plugin``)
through ``PYTHONPATH`` in the runtime environment, as a cluster would through
installed packages.
"""

import json
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory",
           "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.batch", "zagent_ray.plugin", "raytest_plugin"]
RUNTIME_ENV = {"env_vars": {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """A developer's ZAGENT_* or RAY_ADDRESS never change what a test sees (the session's Ray is used)."""
    for name in ("ZAGENT_MODEL", "ZAGENT_PLUGINS", "ZAGENT_DISABLE_PLUGINS", "ZAGENT_STRICT", "ZAGENT_EXECUTOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(HERE))


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray with 2 CPUs for the whole session; yields its GCS address."""
    import ray

    os.environ.pop("RAY_ADDRESS", None)
    ray.init(num_cpus=2, runtime_env=RUNTIME_ENV, log_to_driver=False, include_dashboard=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture
def kernel(ray_cluster):
    from zagent import Kernel

    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
