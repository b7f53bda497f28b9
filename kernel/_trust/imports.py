"""The import of a ``module:attr`` path the caller already trusts (``import_path``, e.g. a plugin named by a
string); failures are ``ConfigError``s with file and line. Whether a spec may name one is ``zagent.speckit.trust``.
"""

from __future__ import annotations

import importlib
import traceback
from typing import Any

from ..errors import ConfigError


def split_path(value: Any, key: str, *, module_ok: bool = False) -> tuple[str, str]:
    """``(module, attr)`` of an import path ``package.module:attr`` (``attr`` may be empty with
    ``module_ok``: the module itself); ``ConfigError`` for anything else."""
    if not isinstance(value, str) or "\x00" in value:
        raise ConfigError(f"{key} {value!r} is not an import path; write it as 'package.module:function'")
    module, sep, attr = value.strip().partition(":")
    module, attr = module.strip(), attr.strip()
    if module_ok and not attr:
        sep, attr = ":", ""
    if (not sep or not module or (not attr and not module_ok) or module.startswith(".")
            or not all(p.isidentifier() for p in module.split("."))
            or not all(p.isidentifier() for p in attr.split(".") if p or not module_ok)):
        raise ConfigError(f"{key} {value!r} is not an import path; write it as 'package.module:function' "
                          "(an absolute module name, no relative '.module')")
    return module, attr


def import_path(value: str, key: str = "import path") -> Any:
    """Import ``module:attr`` (or a bare ``module``) the caller already trusts, with no check; failures are
    ``ConfigError``s with file and line."""
    module, attr = split_path(value, key, module_ok=True)
    return import_attr(module, attr, value, key)


def import_attr(module: str, attr: str, value: str, key: str) -> Any:
    """Import ``module`` and get the dotted ``attr`` from it; failures are ``ConfigError``s naming ``key`` and
    ``value`` with file and line."""
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name and (module + ".").startswith(exc.name + "."):
            raise ConfigError(f"cannot import {key} {value!r}: no module named {exc.name!r}") from None
        raise ConfigError(f"cannot import {key} {value!r}: {_where(exc)}") from None
    except SyntaxError as exc:
        raise ConfigError(f"cannot import {key} {value!r}: {exc.filename}:{exc.lineno}: SyntaxError: "
                          f"{exc.msg}") from None
    except Exception as exc:  # the module's own top-level code raised
        raise ConfigError(f"cannot import {key} {value!r}: {_where(exc)}") from None
    for part in filter(None, attr.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"cannot import {key} {value!r}: module {module!r} has no attribute "
                              f"{attr!r}") from None
    return obj


def _where(exc: BaseException) -> str:
    """``file:line: Type: message`` of the innermost frame of an import failure."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "importlib" not in f.filename and "<frozen" not in f.filename]
    last = inner or list(frames)
    at = f"{last[-1].filename}:{last[-1].lineno}: " if last else ""
    return f"{at}{type(exc).__name__}: {exc}"
