"""Old import path of ``zagent.plugins.batch.files``: the batch input and results files moved into the batch
plugin (one release).

``from zagent.batchfiles import ...`` keeps working with a ``DeprecationWarning``; new code imports from
``zagent.plugins.batch.files``. This alias is the only reason a module of ``kernel/`` names a plugin: the
kernel core never imports it (tests/kernel/test_layout.py).
"""

from __future__ import annotations

import warnings

# mypy checks kernel/ alone, where plugins/ is not found: these names are the plugin's, typed there
from zagent.plugins.batch.files import Done, Item, ResultsFile, item_of, iter_items, read_items  # type: ignore[import-not-found]

warnings.warn("zagent.batchfiles is deprecated and will be removed in the next release; "
              "import zagent.plugins.batch.files instead", DeprecationWarning, stacklevel=2)

__all__ = ["Done", "Item", "ResultsFile", "item_of", "iter_items", "read_items"]
