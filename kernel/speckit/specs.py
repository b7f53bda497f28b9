"""A spec mapping (e.g. from ``zagent.speckit.load_spec_file``) as its kind's Struct (``convert_spec``): size, nesting and
text are checked before anything recurses on it, and its counts after (``zagent.speckit.sizes``); every problem is
a ``ConfigError`` naming the spec.
"""

from __future__ import annotations

from typing import Any, TypeVar

from .._model.resolve import short_repr
from ..errors import ConfigError

__all__ = ["convert_spec", "public_spec", "spec_repr"]

S = TypeVar("S")


def convert_spec(data: Any, struct: "type[S]", what: str) -> S:
    """``data`` (a mapping, e.g. from ``load_spec_file``) as the Struct ``struct``; anything else, or a
    field of the wrong type, is a ``ConfigError`` naming ``what`` and the spec's name."""
    import msgspec

    from .._trust.limits import data_problem

    if not isinstance(data, dict):
        raise ConfigError(f"a {what} must be a mapping, got {type(data).__name__}")
    problem = data_problem(data)  # nesting, size, text that is not Unicode: before anything recurses on it
    if problem is not None:
        raise ConfigError(f"invalid {what} {short_repr(data.get('name', '?'))}: {problem}")
    try:
        spec = msgspec.convert(data, struct)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid {what} {data.get('name', '?')!r}: {exc}") from None
    from .sizes import check_sizes

    check_sizes(spec, what)  # counts are resources: bounded (zagent.speckit.sizes)
    return spec


def public_spec(spec: S) -> S:
    """A copy of the spec Struct ``spec`` to keep and show (``agent.spec``): each mapping or list field holding a
    secret (an ``api_key``, a secret-named header, URL userinfo or a ``?key=``: ``public_data``) holds its public
    form instead, so ``msgspec.json.encode``/``to_builtins`` of it show none; other fields are ``spec``'s own."""
    import msgspec

    from ..agentkit.secrets import public_data

    changed = {}
    for name in type(spec).__struct_fields__:  # type: ignore[attr-defined]
        value = getattr(spec, name)
        if isinstance(value, (dict, list)) and value:
            plain = msgspec.to_builtins(value, enc_hook=repr)
            public = public_data(plain)
            if public != plain:
                changed[name] = public
    return msgspec.structs.replace(spec, **changed) if changed else spec  # type: ignore[type-var]


def spec_repr(spec: Any) -> str:
    """The repr of a spec Struct without its secrets: a mapping or list field (``llm_config``, inline ``agents``,
    ``nodes``) is shown as ``public_data`` (no ``api_key``, no secret-named header, URL userinfo masked), so a
    spec logged or shown in a traceback never carries the key a spec file holds."""
    import msgspec

    from ..agentkit.secrets import public_data

    parts = []
    for name in type(spec).__struct_fields__:
        value = getattr(spec, name)
        if isinstance(value, (dict, list)):
            value = public_data(msgspec.to_builtins(value, enc_hook=repr))
        elif isinstance(value, msgspec.Struct):
            value = public_data(msgspec.to_builtins(value, enc_hook=repr))
        parts.append(f"{name}={value!r}")
    return f"{type(spec).__name__}({', '.join(parts)})"
