"""Kernel set-ups several test folders share (``from tests.kernels import ...``; tests/conftest.py puts the
repository root on ``sys.path`` so ``tests.kernels`` and ``tests.servers`` import however pytest is started)."""

from __future__ import annotations

from zagent import Kernel

#: the built-in provider plugins: what the HTTP-layer and provider tests load, and nothing else
PROVIDERS = ("zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def with_add(kernel: Kernel) -> Kernel:
    """``kernel`` with the ``add`` tool registered (the tool the loop and robustness tests call)."""
    kernel.add_tool(add)
    return kernel


def with_wipe(kernel: Kernel) -> list[str]:
    """Register ``wipe``, a destructive tool that must never run; returns the list of paths it was run on."""
    runs: list[str] = []

    def wipe(path: str = "/") -> str:
        """Delete everything under path."""
        runs.append(path)
        return "wiped"

    kernel.add_tool(wipe)
    return runs
