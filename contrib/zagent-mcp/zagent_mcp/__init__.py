"""zagent-mcp: tools from any Model Context Protocol server, for zagent.

Install it next to zagent and it is found through the ``zagent`` entry-point
group (plugin name ``mcp``, module ``zagent_mcp.plugin``). Configure servers in
the common ``mcpServers`` shape (see the README and ``zagent_mcp.config``).
"""

__version__ = "0.1.0"
