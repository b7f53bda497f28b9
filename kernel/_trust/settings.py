"""The secrets in the app's own settings: ``config_masker`` (a ``Masker`` of the secret-named values of a kernel's
``config`` and a run's ``deps``, for error paths) and ``masked_settings`` (a call's options as
``repr(LLMRequest)`` shows them). Plugins import ``config_masker`` from ``zagent.agentkit.secrets``."""

from __future__ import annotations

import itertools
import types
from typing import Any, Optional

from .secrets import MASK, Masker, Secret, env_secrets, looks_secret, mask_pieces


class SettingsMasker(Masker):
    """A ``Masker`` that also masks runs of its values cut short, in another case or encoded (``mask_pieces``):
    a client quoting the app's token upper-cased, hex-dumped or as ``gh-abc...``. For error texts."""

    __slots__ = ("secrets",)

    def __init__(self, values: Any = ()):
        super().__init__(values)
        self.secrets = tuple(values)

    def __call__(self, text: str) -> str:
        return mask_pieces(super().__call__(text), self.secrets)


def config_masker(config: Any) -> Masker:
    """A ``Masker`` of the environment's secrets and of the secret-named values (and ``Secret`` objects) in a
    kernel's ``config`` (or a tuple of it and a run's ``deps``; an object's fields, ``__dict__`` or slots, read as
    a mapping, also of objects inside): a plugin or tool failing quotes the token the app gave it. Error paths only."""
    return SettingsMasker([*env_secrets(), *_setting_secrets(config, False, 32)])


def run_settings(ctx: Any) -> tuple[Any, Any, Any]:
    """The app's settings a run ``ctx`` sees, for ``config_masker``: the kernel's config, the run's
    ``agent_config`` (a plugin's per-agent settings) and its ``deps``."""
    return (getattr(getattr(ctx, "kernel", None), "config", None), getattr(ctx, "agent_config", None),
            getattr(ctx, "deps", None))


#: the most values ``config_masker`` reads of a config and deps (an app's deps may hold a large cache)
MAX_SETTINGS = 10_000
#: objects whose fields are no app settings (a module's globals, a class's attributes, a function's)
_NOT_SETTINGS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _setting_secrets(value: Any, under: bool, depth: int) -> list[str]:
    """The values of ``value`` (settings) that are secret: a ``Secret`` (or pydantic ``SecretStr``), text or bytes
    under a secret-named key (in a ``*headers`` mapping, a name saying key, token, auth... anywhere); an object's
    fields are read as a mapping's items; at most ``MAX_SETTINGS`` values read, each container once."""
    out: list[str] = []
    todo: list[_Item] = [(value, under, depth, False)]
    budget, seen = MAX_SETTINGS, set[int]()
    while todo and budget > 0:
        budget -= 1
        try:
            found, more = _read(todo.pop(), seen, budget)
        except Exception:  # an app object failing when read is skipped: this runs while an error is shown
            continue
        out += found
        todo += more
    return out


#: a value to read: ``(value, under a secret name, depth left, in a headers mapping)``
_Item = tuple[Any, bool, int, bool]


def _read(item: _Item, seen: set[int], budget: int) -> tuple[list[str], list[_Item]]:
    """The secrets ``item`` holds itself and the items inside it to read next (types by ``type()``: no
    ``__class__`` or ``__getattribute__`` of an app's proxy runs)."""
    value, under, depth, headers = item
    kind = type(value)
    if issubclass(kind, Secret):
        return [value.reveal()], []
    if _declared_secret(value):  # pydantic's ``SecretStr``/``SecretBytes`` (pydantic-settings), any name
        shown = value.get_secret_value()
        return ([shown.decode("utf-8", "replace") if isinstance(shown, bytes) else shown]
                if isinstance(shown, (str, bytes)) else []), []
    if issubclass(kind, str):
        return ([value] if under else []), []
    if issubclass(kind, (bytes, bytearray)):
        return ([bytes(value).decode("utf-8", "replace")] if under else []), []
    if depth <= 0 or id(value) in seen:
        return [], []
    if issubclass(kind, (dict, types.MappingProxyType)):  # a read-only view of the app's settings too
        seen.add(id(value))
        return [], [(v, under or _secret_setting(name, headers), depth - 1, str(name).lower().endswith("headers"))
                    for name, v in itertools.islice(value.items(), budget)]
    if issubclass(kind, (list, tuple, set, frozenset)):
        seen.add(id(value))
        return [], [(v, under, depth - 1, False) for v in itertools.islice(value, budget)]
    fields = _fields(value)
    if fields is None:
        return [], []
    seen.add(id(value))
    return [], [(v, under or _secret_setting(name, False), depth - 1, False)
                for name, v in itertools.islice(fields, budget)]


def _declared_secret(value: Any) -> bool:
    """A value its library declares secret: pydantic's ``SecretStr`` and ``SecretBytes`` (read through their
    ``get_secret_value``), whatever the setting's name."""
    return type(value).__name__ in ("SecretStr", "SecretBytes") and callable(getattr(type(value), "get_secret_value",
                                                                                   None))


def _fields(value: Any) -> Optional[Any]:
    """An app object's fields as ``(name, value)`` pairs: its ``__dict__`` and its slots (read through their
    descriptors, no property or ``__getattr__`` runs); ``None`` for a number, a module, a class, a function."""
    if value is None or issubclass(type(value), (int, float, complex, _NOT_SETTINGS)):
        return None
    found: list[tuple[str, Any]] = []
    try:  # not ``getattr``: a proxy's or lazy object's own ``__getattribute__`` never runs here
        own = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        own = None
    if isinstance(own, dict):
        found += list(own.items())
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots if isinstance(slots, (tuple, list)) else ():
            held = cls.__dict__.get(name)
            if isinstance(held, types.MemberDescriptorType):
                try:
                    found.append((name, held.__get__(value, cls)))
                except AttributeError:  # a slot never set
                    pass
    return found or None


def _secret_setting(name: Any, header: bool = True) -> bool:
    """A secret-named setting; ``header``: also a name saying key, token, auth... anywhere (``X-Custom-Auth``)."""
    lowered = str(name).lower()
    return looks_secret(str(name)) or header and any(
        w in lowered for w in ("key", "token", "secret", "auth", "cookie", "passw"))


def masked_settings(value: Any, depth: int = 32) -> Any:
    """``value`` (a call's options) with the value under every secret-named key as ``***`` (in a ``*headers``
    mapping, a name saying key, token, auth... anywhere): what ``repr(LLMRequest)`` shows."""
    if isinstance(value, dict):
        return MASK if depth <= 0 else {k: MASK if _secret_setting(k, header=False) and v not in (None, "") else
                                        masked_headers(v) if str(k).lower().endswith("headers") else
                                        masked_settings(v, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return MASK if depth <= 0 else [masked_settings(v, depth - 1) for v in value]
    return value


def masked_headers(value: Any) -> Any:
    """A mapping of HTTP headers with each secret-looking header's value as ``***``."""
    if not isinstance(value, dict):
        return masked_settings(value)
    return {k: MASK if _secret_setting(k) and v not in (None, "") else v for k, v in value.items()}
