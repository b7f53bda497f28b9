"""The CLI's model options, ``--profile KEY=VALUE`` (repeatable) and ``--timeout SECONDS``; ``apply`` puts them
in force and returns the undo.

``--profile`` overrides ``ModelProfile`` fields of every model used (an unknown field is a usage error);
``--timeout`` is ``ZAGENT_TIMEOUT``. ``replace_model`` is ``--model`` for agent files.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from zagent import Kernel


class ProfileAction(argparse.Action):
    """Collects ``--profile KEY=VALUE`` pairs into one dict (a later KEY wins)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, value: Any,
                 option_string: Optional[str] = None) -> None:
        from zagent.types import ModelProfile

        key, sep, text = str(value).partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            parser.error(f"{option_string} {value!r} must look like KEY=VALUE, e.g. native_tools=false")
        known = ModelProfile.__struct_fields__
        if key not in known:
            parser.error(f"{option_string} {key!r} is not a model profile field; known: {', '.join(known)}")
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest, None) or {}), key: _value(text)})


def _value(text: str) -> Any:
    text = text.strip()
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        low = text.lower()
        if low in ("yes", "on"):
            return True
        if low in ("no", "off"):
            return False
        return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: give a positive number of seconds")
    return value


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--profile KEY=VALUE`` (repeatable) and ``--timeout SECONDS`` to a command's parser."""
    parser.add_argument("--profile", action=ProfileAction, default={}, metavar="KEY=VALUE",
                        help="override a model profile field for this run (repeatable), e.g. "
                             "native_tools=false or text_tool_fallback=false")
    parser.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                        help="seconds to wait for a model's reply (default: ZAGENT_TIMEOUT, else 120); "
                             "raise it for slow local models")


def apply(args: argparse.Namespace, kernel: "Kernel") -> Callable[[], None]:
    """Put ``--profile``/``--timeout`` in force for this command; return a function undoing it."""
    undo: list[Callable[[], None]] = []
    profile = getattr(args, "profile", None)
    if isinstance(profile, dict) and profile:
        before = kernel.config.get("profile")
        kernel.config["profile"] = {**(before or {}), **profile}
        undo.append(lambda: _restore(kernel.config, "profile", before))
    timeout = getattr(args, "timeout", None)
    if isinstance(timeout, float):
        before_env = os.environ.get("ZAGENT_TIMEOUT")
        os.environ["ZAGENT_TIMEOUT"] = f"{timeout:g}"
        undo.append(lambda: _restore(os.environ, "ZAGENT_TIMEOUT", before_env))

    def restore() -> None:
        for fn in reversed(undo):
            fn()
    return restore


def _restore(mapping: Any, key: str, value: Any) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def replace_model(spec: dict[str, Any], model: Any) -> dict[str, Any]:
    """``spec`` with ``model`` as its ``llm``, keeping the rest of its ``llm_config``; says on stderr what
    it replaced (the file's model, or ``ZAGENT_MODEL``) and what it kept."""
    if not model:
        return spec
    old = spec.get("llm") or (f"ZAGENT_MODEL={os.environ['ZAGENT_MODEL']}" if os.environ.get("ZAGENT_MODEL") else None)
    config = spec.get("llm_config") or {}
    kept = f"; keeping its llm_config ({', '.join(sorted(config))})" if config else ""
    if old and old != model:
        print(f"zagent: --model {model} replaces {old}{kept}", file=sys.stderr)
    from zagent.speckit.paths import users_model

    return {**spec, "llm": users_model(model)}  # the user's choice, not the file's (its default recording file)
