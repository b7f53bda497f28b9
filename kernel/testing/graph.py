"""``references_to``: the attribute paths under an object, a few levels down, holding an instance of a class
(read from ``__dict__``, every ``__slots__``, containers' items at the same level, a bound method's ``__self__``
and closure cells). The conformance suites check with it that a provider's model keeps no ``Kernel``.
"""

from __future__ import annotations

from typing import Any, Iterator

_LEAVES = (str, bytes, int, float, complex, bool, type(None))


def references_to(obj: Any, cls: type, depth: int = 2) -> list[str]:
    """The attribute paths (``http.limiter``) under ``obj``, at most ``depth`` attributes down, whose value is
    an instance of ``cls`` (``obj`` itself is not counted)."""
    found: list[str] = []
    seen: set[int] = {id(obj)}
    level = [("", obj)]
    for _ in range(depth):
        below = []
        for path, value in level:
            for name, child in _children(value):
                where = f"{path}.{name}" if path else name
                if isinstance(child, cls):
                    found.append(where)
                elif id(child) not in seen and not isinstance(child, _LEAVES):
                    seen.add(id(child))
                    below.append((where, child))
        level = below
    return found


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    for name, value in _attributes(obj):
        yield from _through(name, value, 0)


def _attributes(obj: Any) -> Iterator[tuple[str, Any]]:
    names: dict[str, None] = {}
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            names.setdefault(name, None)
    for name in names:
        if name not in ("__dict__", "__weakref__"):
            try:
                yield name, object.__getattribute__(obj, name)
            except AttributeError:
                continue
    try:
        yield from vars(obj).items()
    except TypeError:  # no __dict__
        pass
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(obj, type):
        yield "__self__", owner
    for i, cell in enumerate(getattr(obj, "__closure__", None) or ()):
        try:
            yield f"<closure {i}>", cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _through(name: str, value: Any, nesting: int) -> Iterator[tuple[str, Any]]:
    """``value``, or the items of a container (nested containers too, a little way)."""
    if isinstance(value, dict) and nesting < 3:
        for key, item in list(value.items())[:1000]:
            yield from _through(f"{name}[{key!r}]", key, nesting + 1)
            yield from _through(f"{name}[{key!r}]", item, nesting + 1)
    elif isinstance(value, (list, tuple, set, frozenset)) and nesting < 3:
        for i, item in enumerate(list(value)[:1000]):
            yield from _through(f"{name}[{i}]", item, nesting + 1)
    else:
        yield name, value
