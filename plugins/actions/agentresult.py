"""``AgentResult``: what one agent call returns: the typed output (its fields read as attributes), the
result message recorded in memory, usage, timing and the run's trajectory."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec

from zagent.types import Message, ToolResult, Usage


@attrs.frozen(repr=False)
class AgentResult:
    """The result of one agent call. Output fields read as attributes: ``result.answer``.

    :ivar output: the typed output (a msgspec Struct of the action's output fields; an instance of the
        agent's ``output_type`` when it has one).
    :ivar message: the result message recorded in memory.
    :ivar trajectory: every message of the run (prompt, tool calls, tool results, reply).
    """

    output: Any
    message: Message
    agent: str
    action: str
    usage: Usage
    duration: float
    steps: int
    trajectory: list[Message]
    tool_results: list[ToolResult]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return getattr(object.__getattribute__(self, "output"), name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    @property
    def content(self) -> str:
        """The output's ``content`` field when it has one (an agent declaring no outputs: the reply's
        text), else the result message's text (the output as JSON)."""
        value = getattr(object.__getattribute__(self, "output"), "content", None)
        return value if isinstance(value, str) else self.message.content or ""

    def to_dict(self) -> dict[str, Any]:
        """The output fields as plain data."""
        output = object.__getattribute__(self, "output")
        if callable(getattr(output, "model_dump", None)):  # a pydantic model (the agent's ``output_type``)
            dumped: dict[str, Any] = output.model_dump(mode="json")
            return dumped
        data: dict[str, Any] = msgspec.to_builtins(output)
        return data

    def __repr__(self) -> str:
        return f"<AgentResult {self.agent}.{self.action} {self.to_dict()!r}>"
