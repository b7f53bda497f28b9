"""``zagent.testing``: a kit for plugin authors, registered as a pytest plugin (``pytest11``). Fixtures:
``make_kernel``, ``zagent_plugins`` (override it), ``zagent_kernel``, ``zagent_recorder``; helpers ``HookRecorder``,
``HookCall``, ``wait_until``. Nothing is autouse and importing it loads only pytest; conformance suites are
submodules, imported by the tests that use them (docs/testing.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

# The conformance suites' plain asserts explain a failure as a test file's do (pytest rewrites them too).
pytest.register_assert_rewrite("zagent.testing.providers", "zagent.testing.parsers", "zagent.testing.memory",
                               "zagent.testing.checkpoints", "zagent.testing.tools")

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel
    from .recorder import HookRecorder

__all__ = ["HookCall", "HookRecorder", "make_kernel", "wait_until", "zagent_kernel", "zagent_plugins",
           "zagent_recorder"]


def __getattr__(name: str) -> Any:
    """Load the helpers lazily, so the pytest plugin itself stays cheap to import."""
    if name in ("HookCall", "HookRecorder"):
        from . import recorder

        return getattr(recorder, name)
    if name == "wait_until":
        from .waiting import wait_until

        return wait_until
    raise AttributeError(f"module 'zagent.testing' has no attribute {name!r}")


@pytest.fixture
def make_kernel() -> Iterator[Callable[..., "Kernel"]]:
    """Factory of fresh kernels: ``make_kernel(*plugins, entry_points=False, strict=True, config=None)``.

    Kernels are isolated (no installed plugins) and strict (a broken plugin
    raises) unless asked otherwise; every kernel made is closed after the test.
    """
    from .. import Kernel

    made: list[Kernel] = []

    def factory(*plugins: Any, entry_points: bool = False, strict: bool = True, config: Any = None) -> Kernel:
        kernel = Kernel(list(plugins), entry_points=entry_points, strict=strict, config=config)
        made.append(kernel)
        return kernel

    yield factory
    for kernel in made:
        kernel.close()


@pytest.fixture
def zagent_plugins() -> list[Any]:
    """Plugins loaded into ``zagent_kernel``. Override this fixture to test your own."""
    return []


@pytest.fixture
def zagent_kernel(make_kernel: Callable[..., "Kernel"], zagent_plugins: list[Any]) -> "Kernel":
    """A fresh, isolated, strict ``Kernel`` with ``zagent_plugins`` loaded."""
    return make_kernel(*zagent_plugins)


@pytest.fixture
def zagent_recorder(zagent_kernel: "Kernel") -> Iterator["HookRecorder"]:
    """A ``HookRecorder`` on ``zagent_kernel``, detached after the test."""
    from .recorder import HookRecorder

    recorder = HookRecorder(zagent_kernel)
    yield recorder
    recorder.finish_recording()
