"""``code_owners``: the modules whose code runs when an object a spec's import path names is called (the trust rule of
``zagent.speckit.trust`` refuses a path through a trusted module that ends in an untrusted module's code)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

__all__ = ["code_owners"]


def code_owners(obj: Any, depth: int = 0) -> list[str]:
    """The modules whose code runs when ``obj`` is called (or, a module, that is it): a function's or class's own;
    a bound C method's object's type; through a callable object, what it wraps (a ``functools.partial``'s function
    and the callables it binds, a ``staticmethod``'s function, a ``Tool``'s handler, an ``lru_cache``'s function)
    and its class with the classes its ``__call__`` comes from."""
    from .._tools.tool import Tool  # (not at import: the kernel imports this package first)

    if depth > 8:  # wrappers of wrappers: refused rather than followed for ever
        return ["<a chain of wrapped callables>"]
    if inspect.ismodule(obj):
        return [obj.__name__]
    if isinstance(obj, (functools.partial, functools.partialmethod)):
        given = [*obj.args, *obj.keywords.values()]
        return [o for f in (obj.func, *(b for b in given if callable(b))) for o in code_owners(f, depth + 1)]
    if isinstance(obj, (staticmethod, classmethod)):
        return code_owners(obj.__func__, depth + 1)
    if isinstance(obj, Tool):
        return code_owners(obj.handler, depth + 1)
    if inspect.isroutine(obj) or inspect.isclass(obj):
        owner: Any = getattr(obj, "__module__", None)
        bound = getattr(obj, "__self__", None) if owner is None and inspect.isroutine(obj) else None
        if bound is not None:  # a C method of an object (sqlite3's execute, a list's append): its type's code
            owner = bound.__name__ if inspect.ismodule(bound) else type(bound).__module__
        return [owner] if isinstance(owner, str) else []
    if not callable(obj):
        return []
    kind = type(obj)
    wrapped = getattr(obj, "__wrapped__", None) if kind.__module__ == "functools" else None
    if wrapped is not None:  # functools' own wrappers (lru_cache, cache): the function they call
        return code_owners(wrapped, depth + 1)
    return list(dict.fromkeys([kind.__module__, *(c.__module__ for c in kind.__mro__
                                                   if "__call__" in vars(c) and c is not object)]))
