"""Tool-call format objects ``tool_call`` (default), ``hermes``, ``mistral``, ``llama3``, ``fenced``: each asks for
calls (``render_tools``) and writes them (``render_calls``) in its own style, reads every style
(``toolcalls.extract``) and tells the model which calls were malformed (``feedback``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec
from zagent.types import ToolCall, ToolSpec

from .toolcalls import Extraction, ToolCallError, extract

_encode = msgspec.json.encode
#: every format's tools section ends with this: small models call *some* tool unless told plainly not to
NO_TOOL = ("If none of the tools fits the request, or the request lacks a value a tool requires, do not call "
           "any: answer in plain text instead, saying what is missing; that is the right reply then. Never make up "
           "argument values.")


def _spec(tool: Any) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    spec = getattr(tool, "spec", None)  # a Tool
    if isinstance(spec, ToolSpec):
        return spec
    if isinstance(tool, dict):
        return msgspec.convert(tool.get("function", tool), ToolSpec)
    raise TypeError(f"cannot offer {tool!r} as a tool; pass zagent.ToolSpec, zagent.Tool or a dict")


def _function(spec: ToolSpec) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": spec.name, "description": spec.description}
    fn["parameters"] = spec.parameters or {"type": "object", "properties": {}}
    return fn


class ToolCallFormat:
    """A text tool-call format. Subclasses set ``name``, ``call_example`` and the two render methods."""

    name = "tool_call"
    call_example = '<tool_call>\n{"name": "<tool name>", "arguments": {<arguments as JSON>}}\n</tool_call>'

    def __init__(self) -> None:
        self._cache: dict[bytes, str] = {}

    def render_tools(self, tools: Sequence[Any]) -> str:
        """The tools section of a prompt: what tools exist and how to call them (cached per tool list)."""
        specs = [_spec(t) for t in tools]
        key = _encode(specs)
        text = self._cache.get(key)
        if text is None:
            if len(self._cache) > 256:
                self._cache.clear()
            text = self._cache[key] = self._render_tools(specs)
        return text

    def parse_tool_calls(self, text: str) -> list[ToolCall]:
        """The well-formed calls in ``text`` (use ``extract`` to also get errors and the remaining text)."""
        return extract(text).calls

    def extract(self, text: str) -> Extraction:
        """``(calls, errors, text)``: calls, malformed-call errors, and the reply without the calls."""
        return extract(text)

    def feedback(self, errors: Iterable[ToolCallError]) -> str:
        """A message telling the model which calls were malformed and how to write them."""
        return ("Some tool calls could not be read:\n" + error_lines(errors)
                + f"\nWrite each call exactly like this, with valid JSON:\n{self.call_example}")

    def render_calls(self, calls: Sequence[ToolCall], text: str = "") -> str:
        """A reply making ``calls`` in this format, after ``text``."""
        body = self._render_calls(list(calls))
        return f"{text}\n{body}".strip() if text else body

    # -- per format ---------------------------------------------------------------

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        lines = "\n".join(_encode({"type": "function", "function": _function(s)}).decode() for s in specs)
        return ("You may call one or more tools to help answer. The tools, as JSON schemas:\n"
                f"<tools>\n{lines}\n</tools>\n\n"
                "To call a tool, write one block per call, like this:\n"
                f"{self.call_example}\n"
                "You may make several calls in one reply; then stop and wait for their results. "
                f"{NO_TOOL}")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        return "\n".join(f"<tool_call>\n{_encode(_call_obj(c)).decode()}\n</tool_call>" for c in calls)

    def __repr__(self) -> str:
        return f"<zagent tool-call format {self.name!r}>"


class HermesFormat(ToolCallFormat):
    """Hermes / Qwen: ``<tools>`` in the system prompt, ``<tool_call>`` blocks in the reply."""

    name = "hermes"
    call_example = '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        lines = "\n".join(_encode({"type": "function", "function": _function(s)}).decode() for s in specs)
        return ("You are a function calling AI model. You are provided with function signatures within "
                "<tools></tools> XML tags. You may call one or more functions to assist with the user query. "
                "Don't make assumptions about what values to plug into functions.\n"
                f"<tools>\n{lines}\n</tools>\n"
                "For each function call return a json object with function name and arguments within "
                f"<tool_call></tool_call> XML tags:\n{self.call_example}\n{NO_TOOL}")


class MistralFormat(ToolCallFormat):
    """Mistral: ``[AVAILABLE_TOOLS]`` in the prompt, ``[TOOL_CALLS][{...}]`` in the reply."""

    name = "mistral"
    call_example = '[TOOL_CALLS][{"name": "<tool name>", "arguments": {<arguments as JSON>}}]'

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        body = _encode([{"type": "function", "function": _function(s)} for s in specs]).decode()
        return (f"[AVAILABLE_TOOLS]{body}[/AVAILABLE_TOOLS]\n"
                "To call tools, reply with [TOOL_CALLS] followed by a JSON list of calls:\n"
                f"{self.call_example}\n{NO_TOOL}")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        return "[TOOL_CALLS]" + _encode([_call_obj(c) for c in calls]).decode()


class Llama3Format(ToolCallFormat):
    """Llama 3.x JSON tool calling: ``{"name": ..., "parameters": {...}}`` as the whole reply."""

    name = "llama3"
    call_example = '{"name": "<function name>", "parameters": {<argument name>: <value>}}'

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        lines = "\n\n".join(_encode({"type": "function", "function": _function(s)}).decode() for s in specs)
        return ("Given the following functions, please respond with a JSON for a function call with its "
                "proper arguments that best answers the given prompt.\n\n"
                f"Respond in the format {self.call_example}. Do not use variables. Write one JSON object per "
                f"line for several calls. {NO_TOOL}\n\n{lines}")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        return "\n".join(_encode({"name": c.name, "parameters": c.arguments}).decode() for c in calls)


class FencedFormat(ToolCallFormat):
    """Calls as fenced JSON blocks (```` ```tool_call ````), for models that like Markdown."""

    name = "fenced"
    call_example = '```tool_call\n{"name": "<tool name>", "arguments": {<arguments as JSON>}}\n```'

    def _render_tools(self, specs: list[ToolSpec]) -> str:
        lines = "\n".join(_encode(_function(s)).decode() for s in specs)
        return (f"Available tools, as JSON schemas:\n{lines}\n\n"
                f"To call a tool, write one fenced block per call:\n{self.call_example}\n"
                f"Then stop and wait for the results. {NO_TOOL}")

    def _render_calls(self, calls: list[ToolCall]) -> str:
        return "\n".join(f"```tool_call\n{_encode(_call_obj(c)).decode()}\n```" for c in calls)


def _call_obj(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


#: the most malformed calls one feedback message lists (a reply of thousands would be echoed whole)
MAX_SHOWN_ERRORS = 20


def error_lines(errors: Iterable[ToolCallError]) -> str:
    """One ``- message: call`` line per malformed call, the first ``MAX_SHOWN_ERRORS`` only, then how many more."""
    errors = list(errors)
    lines = [f"- {e.message}: {_clip(e.raw)}" for e in errors[:MAX_SHOWN_ERRORS]]
    if len(errors) > MAX_SHOWN_ERRORS:
        lines.append(f"- ... and {len(errors) - MAX_SHOWN_ERRORS:,} more malformed calls, not shown; make fewer "
                     "calls per reply, each written as below")
    return "\n".join(lines)


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


FORMATS = (ToolCallFormat, HermesFormat, MistralFormat, Llama3Format, FencedFormat)
