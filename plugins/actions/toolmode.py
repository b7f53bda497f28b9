"""Moved to ``zagent.agentkit.toolloop`` (the tool-loop core); this path re-exports it for one release."""

from zagent.agentkit.toolloop import PromptTools, text_call_fallback

__all__ = ["PromptTools", "text_call_fallback"]
