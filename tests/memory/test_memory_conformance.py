"""Both built-in backends pass the conformance suite third parties use (zagent.testing.memory)."""

from zagent import Kernel
from zagent.testing.memory import MemoryBackendTests


def memory_kernel():
    return Kernel(plugins=["zagent.plugins.memory"], entry_points=False)


class TestInProcessConformance(MemoryBackendTests):
    def make_memory(self, tmp_path):
        return memory_kernel().memory("inprocess")


class TestSqliteConformance(MemoryBackendTests):
    def make_memory(self, tmp_path):
        return memory_kernel().memory("sqlite", path=str(tmp_path / "conformance.db"))
