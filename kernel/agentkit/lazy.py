"""``lazy_exports``: a package's public names, imported from its submodules on first use.

Plugin packages must be cheap to import (``Kernel()`` imports every installed
plugin), yet users want ``from zagent.plugins.react import ReActLoop``. A
package sets ``__getattr__ = lazy_exports(__name__, {"ReActLoop": "loop", ...})``
(PEP 562): the submodule is imported only when the name is first read.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving ``name`` from ``package.<exports[name]>``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
