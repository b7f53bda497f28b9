"""zagent.agentkit: support library for agent and loop plugins.

Plugins that build agents (declared actions, ReAct, workflows, group chat,
skills) share these helpers: output fields, tool references, run control and
the tool-loop core. The kernel never imports this package, so it is not part
of the kernel core; it is imported by plugins on first use.
"""
