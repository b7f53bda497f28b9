"""Tool references in specs, one rule for every agent kind: ``resolve_tool_refs`` turns a ``tools`` list of
registered names, ``"toolset:NAME"`` (its tools; at least one must exist) and ``"package.module:function"``
(imported only when trusted, ``zagent.speckit.trust``, and registered; left out under a dry trust) into registered
tool names. A bad reference is a ``ConfigError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

from .._runs.stash import StashKey
from ..errors import ConfigError, ToolError

if TYPE_CHECKING:  # pragma: no cover
    from ..kernel import Kernel

__all__ = ["SPEC_IMPORTED", "TOOLSET_PREFIX", "agent_tool_names", "check_lent_agent", "provider_tools",
           "reachable_agents", "reachable_tools", "remember_origins", "resolve_tool_refs", "spec_origins"]

TOOLSET_PREFIX = "toolset:"

#: per kernel, the tools specs registered from import paths (or agents using such tools, offered as tools):
#: name -> (the import paths, the tool registered)
SPEC_IMPORTED: "StashKey[dict[str, tuple[tuple[str, ...], object]]]" = StashKey("zagent.spec_imported_tools")


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
        for name in found:
            _check_imported_by_a_spec(kernel, name, base_dir, key)
        return found
    if ":" not in ref:
        try:
            kernel.tool(ref)  # the kernel's look-up: waits for a tool source still connecting (MCP) on a miss
        except ToolError:
            raise ConfigError(f"unknown tool {ref!r}; registered tools: {', '.join(reg) or 'none'}. Use a registered "
                              "name, 'toolset:NAME' or an import path 'package.module:function'") from None
        _check_imported_by_a_spec(kernel, ref, base_dir, key)
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
    code = getattr(fn, "handler", fn)
    for known in reg.values():  # the app registered this code already, under its own name (maybe sensitive,
        if known is fn or known.handler is code:  # denied or gated by name): the spec gets that tool, never a
            return [known.name]  # second, unguarded one under the function's name
    tool = kernel.add_tool(fn)
    remember_origins(kernel, tool, (ref,))
    return [tool.name]


def remember_origins(kernel: "Kernel", tool: Any, origins: Iterable[str]) -> None:
    """Note that the registered ``tool`` runs code a spec named by the import paths ``origins`` (if any)."""
    origins = tuple(origins)
    if origins:
        kernel.stash.setdefault(SPEC_IMPORTED, {})[tool.name] = (origins, tool)


def spec_origins(kernel: "Kernel", names: Iterable[str]) -> tuple[str, ...]:
    """The import paths specs registered the tools ``names`` from (through agents offered as tools too)."""
    table, reg, found = kernel.stash.get(SPEC_IMPORTED, {}), kernel.registries["tools"], []
    for name in names:
        origins, tool = table.get(name, ((), None))
        if tool is not None and reg.get(name) is tool:  # not since replaced by another tool of that name
            found += [o for o in origins if o not in found]
    return tuple(found)


def agent_tool_names(agent: Any) -> list[str]:
    """The names of the tools ``agent`` offers (a ReAct agent's ``tools``, a declared agent's action's)."""
    names = getattr(agent, "tools", None)
    if not isinstance(names, list) and callable(getattr(agent, "action", None)):
        names = getattr(agent.action(), "tools", None)
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def reachable_agents(agent: Any) -> list[Any]:
    """``agent`` and every agent it may pass work to, at any depth: a group chat's speakers and the agents a
    ReAct agent hands the conversation over to (``handoffs``), which answer with their own tools."""
    out: list[Any] = []
    stack, seen = [agent], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        out.append(current)
        speakers, pick = getattr(current, "speakers", None), getattr(current, "agent", None)
        if isinstance(speakers, list) and callable(pick):
            stack += [pick(n) for n in speakers if isinstance(n, str)]
        handoffs = getattr(current, "handoffs", None)
        if isinstance(handoffs, (list, tuple)):
            stack += [h for h in handoffs if not isinstance(h, (str, dict))]
    return out


def reachable_tools(agent: Any) -> list[str]:
    """The tools ``agent`` offers and those of every agent it reaches (``reachable_agents``); a group chat lists
    none of its own."""
    out: list[str] = []
    for current in reachable_agents(agent):
        out += [t for t in agent_tool_names(current) if t not in out]
    return out


def provider_tools(agent: Any) -> list[str]:
    """``"agent: option"`` for each request field giving a model tools its provider runs (``TOOL_OPTIONS``: an MCP
    connector, hosted search) that ``agent`` or an agent it reaches sets, in its ``llm_config`` or its model's
    fields (a fallback chain's models too); such tools are out of reach of the tool scope and the rails."""
    from ..providerkit.credentials import TOOL_OPTIONS

    found: list[str] = []
    for current in reachable_agents(agent):
        config, llm = getattr(current, "llm_config", None), getattr(current, "llm", None)
        chain = [*_listed(config.get("models") if isinstance(config, dict) else None),
                 *_listed(getattr(llm, "models", None))]
        for options in (config, getattr(llm, "fields", None), *chain, *(getattr(m, "fields", None) for m in chain)):
            if not isinstance(options, dict):  # a fallback chain's models: each with its own fields
                continue
            extra = options.get("extra_body")
            for key in TOOL_OPTIONS:
                if options.get(key) is not None or (isinstance(extra, dict) and extra.get(key) is not None):
                    item = f"{getattr(current, 'name', '?')}: {key}"
                    found += [item] if item not in found else []
    return found


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def check_lent_agent(kernel: "Kernel", agent: Any, what: str) -> Any:
    """``agent`` (built for another spec, kept in a pool) for a spec naming it, unless its tools run code specs
    imported that the trust in force may not name (``ConfigError``)."""
    for name in agent_tool_names(agent):
        _check_imported_by_a_spec(kernel, name, None, f"{what}: tool")
    return agent


def _check_imported_by_a_spec(kernel: "Kernel", name: str, base_dir: Optional[str], key: str) -> None:
    """A tool a spec registered from an import path (or an agent using one) is named by another spec only if
    that one could name the path too: the trust given to one spec does not reach another."""
    from ..speckit.trust import resolve

    for origin in spec_origins(kernel, [name]):
        try:
            resolve(origin, key=key, kernel=kernel, base_dir=base_dir)  # imported already: nothing runs again
        except ConfigError as exc:
            raise ConfigError(f"{key} {name!r} runs code another spec imported from {origin!r}, which this spec "
                              f"is not trusted to name: {exc}") from None
