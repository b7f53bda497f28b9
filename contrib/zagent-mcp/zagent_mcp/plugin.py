"""The zagent plugin (entry point ``mcp``): tools from MCP servers, one ``McpRuntime`` per kernel (``runtime_of``).

Servers connect in the background (``Kernel()`` does not wait); each one's tools register as ``server.tool`` when
it is ready. A bad server is logged and skipped, or is a ``ConfigError`` with ``config["mcp"]["strict"]`` (default:
the kernel's). Without servers nothing starts, not even the SDK import.
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


def zagent_config_keys() -> tuple[str, ...]:
    """The settings this plugin reads: ``mcp``."""
    return ("mcp",)


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
                runtime.skip(f"{server}: tool {tool.name!r} is skipped: {exc}")

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
