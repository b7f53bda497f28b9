"""The zagent plugin (entry point ``mcp`` in group ``zagent``): tools from MCP servers.

Hooks:

* ``zagent_register_tools(register, kernel)``: reads the configuration
  (``kernel.config["mcp"]`` and ``ZAGENT_MCP_CONFIG``; see ``zagent_mcp.config``),
  connects to every server on the kernel's own MCP loop, waiting at most the
  servers' ``connect_timeout`` (10 s by default), and registers each server's
  tools as ``server.tool`` in toolset ``server``. A server that fails, an
  invalid server entry (an unset ``${VAR}``, a typo) and an unreadable
  configuration file are logged, shown by ``zagent mcp list`` and skipped;
  the other servers are registered and the kernel starts anyway. Strict
  mode (``config["mcp"]["strict"]``, default: the kernel's ``strict``) raises
  ``ConfigError`` for a configuration problem instead, which makes it a
  plugin problem. Without configured servers it does nothing and starts no
  thread.
* ``zagent_kernel_close(kernel)``: stops the kernel's servers.
* ``zagent_register_commands(cli, kernel)``: ``zagent mcp list``.

State lives per kernel (``runtime_of(kernel)``), never shared between kernels.
Importing this module is cheap: the MCP SDK is imported only when a server is
configured.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Mapping, Optional

_runtimes: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def runtime_of(kernel: Any) -> Optional[Any]:
    """The ``McpRuntime`` of ``kernel``, or ``None`` if it has no MCP servers configured."""
    return _runtimes.get(kernel)


def zagent_register_tools(register: Callable[..., Any], kernel: Any) -> None:
    """Connect to the configured MCP servers and register their tools."""
    from .config import load_settings

    section = kernel.config.get("mcp")
    strict = section.get("strict", kernel.strict) if isinstance(section, Mapping) else kernel.strict
    settings = load_settings(section, strict=bool(strict))
    if settings.empty:
        return
    from .runtime import McpRuntime

    old = _runtimes.pop(kernel, None)
    if old is not None:  # registration ran again (Kernel.add_plugin): replace, do not leak servers
        old.close()
    runtime = McpRuntime(settings)
    _runtimes[kernel] = runtime
    weakref.finalize(kernel, runtime.close)
    try:
        runtime.start()
        for tool in runtime.make_tools():
            register(tool)
    except BaseException:  # the kernel drops this plugin: do not leave its servers running
        _runtimes.pop(kernel, None)
        runtime.close()
        raise


async def zagent_kernel_close(kernel: Any) -> None:
    """Stop the kernel's MCP servers and their loop."""
    runtime = _runtimes.pop(kernel, None)
    if runtime is not None:
        await runtime.aclose()


def zagent_register_commands(cli: Any, kernel: Any) -> None:
    """Add ``zagent mcp list``."""
    from .cli import add_commands

    add_commands(cli)
