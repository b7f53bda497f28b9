"""Approvals bound to the call (docs/security.md, "An approval covers one call"): ``approval_key`` binds a human's
yes to the id a loop minted for the call, its tool name and canonical arguments; also ``bound_key``, ``declined``,
``shown_call`` (what a prompt shows of a call), ``shown_secrets`` (what it hides) and ``resolve_approver`` (a spec's
approver import path, resolved when it loads).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

import msgspec

from ..speckit.trust import resolve
from .runkeys import CALL_KEYS
from .signing import canonical
from .specregex import check_spec_regexes

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from ..types import ToolCall, ToolResult

__all__ = ["FULL", "Shown", "approval_key", "bound_key", "declined", "resolve_approver", "shown_arguments", "shown_call",
           "shown_secrets", "tool_identity", "vetted_arguments"]

DECLINED = "a human declined the call"



#: characters: the most a person is shown of a call's arguments in full (``Shown.full``); a call whose arguments
#: are cut in its prompt and longer than this in full cannot be approved there (no one is asked to approve unseen text)
FULL = 20_000


class Shown(NamedTuple):
    """A call's arguments as a prompt shows them: ``text`` (whole, or each value by its path, cut), ``hidden``
    characters it left out (0: nothing), ``where`` (the first paths cut or left out), ``full`` (every argument in
    full, indented JSON; ``""`` when longer than ``FULL``) and ``size`` (the length of that full text)."""

    text: str
    hidden: int
    where: tuple[str, ...]
    full: str
    size: int

    def unseen(self) -> str:
        """What the person has not seen: ``5,012 characters of argument "command"`` (of several: the first three)."""
        named = ", ".join(self.where[:3]) + (f" and {len(self.where) - 3} more" if len(self.where) > 3 else "")
        return f"{self.hidden:,} characters of {'argument' if len(self.where) == 1 else 'arguments'} {named}"


def shown_call(arguments: Any, limit: int, *, per_value: int = 200, most: int = 64) -> Shown:
    """``arguments`` for a human deciding about the call (``shown_arguments``), with what that text left out and
    the whole of them, for a prompt that shows everything before it takes a yes (docs/rails.md "Human approval")."""
    whole = msgspec.json.encode(arguments, enc_hook=repr).decode()
    if len(whole) <= limit:
        return Shown(whole, 0, (), whole, len(whole))
    cuts: list[tuple[str, int]] = []
    leaves, count = _leaves(arguments, per_value, most, cuts)
    parts = []
    for path, value in leaves:
        text = msgspec.json.encode(value, enc_hook=repr).decode()
        if len(text) > per_value:
            cuts.append((path or "the value", len(text) - per_value))
        parts.append(f"{path}: {_cut(text, per_value)}" if path else _cut(text, per_value))
    if count > most:
        parts.append(f"... and {count - most} more values not shown (the call has {count} values, too "
                     "many to list here)")
    full = msgspec.json.format(whole, indent=2)
    where = tuple(dict.fromkeys(p for p, _ in cuts))
    return Shown("{" + ", ".join(parts) + "}", sum(n for _, n in cuts), where, full if len(full) <= FULL else "",
                 len(full))


def shown_arguments(arguments: Any, limit: int, *, per_value: int = 200, most: int = 64) -> str:
    """``arguments`` as JSON for a human deciding about the call: whole when at most ``limit`` characters, else
    every value by its path (``"target"."path": "/"``, ``"paths"[1]: "/"``), at any depth, each value (and key)
    cut at ``per_value`` characters saying how much was cut, so a model cannot push the value that matters out of
    sight behind a long harmless one, nested or not; past ``most`` values, how many were not shown is said."""
    return shown_call(arguments, limit, per_value=per_value, most=most).text


def _cut(text: str, most: int) -> str:
    """``text`` cut to ``most`` characters: its start and its end (where a model appends ``; rm -rf ~``)."""
    if len(text) <= most:
        return text
    tail = most // 4
    return f"{text[:most - tail]}... ({len(text) - most} more characters not shown) ...{text[-tail:]}"


def _leaves(arguments: Any, per_value: int, most: int,
            cuts: list[tuple[str, int]]) -> tuple[list[tuple[str, Any]], int]:
    """The first ``most`` scalars (and empty containers) of ``arguments`` with their paths, in order, and how many
    there are (no recursion: any depth); each key and path cut, and each value left out, added to ``cuts``."""
    leaves: list[tuple[str, Any]] = []
    count = 0
    stack: list[tuple[str, Any]] = [("", arguments)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict) and value:
            items = []
            for k, v in value.items():
                key = msgspec.json.encode(str(k)).decode()
                if len(key) > per_value:
                    cuts.append((f"{path}{'.' if path else ''}{key[:20]}...", len(key) - per_value))
                items.append((f"{path}{'.' if path else ''}{_cut(key, per_value)}", v))
        elif isinstance(value, (list, tuple)) and value:
            items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            count += 1
            if count > most:
                cuts.append((path, len(msgspec.json.encode(value, enc_hook=repr).decode())))
                continue
            if len(path) > 2 * per_value:  # deep nesting: its start and the keys nearest the value
                cuts.append((f"{path[:per_value // 4]} ...", len(path) - per_value - per_value // 4))
                path = f"{path[:per_value // 4]} ... {path[-per_value:]}"
            leaves.append((path, value))
            continue
        stack.extend(reversed(items))
    return leaves, count


def approval_key(minted: str, name: str, arguments: Any) -> str:
    """What an approval of the call binds: its minted id, tool name and canonical arguments."""
    digest = hashlib.sha256(name.encode() + b"\0" + canonical(arguments)).hexdigest()
    return f"{minted}:{digest}"


def vetted_arguments(kernel: "Kernel", name: str, arguments: Any) -> Any:
    """``arguments`` as the approval rail sees them (checked by tool ``name`` and in plain JSON form: a default
    filled in, ``"1"`` made ``1``, a JSON string decoded), so a key made from a saved call is the rail's key for
    it; as they are when no such tool takes them (such a call fails before any rail)."""
    from .._tools.tool import ArgumentsError

    tool = kernel.find("tools", name)
    if tool is None:
        return arguments
    try:
        return tool.rail_arguments(tool.validate(arguments))
    except ArgumentsError:
        return arguments


def shown_secrets(arguments: Any) -> Any:
    """``arguments`` as a person is shown them: the value under each secret-named key (``password``, a tool's
    ``api_token`` default, a vault's credential a rail added) as ``"***"``, as the run log keeps it, by key only (a
    value the model also wrote under another name stays shown). Questions are stored in checkpoints and logs."""
    from .._trust.limits import MAX_DEPTH
    from .secrets import masked_arguments

    return masked_arguments(arguments, depth=MAX_DEPTH + 1) if isinstance(arguments, dict) else arguments


def tool_identity(tool: Any) -> str:
    """What a person approving a call of ``tool`` approved, the same in every process that registers that code under
    its name: its toolset, its handler's module and qualified name (through ``functools.partial``), and the agent an
    agent-as-tool runs (its name and definition); ``""`` for no tool. Another function registered under the name,
    or another agent definition, has another identity."""
    if tool is None:
        return ""
    handler: Any = getattr(tool, "handler", None)
    while hasattr(handler, "func") and not hasattr(handler, "__qualname__"):  # functools.partial
        handler = handler.func
    code = (f"{getattr(handler, '__module__', None) or type(handler).__module__}:"
            f"{getattr(handler, '__qualname__', None) or type(handler).__qualname__}")
    metadata = getattr(tool, "metadata", None) or {}
    definition = metadata.get("definition")  # an agent-as-tool's: its declaration, tools and settings (a digest)
    return (f"{getattr(tool, 'toolset', '') or ''}|{code}|{metadata.get('agent', '')}"
            + (f"|{definition}" if definition else ""))


def bound_key(call: "ToolCall", ctx: "RunContext[Any]") -> Optional[str]:
    """The approval key of ``call`` in ``ctx``'s run, or ``None`` when no loop minted an id for it."""
    minted = (ctx.frame.get(CALL_KEYS) or {}).get(call.id)
    return None if minted is None else approval_key(minted, call.name, call.arguments)


def declined(call: "ToolCall") -> "ToolResult":
    """The blocked result of a call a human declined, as every loop reports it to the model."""
    from ..types import ToolResult

    return ToolResult(call_id=call.id, name=call.name, state="blocked", error=DECLINED,
                      content=f"Error: the call was blocked: {DECLINED}")


def resolve_approver(rails: dict[str, Any], kernel: Optional["Kernel"] = None) -> dict[str, Any]:
    """A spec's ``rails`` with an ``approver`` import path resolved now, under the trust in force
    (so ``trust=True`` or the CLI's folder rule count; at run time only ``trusted_imports`` would)."""
    check_spec_regexes(rails)  # spec regexes are bounded (docs/security.md): refused when the spec loads
    approver = rails.get("approver") if isinstance(rails, dict) else None
    if not isinstance(approver, str) or ":" not in approver:
        return rails
    return {**rails, "approver": resolve(approver, key="rails.approver", kernel=kernel)}
