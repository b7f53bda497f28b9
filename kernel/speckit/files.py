"""Spec files and ``Kernel.agent``'s builder: ``load_spec_file`` reads a ``.json`` or ``.yaml``/``.yml`` file, its
size, nesting and text checked (``ConfigError``); ``build_agent``, which the actions plugin registers, builds a spec
(a dict or a file) with its type's factory under the trust asked for, as from its file.
"""

from __future__ import annotations

import os
from typing import Any, Union

from .._model.resolve import short_repr
from .._registry.lookups import listed
from ..errors import ConfigError

__all__ = ["MAX_SPEC_BYTES", "build_agent", "load_spec_file"]

#: the most of a spec file read: a larger one is refused
MAX_SPEC_BYTES = 16 * 2**20


def build_agent(kernel: Any, spec: Any, trust: Any = None) -> Any:
    """``Kernel.agent``'s builder: ``spec`` (a dict, or the path of a spec file, read with ``load_spec_file``)
    built by the factory its ``type`` names (``"customize"`` by default) under ``trust`` (``True``, ``False``, a
    ``Trust`` or ``None``: the one in force; ``True`` for a file also searches its folder first for modules)."""
    from .paths import spec_file
    from .trust import Trust, as_trust, trusting

    source = None
    if not isinstance(spec, dict):
        if trust is True:  # as the CLI's --trust: the file's own folder is searched first for its modules
            trust = Trust.for_file(spec, everything=True)
        source = spec if isinstance(spec, (str, os.PathLike)) else None
        spec = load_spec_file(spec)
    type_name = spec.get("type", "customize")
    factory = kernel.find("agent_types", type_name) if isinstance(type_name, str) else None
    if factory is None:
        raise ConfigError(f"unknown agent type {type_name!r}; installed agent types: "
                          f"{listed(kernel.names('agent_types'))}")
    with trusting(as_trust(trust)), spec_file(source):  # paths the file names may lie next to it
        return factory(spec, kernel)


def load_spec_file(path: "Union[str, os.PathLike[str]]") -> dict[str, Any]:
    """The mapping in a ``.json`` or ``.yaml``/``.yml`` spec file; any problem is a ``ConfigError`` naming the file
    (syntax errors with line and column)."""
    from .._trust.limits import MAX_DEPTH, data_problem

    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"expected a spec (a dict) or the path of a .json/.yaml spec file, got "
                          f"{type(path).__name__} {short_repr(path)}")
    p = os.fspath(path)
    if isinstance(p, bytes) or "\x00" in p:
        raise ConfigError(f"spec file path {short_repr(p)} is not a usable path (bytes or a NUL character)")
    from ..agentkit.files import open_regular

    try:  # a FIFO (or a device) is refused without hanging; another user's symlink is not followed
        with open_regular(p, "spec file") as f:
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
        return yaml.load(raw, Loader=_bounded_loader(yaml))  # noqa: S506 - a SafeLoader, bounded
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        raise ConfigError(f"{p}{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")) from None
    except (ValueError, OverflowError) as exc:  # a value YAML reads but Python cannot hold: 5,000 digits, 2021-13-45
        raise ConfigError(f"{p}: not a usable YAML value ({type(exc).__name__}: {str(exc)[:200]}); a spec's numbers "
                          "and dates must be ordinary ones (quote the text if it is text)") from None


#: the most nodes (scalars, lists, mappings, aliases) a YAML spec may hold: PyYAML builds every node before any
#: value (2 MB of ``[1,1,...]`` took 24 s and 670 MiB), and no spec needs this many
MAX_YAML_NODES = 50_000
#: the longest number a YAML spec may write: YAML 1.1 reads ``1:59:59:...`` (base 60) in quadratic time, and
#: ``0xfff...`` into a number no setting takes and ``str()`` cannot show
MAX_YAML_NUMBER = 100
_loaders: dict[int, Any] = {}


def _bounded_loader(yaml: Any) -> Any:
    """``yaml.SafeLoader`` refusing, as it reads, more than ``MAX_YAML_NODES`` nodes and numbers longer than
    ``MAX_YAML_NUMBER`` characters (a ``ConstructorError`` with the line)."""
    if id(yaml) in _loaders:
        return _loaders[id(yaml)]

    class SpecYamlLoader(yaml.SafeLoader):  # type: ignore[misc]
        nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.nodes += 1
            if self.nodes > MAX_YAML_NODES:
                raise yaml.constructor.ConstructorError(
                    None, None, f"more than {MAX_YAML_NODES:,} values (a spec is a few settings; keep data in files "
                    "the agent's tools read)", self.peek_event().start_mark)
            return super().compose_node(parent, index)

        def construct_yaml_int(self, node: Any) -> Any:
            if len(node.value) > MAX_YAML_NUMBER:
                raise yaml.constructor.ConstructorError(
                    None, None, f"a number written with {len(node.value):,} characters (at most "
                    f"{MAX_YAML_NUMBER}; quote it if it is text)", node.start_mark)
            return super().construct_yaml_int(node)

    SpecYamlLoader.add_constructor("tag:yaml.org,2002:int", SpecYamlLoader.construct_yaml_int)
    _loaders[id(yaml)] = SpecYamlLoader
    return SpecYamlLoader


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
