"""Tool calls given as dicts (``Kernel.run_tool({...})``) made ``ToolCall``s, with a clear ``ToolError``."""

from __future__ import annotations

from typing import Any, Union

from ..errors import ToolError
from ..types import ToolCall


def as_call(call: Union[ToolCall, dict[str, Any]]) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, dict):
        import msgspec

        data = {"id": f"call_{id(call):x}", **call}
        try:
            return msgspec.convert(data, ToolCall)
        except msgspec.ValidationError as exc:
            raise ToolError(f"bad tool call {call!r}: {exc}; give at least 'name' and 'arguments'") from None
    raise ToolError(f"expected a zagent.ToolCall or dict, got {type(call).__name__}")
