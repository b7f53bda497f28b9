"""The zagent plugin (entry point ``mcp`` in group ``zagent``): tools from MCP servers.

Hooks:

* ``zagent_register_tools(register, kernel)``: reads the configuration
  (``kernel.config["mcp"]`` and ``ZAGENT_MCP_CONFIG``; see ``zagent_mcp.config``)
  and starts connecting to every server on the kernel's own MCP loop, in the
  background: ``Kernel()`` does not wait. Each server's tools are registered
  as ``server.tool`` in toolset ``server`` when it is ready (and registered
  anew when it sends ``notifications/tools/list_changed``). The first use of
  a tool name of a server still connecting waits for it, at most its
  ``connect_timeout`` (10 s by default; ``zagent._tools.table.PendingTools``). A server that fails, an
  invalid server entry (an unset ``${VAR}``, a typo) and an unreadable
  configuration file are logged, shown by ``zagent mcp list`` and skipped;
  the other servers are registered and the kernel starts anyway. Strict
  mode (``config["mcp"]["strict"]``, default: the kernel's ``strict``) raises
  ``ConfigError`` for a configuration problem instead, which makes it a
  plugin problem. Without configured servers it does nothing and starts no
  thread.
* ``zagent_kernel_close(kernel)``: stops the kernel's servers.
* ``zagent_register_commands(cli, kernel)``: ``zagent mcp list``.

State lives per kernel (``runtime_of(kernel)``, under ``RUNTIME`` in ``kernel.stash``), never shared between kernels.
Importing this module is cheap: the MCP SDK is imported only when a server is
configured.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from zagent import StashKey

if TYPE_CHECKING:
    from zagent import Kernel
    from .runtime import McpRuntime

log = logging.getLogger("zagent.mcp")

#: a kernel's ``McpRuntime``, in ``kernel.stash`` (per kernel, gone with it)
RUNTIME: "StashKey[McpRuntime]" = StashKey("zagent_mcp.runtime")


def runtime_of(kernel: "Kernel") -> Optional[McpRuntime]:
    """The ``McpRuntime`` of ``kernel``, or ``None`` if it has no MCP servers configured."""
    found: Optional[McpRuntime] = kernel.stash.get(RUNTIME)
    return found


def zagent_register_tools(register: Callable[..., Any], kernel: "Kernel") -> None:
    """Connect to the configured MCP servers and register their tools."""
    from .config import load_settings

    section = kernel.config.get("mcp")
    strict = section.get("strict", kernel.strict) if isinstance(section, Mapping) else kernel.strict
    settings = load_settings(section, strict=bool(strict))
    if settings.empty:
        return
    from .runtime import McpRuntime

    old = kernel.stash.pop(RUNTIME, None)
    if old is not None:  # registration ran again (Kernel.add_plugin): replace, do not leak servers
        old.close()
    runtime = McpRuntime(settings)
    kernel.stash[RUNTIME] = runtime
    weakref.finalize(kernel, runtime.close)
    owner = getattr(register, "plugin", "mcp")
    kernel_ref = weakref.ref(kernel)

    def publish(server: str, tools: list[Any]) -> None:
        k = kernel_ref()
        if k is None:
            return
        for name in [e.name for e in k.entries("tools") if e.obj.toolset == server
                     and getattr(e.obj, "metadata", {}).get("mcp_server") == server]:
            k.remove_tool(name)  # a changed list replaces the old one
        for tool in tools:
            try:
                k.add_tool(tool, plugin=owner)
            except Exception as exc:  # a clash with another plugin's tool: that one stays
                runtime.skipped.append(f"{server}: tool {tool.name!r} is skipped: {exc}")
                log.warning("%s", runtime.skipped[-1])

    try:
        kernel.pending_tools.add(runtime.wait)
        runtime.start_background(publish)
    except BaseException:  # the kernel drops this plugin: do not leave its servers running
        kernel.stash.pop(RUNTIME, None)
        runtime.close()
        raise


async def zagent_kernel_close(kernel: "Kernel") -> None:
    """Stop the kernel's MCP servers and their loop."""
    runtime = kernel.stash.pop(RUNTIME, None)
    if runtime is not None:
        await runtime.aclose()


def zagent_register_commands(cli: Any, kernel: "Kernel") -> None:
    """Add ``zagent mcp list``."""
    from .cli import add_commands

    add_commands(cli)
