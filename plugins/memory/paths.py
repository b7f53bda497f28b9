"""Where long-term memory lives when no ``path=`` is given.

``$ZAGENT_MEMORY_DB`` if set, else ``$XDG_DATA_HOME/zagent/memory.db``
(``~/.local/share/zagent/memory.db``). The ``sqlite`` and ``checkpoints``
factories and the ``zagent memory`` commands share this rule, so an agent
with ``use_long_term_memory=True`` and the CLI look at the same file.
"""

from __future__ import annotations

import os
from typing import Union


def default_path() -> str:
    """The default memory file (its directory is not created here)."""
    from zagent.agentkit.privatefiles import users_path

    return users_path("ZAGENT_MEMORY_DB", "memory.db")


def resolve(path: Union[str, os.PathLike[str], None]) -> str:
    """``path`` as a string, or the default file with its directory created."""
    if path is not None:
        return os.fspath(path)
    from zagent.agentkit.privatefiles import private_folder, tighten

    chosen = default_path()
    private_folder(os.path.dirname(chosen) or ".")  # created 0700: it holds what agents remember
    tighten(chosen)  # and one an older zagent made 0644 in 0755 becomes the user's alone
    return chosen
