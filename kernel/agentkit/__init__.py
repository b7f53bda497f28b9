"""zagent.agentkit: support library for agent and loop plugins.

Plugins that build agents (declared actions, ReAct, workflows, group chat,
skills) share these helpers: output fields, tool references, run control, the
stash keys the ReAct loop and rails share, lazy package exports and
the tool-loop core. The kernel never imports this package, so it is not part
of the kernel core; it is imported by plugins on first use.
"""
