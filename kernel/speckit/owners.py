"""``code_owners``: the modules whose code runs when an object a spec's import path names is called (the trust rule of
``zagent.speckit.trust`` refuses a path through a trusted module that ends in an untrusted module's code)."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import sysconfig
from typing import Any

__all__ = ["code_owners"]


def code_owners(obj: Any, depth: int = 0) -> list[str]:
    """The modules whose code runs when ``obj`` is called (or, a module, that is it): a function's or class's own;
    a bound C method's object's type; through a callable object, what it wraps (a ``functools.partial``'s function
    and the callables it binds, a ``staticmethod``'s function, a ``Tool``'s handler, an ``lru_cache``'s function)
    and its class with the classes its ``__call__`` comes from (and the code assigned as it); a class's own module
    with the code its metaclass's ``__call__``, its ``__new__`` and its ``__init__`` come from."""
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
    if inspect.isclass(obj):  # calling it runs its metaclass's __call__, then its __new__ and __init__
        called = [_defined(type(obj), "__call__"), _defined(obj, "__new__"), _defined(obj, "__init__")]
        inherited = (o for f in called if f is not None and not _namedtuple_new(f) for o in code_owners(f, depth + 1))
        owners = [obj.__module__, *(o for o in inherited if o == obj.__module__ or not _installed(o))]
        return list(dict.fromkeys(o for o in owners if isinstance(o, str)))
    if inspect.isroutine(obj):
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
    calls = [c for c in kind.__mro__ if "__call__" in vars(c) and c is not object]
    return list(dict.fromkeys([kind.__module__, *(c.__module__ for c in calls),
                               *(o for c in calls[:1] for o in code_owners(vars(c)["__call__"], depth + 1))]))


def _installed(name: Any) -> bool:
    """Is module ``name`` the standard library's or an installed distribution's (built in, or its file in the
    interpreter's library folders)? A class's constructor inherited from one (``pydantic.BaseModel``,
    ``enum.Enum``) is the class author's choice, not code a spec brought in."""
    mod = sys.modules.get(name) if isinstance(name, str) else None
    if mod is None:
        return False
    path = getattr(mod, "__file__", None)
    if path is None:
        return name in sys.builtin_module_names or name in sys.stdlib_module_names
    return os.path.realpath(str(path)).startswith(_library_folders())


def _namedtuple_new(f: Any) -> bool:
    """Is ``f`` the ``__new__`` ``collections.namedtuple`` writes (module ``namedtuple_<name>``, its own globals)?"""
    f = getattr(f, "__func__", f)  # a staticmethod's function
    names = set(getattr(f, "__globals__", {}))
    return getattr(f, "__name__", None) == "__new__" and names == {"_tuple_new", "__builtins__", "__name__"}


@functools.lru_cache(maxsize=1)
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.join(os.path.realpath(paths[k]), "") for k in ("stdlib", "platstdlib", "purelib", "platlib"))


def _defined(cls: type, name: str) -> Any:
    """What ``name`` is in the first class of ``cls``'s MRO defining it (``None``: a built-in type's own, e.g.
    ``object.__init__`` or ``type.__call__``, which runs no module's code)."""
    owner = next((c for c in cls.__mro__ if name in vars(c)), None)
    return None if owner is None or owner.__module__ == "builtins" else vars(owner)[name]
