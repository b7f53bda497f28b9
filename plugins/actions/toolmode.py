"""Prompt-based tool calling for models without native function calling.

``PromptTools`` wraps a text tool-call format registered with the kernel
(``kernel.parser("tool_call")`` by default): it renders the tools section of
the system prompt once, extracts calls from a reply, and writes the results
back as one user message the model can read. Malformed calls are told to the
model, never dropped.
"""

from __future__ import annotations

from typing import Any, Sequence

from zagent.limits import bound_calls
from zagent.types import Message, ToolCall, ToolResult


class PromptTools:
    """Tools offered in the prompt through one text tool-call format."""

    def __init__(self, fmt: Any, tools: Sequence[Any], extra_specs: Sequence[Any] = ()):
        self.format = fmt
        specs = [t.spec for t in tools] + list(extra_specs)
        self.names = tuple(s.name for s in specs)
        self.section = fmt.render_tools(specs)

    def extract(self, text: str) -> tuple[list[ToolCall], list[Any], str]:
        """``(calls, malformed-call errors, remaining text)`` found in a reply."""
        calls, errors, remaining = self.format.extract(text)
        calls = list(calls)
        bound_calls(calls)  # arguments nested past zagent.limits stay text; the tool runner tells the model
        return calls, list(errors), remaining

    def results_message(self, results: Sequence[ToolResult], errors: Sequence[Any]) -> Message:
        """One user message carrying every result (and the malformed-call feedback) of a step."""
        parts = [
            f'<tool_result name="{r.name}" id="{r.call_id}" state="{r.state}">\n{r.content}\n</tool_result>'
            for r in results
        ]
        if errors:
            parts.append(self.format.feedback(errors))
        return Message(role="user", content="\n".join(parts))
