"""The threads sync tools of one kernel run in: a ``ToolThreads`` made on first use from the kernel's config
(``tool_threads``, ``tool_threads_abandoned``, ``tool_threads_abandoned_per_tool``), made again in a forked
child (threads do not survive ``fork``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # pragma: no cover
    from .threads import ToolThreads


class ToolPool:
    """Holds one kernel's ``ToolThreads`` (see the module docstring)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.threads: Optional[ToolThreads] = None
        self._pid = 0

    def get(self) -> ToolThreads:
        """The tool threads of this process, created now if there are none yet."""
        if self.threads is None or self._pid != os.getpid():  # a forked child needs its own threads
            from .threads import ToolThreads  # imports asyncio: on first use

            config = self.config
            self.threads = ToolThreads(int(config.get("tool_threads", 16)), thread_name_prefix="zagent-tool",
                                       max_abandoned=int(config.get("tool_threads_abandoned", 64)),
                                       max_abandoned_per_tool=int(config.get("tool_threads_abandoned_per_tool", 8)))
            self._pid = os.getpid()
        return self.threads

    def shutdown(self) -> None:
        """Stop the threads, if any were made (running calls are not waited for)."""
        if self.threads is not None:
            self.threads.shutdown(wait=False)
