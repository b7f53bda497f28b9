"""zagent.agentkit: helpers that agent and loop plugins share (output fields, tool references, run control and
lifecycle, the tool-loop core, streaming, checkpoints, files). The kernel core never imports it; plugins import it
on first use. docs/architecture.md ("The kits") lists its modules.
"""
