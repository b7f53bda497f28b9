"""Tool references in specs, one rule for every agent kind: ``resolve_tool_refs`` turns a ``tools`` list of
registered names, ``"toolset:NAME"`` (its tools; at least one must exist) and ``"package.module:function"``
(imported only when trusted, ``zagent.speckit.trust``, and registered; left out under a dry trust) into registered
tool names. A bad reference is a ``ConfigError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from ..errors import ConfigError, ToolError

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["TOOLSET_PREFIX", "resolve_tool_refs"]

TOOLSET_PREFIX = "toolset:"


def resolve_tool_refs(kernel: "Kernel", refs: Iterable[str], *, base_dir: Optional[str] = None,
                      key: str = "tool") -> list[str]:
    """The registered tool names ``refs`` stand for, in order and without duplicates (see the module docstring)."""
    names: list[str] = []
    for ref in refs:
        for name in _resolve_one(kernel, ref, base_dir, key):
            if name not in names:
                names.append(name)
    return names


def _resolve_one(kernel: "Kernel", ref: str, base_dir: Optional[str], key: str) -> list[str]:
    if not isinstance(ref, str) or not ref.strip():
        raise ConfigError(f"{key} {ref!r} is not a tool reference; give a registered name, 'toolset:NAME' or "
                          "'package.module:function'")
    reg = kernel.registries["tools"]
    if ref.startswith(TOOLSET_PREFIX):
        toolset = ref[len(TOOLSET_PREFIX):].strip()
        found = [t.name for t in kernel.tools(toolset=toolset, available_only=False)]
        if not found:
            sets = sorted({t.toolset for t in reg.values() if t.toolset})
            raise ConfigError(f"{key} {ref!r}: toolset {toolset!r} has no tools; toolsets: {', '.join(sets) or 'none'}")
        return found
    if ":" not in ref:
        try:
            kernel.tool(ref)  # the kernel's look-up: waits for a tool source still connecting (MCP) on a miss
        except ToolError:
            raise ConfigError(f"unknown tool {ref!r}; registered tools: {', '.join(reg) or 'none'}. Use a registered "
                              "name, 'toolset:NAME' or an import path 'package.module:function'") from None
        return [ref]
    from ..speckit.trust import NotImported, resolve

    fn = resolve(ref, key=key, kernel=kernel, base_dir=base_dir)
    if isinstance(fn, NotImported):  # a read-only command (agent show): nothing imported or registered
        return []
    name = str(getattr(fn, "name", None) or getattr(fn, "__name__", ref.rsplit(":", 1)[-1]))
    existing = reg.get(name)
    if existing is not None:
        if existing.handler is fn or existing is fn or getattr(fn, "handler", None) is existing.handler:
            return [name]
        raise ConfigError(f"{key} {ref!r} is named {name!r}, which another tool already uses")
    return [kernel.add_tool(fn).name]
