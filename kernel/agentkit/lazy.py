"""``lazy_exports(package, {name: submodule})``: a PEP 562 module ``__getattr__`` that imports a package's public
name from its submodule when the name is first read, so plugin packages stay cheap to import; an unknown name is an
``AttributeError``.
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
