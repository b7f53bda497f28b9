"""Old import path of ``zagent.plugins.batch.driver``: the batch driver moved into the batch plugin (one release).

``from zagent.batch import ...`` keeps working with a ``DeprecationWarning``; new code imports from
``zagent.plugins.batch.driver`` (``Job`` is also in ``zagent.executors``). This alias is the only reason a
module of ``kernel/`` names a plugin: the kernel core never imports it (tests/kernel/test_layout.py).
"""

from __future__ import annotations

import warnings

# mypy checks kernel/ alone, where plugins/ is not found: these names are the plugin's, typed there
from zagent.plugins.batch.driver import (  # type: ignore[import-not-found]
    AGENT_RUNNER, WORKER_AGENTS, BatchReport, Job, Summary, abatch, agent_item, make_job, run_agent_item)

warnings.warn("zagent.batch is deprecated and will be removed in the next release; "
              "import zagent.plugins.batch.driver instead", DeprecationWarning, stacklevel=2)

__all__ = ["AGENT_RUNNER", "BatchReport", "Job", "Summary", "WORKER_AGENTS", "abatch", "agent_item", "make_job",
           "run_agent_item"]
