"""Prompt-based tool calling for models without native function calling.

``PromptTools`` wraps a text tool-call format registered with the kernel
(``kernel.parser("tool_call")`` by default): it renders the tools section of
the system prompt once, extracts calls from a reply, and writes the results
back as one user message the model can read. Malformed calls are told to the
model, never dropped.

``text_call_fallback`` is for native mode: many local servers (llama.cpp with
a model's own template, for one) send a call as message text, never as
``tool_calls``; a reply holding only well-formed text calls of offered tools
gets them as native calls (profile flag ``text_tool_fallback``).
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

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


def text_call_fallback(fmt: Any, reply: Message, tools: Sequence[Any], history: Sequence[Message] = ()) -> Message:
    """Native mode, a reply without native calls: if its text holds only well-formed calls of offered tools
    (read by the text tool-call format ``fmt``), the reply with those calls as native ones; else ``reply``.

    Calls that repeat ones already made in ``history`` (same name and arguments) are an echo of the
    conversation, not a request (small models often restate the call next to its result): then the reply
    stays text. The rewritten reply's content is the remaining text, ``""`` when none (llama-cpp-python's
    server refuses a ``null`` content next to tool calls).
    """
    content = reply.content or ""
    if "{" not in content and "<" not in content and "[" not in content:
        return reply
    calls, errors, text = fmt.extract(content)
    names = {t.name for t in tools}
    if not calls or errors or any(c.name not in names for c in calls):
        return reply
    made = {_call_key(c) for m in history if m.role == "assistant" for c in m.tool_calls}
    if made and all(_call_key(c) in made for c in calls):
        return reply
    return msgspec.structs.replace(reply, content=text.strip(), tool_calls=list(calls))


def _call_key(call: ToolCall) -> tuple[str, str]:
    args = call.arguments
    if isinstance(args, dict):
        return call.name, msgspec.json.encode(args, order="sorted").decode()
    return call.name, str(args)
