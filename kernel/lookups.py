"""Look-up helpers of the Kernel facade: building what a registered factory makes, and cache keys for it."""

from __future__ import annotations

from typing import Any

from .errors import ConfigError, ZagentError


def _build(factory: Any, what: str, *args: Any, **options: Any) -> Any:
    """``factory(*args, **options)``; options of the wrong type (they often come from spec files) are a
    ``ConfigError`` naming ``what`` and the options, not a ``TypeError`` from inside a plugin."""
    try:
        return factory(*args, **options)
    except ZagentError:
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{what} does not accept these options ({', '.join(sorted(options)) or 'none'}): "
                          f"{type(exc).__name__}: {exc}; check their types against its documentation") from exc


def _cache_key(spec: str, options: dict[str, Any]) -> Any:
    try:
        key = (spec, tuple(sorted((k, _freeze(v)) for k, v in options.items())))
        hash(key)
        return key
    except TypeError:
        return None


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value
