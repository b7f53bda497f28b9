"""``BuiltinRegister``: the ``register`` callable a registration hook gets for one built-in kind; entries go to
the plugin's ``sink``, merged later with the registry's clash checks."""

from __future__ import annotations

from typing import Any

import attrs

from ..errors import PluginError
from .registries import KINDS, Entry
from .._tools.tool import Tool


class BuiltinRegister:
    """The ``register`` callable handed to one plugin's registration hook."""

    def __init__(self, kind: str, plugin: str, sink: list[tuple[str, Entry]]):
        self.kind, self.plugin, self.sink = kind, plugin, sink

    def __call__(self, name_or_obj: Any, obj: Any = None, *, override: bool = False, **options: Any) -> Any:
        if self.kind == "tools":  # register(fn, name=..., ...) or register("name", fn, ...)
            name = options.pop("name", None)
            if obj is not None and name is None:
                name, obj = (name_or_obj, obj) if isinstance(name_or_obj, str) else (obj, name_or_obj)
                return self._tool(obj, name, override=override, **options)
            return self._tool(name_or_obj, name, override=override, **options)
        if options:
            raise PluginError(f"unexpected options {sorted(options)} when registering {self.kind}", plugin=self.plugin)
        if not isinstance(name_or_obj, str) or not name_or_obj or ":" in name_or_obj:
            raise PluginError(
                f"plugin {self.plugin!r} registered a {KINDS[self.kind][1]} with invalid name {name_or_obj!r}; "
                "use a non-empty string without ':'", plugin=self.plugin)
        if obj is None:
            raise PluginError(f"plugin {self.plugin!r} registered {name_or_obj!r} without an object", plugin=self.plugin)
        self.sink.append((self.kind, Entry(name_or_obj, obj, self.plugin, override)))
        return obj

    def _tool(self, tool: Any, name: Any = None, *, override: bool = False, **options: Any) -> Tool:
        changes = {k: v for k, v in options.items() if v is not None}
        if not isinstance(tool, Tool):
            tool = Tool.from_function(tool, name=name, **changes)
        elif name or options:
            tool = attrs.evolve(tool, **changes, **({"name": name} if name else {}))
        made: Tool = tool
        self.sink.append(("tools", Entry(made.name, made, self.plugin, override)))
        return made
