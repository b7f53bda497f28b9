"""Routers and state reducers, resolved once per run. A router is pure, ``router(values) -> str | list[str] | None``;
``choose`` refuses a pick outside the edge's ``targets`` (``ConfigError``). A reducer is ``reducer(old, new) ->
value``; built in: ``replace``, ``append`` (a list written adds its items, anything else one item), ``merge``
(``{**old, **new}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from zagent.errors import ConfigError

from .errors import WorkFlowError
from .graph import ConditionalEdge, StateField, resolve_callable

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel

Reducer = Callable[[Any, Any], Any]


def replace(old: Any, new: Any) -> Any:
    return new


def append(old: Any, new: Any) -> list[Any]:
    out = list(old) if isinstance(old, (list, tuple)) else ([] if old is None else [old])
    if isinstance(new, (list, tuple)):
        out.extend(new)
    else:
        out.append(new)
    return out


def merge(old: Any, new: Any) -> dict[str, Any]:
    if new is None:
        return dict(old or {})
    if not isinstance(new, dict):
        raise ConfigError(f"the 'merge' reducer needs dict values, got {type(new).__name__}")
    return {**(old or {}), **new}


BUILTIN: dict[str, Reducer] = {"replace": replace, "append": append, "merge": merge}


def reducer_for(field: StateField, kernel: Optional["Kernel"] = None) -> Reducer:
    if isinstance(field.reducer, str) and field.reducer in BUILTIN:
        return BUILTIN[field.reducer]
    found: Reducer = resolve_callable(field.reducer, f"reducer of state field {field.name!r}", kernel)
    return found


def reduce_outputs(reducers: dict[str, Reducer], values: dict[str, Any], outputs: dict[str, Any],
                   node: str) -> dict[str, Any]:
    """The new value of every field ``outputs`` writes (each through its field's reducer), without changing
    ``values``; a reducer that raises is the node's failure (``WorkFlowError`` naming the field)."""
    merged: dict[str, Any] = {}
    for key, value in outputs.items():
        reducer = reducers.get(key)
        try:
            merged[key] = reducer(values.get(key), value) if reducer else value
        except Exception as exc:
            raise WorkFlowError(f"node {node!r}: the reducer of state field {key!r} raised "
                                f"{type(exc).__name__}: {exc}; fix the reducer or the value the node writes") from exc
    return merged


def initial_state(fields: list[StateField]) -> dict[str, Any]:
    """Starting values of the state fields (a copy of each default; ``append`` starts as ``[]``)."""
    import copy

    out: dict[str, Any] = {}
    for f in fields:
        if f.default is not None:
            out[f.name] = copy.deepcopy(f.default)
        elif f.reducer == "append":
            out[f.name] = []
        elif f.reducer == "merge":
            out[f.name] = {}
    return out


def choose(edge: ConditionalEdge, router: Callable[[dict[str, Any]], Any], values: dict[str, Any]) -> list[str]:
    """The targets ``router`` picks, checked against ``edge.targets``."""
    picked = router(dict(values))
    if picked is None:
        return []
    names = [picked] if isinstance(picked, str) else list(picked)
    unknown = [n for n in names if n not in edge.targets]
    if unknown or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"router of {edge.source!r} chose {picked!r}; it may only choose among "
                          f"{', '.join(edge.targets)} (or None)")
    return names
