"""Spec files: ``load_spec_file`` reads ``.json`` or ``.yaml``/``.yml`` and checks size, nesting and text."""

from __future__ import annotations

import os
from typing import Any, Union

from ..errors import ConfigError

def load_spec_file(path: "Union[str, os.PathLike[str]]") -> dict[str, Any]:
    """The mapping in a ``.json`` or ``.yaml``/``.yml`` spec file; any problem is a ``ConfigError`` naming the file
    (syntax errors with line and column)."""
    from .limits import MAX_DEPTH, MAX_SPEC_BYTES, data_problem

    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"expected a spec (a dict) or the path of a .json/.yaml spec file, got "
                          f"{type(path).__name__} {short_repr(path)}")
    p = os.fspath(path)
    if isinstance(p, bytes) or "\x00" in p:
        raise ConfigError(f"spec file path {short_repr(p)} is not a usable path (bytes or a NUL character)")
    try:  # O_NONBLOCK: opening a FIFO (or a device) must not hang before it is refused
        with open(regular_file(p, "spec file"), "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read spec file {p!r}: {exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise ConfigError(f"{p} is larger than {MAX_SPEC_BYTES // 2**20} MiB; a spec file that big is not a "
                          "spec (keep data in files the agent's tools read)")
    try:
        data = _load_yaml(p, raw) if p.endswith((".yaml", ".yml")) else _load_json(p, raw)
    except RecursionError:
        raise ConfigError(f"{p}: nested deeper than Python can read (a spec needs at most {MAX_DEPTH} "
                          "levels of lists and mappings)") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p} must hold an object (a mapping), got {type(data).__name__}")
    problem = data_problem(data)
    if problem is not None:
        raise ConfigError(f"{p}: {problem}")
    return data


def _load_json(p: str, raw: bytes) -> Any:
    import msgspec

    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{p}{_json_position(raw, str(exc))}: not valid JSON: {exc}") from None


def _load_yaml(p: str, raw: bytes) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigError(f"{p} is YAML; install the extra: pip install 'zagent[yaml]'") from None
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        raise ConfigError(f"{p}{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")) from None


def _json_position(raw: bytes, message: str) -> str:
    """``:line:column`` of msgspec's ``(byte N)`` in a decode error, or ``""``."""
    import re

    found = re.search(r"\(byte (\d+)\)", message)
    if found is None:
        return ""
    offset = min(int(found.group(1)), len(raw))
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f":{line}:{column}"


def regular_file(p: str, what: str) -> int:
    """A read-only file descriptor of ``p`` if it is a regular file (opened without blocking, so a FIFO or a
    device cannot hang the reader); else ``ConfigError`` saying what it is."""
    import stat

    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(p, os.O_RDONLY | nonblock | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
        raise ConfigError(f"{what} {p!r} is {kind}, not a regular file; zagent reads only regular files (a FIFO "
                          "or a device could hang the load or never end). Name a regular file")
    if nonblock:
        os.set_blocking(fd, True)
    return fd


def short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
