"""Shared test set-up for the whole suite.

Fixtures for kernels come from the ``zagent.testing`` pytest plugin
(``make_kernel``, ``zagent_kernel``, ``zagent_recorder``). Here: every test
starts from an environment without zagent's variables, so a developer's
``ZAGENT_MODEL`` or ``ZAGENT_PLUGINS`` never changes what a test sees, and the
repository root is on ``sys.path`` so the shared helpers (``tests.servers``,
the loopback servers; ``tests.kernels``) import however pytest is started.
"""

import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# No per-example deadline and no "too slow" health check: CI shares 2 cores with other
# jobs, and a slow example there says nothing about the code. (Explicit settings win.)
settings.register_profile("zagent-ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("zagent-ci")

ZAGENT_ENV = ("ZAGENT_MODEL", "ZAGENT_PLUGINS", "ZAGENT_DISABLE_PLUGINS", "ZAGENT_STRICT", "ZAGENT_TRACE_HOOKS",
              "ZAGENT_LOG", "ZAGENT_PROGRESS_INTERVAL")


@pytest.fixture(scope="session")
def _run_log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runlog")


@pytest.fixture(autouse=True)
def _clean_zagent_env(monkeypatch, _run_log_dir):
    for name in ZAGENT_ENV:
        monkeypatch.delenv(name, raising=False)
    # the CLI keeps a run log by default: tests that start it write here, not in the home directory
    monkeypatch.setenv("ZAGENT_LOG_DB", str(_run_log_dir / "logs.db"))
    # and what zagent keeps in the user's data folder (the answer key, default recordings) goes here too
    monkeypatch.setenv("XDG_DATA_HOME", str(_run_log_dir / "data"))


@pytest.fixture
def saved_states(monkeypatch):
    """Every checkpoint a ``StepLog`` writes (ReAct, workflow, group chat), as the whole state by ``(run_id,
    step)``, encoded when its patch or full save is built: what the store must read back."""
    from zagent.agentkit.steplog import StepLog

    seen = {}
    original = StepLog.asave

    async def spy(self, store, run_id, step, state, **kw):
        seen[(run_id, step)] = msgspec.json.encode(state, enc_hook=repr)
        await original(self, store, run_id, step, state, **kw)

    monkeypatch.setattr(StepLog, "asave", spy)
    return seen
