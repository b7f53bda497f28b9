"""The tool-loop core of every loop that lets a model call tools: ``ToolLoop.offer`` fixes a turn's tools (native,
or a prompt section in a text tool-call format), and only ``Offer.names`` may run (``scoped``); ``ToolLoop.turn``
asks once and reads the reply into a ``ToolTurn`` (calls with unique ids, malformed-call errors, text);
``run_tools`` runs calls through ``Kernel.arun_tools``; ``results_messages`` feeds results back; an empty reply gets
``NUDGE``.
"""

from __future__ import annotations

import html
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterator, Optional, Protocol, Sequence

import msgspec

from .._runs.stash import StashKey
from .._trust.limits import bound_calls
from .callcap import cap_calls, reply_limit
from .argtypes import coerce
from .grounding import conversation_text, ground_calls
from .._model.replies import new_call_id, unique_call_ids
from ..contracts import TextToolFormat
from ..types import Completion, Message, ToolCall, ToolResult, ToolSpec

if TYPE_CHECKING:  # pragma: no cover
    from .._runs.context import RunContext
    from ..kernel import Kernel
    from .._model.llm import LLM
    from ..types import LLMRequest

__all__ = ["NUDGE", "Offer", "PromptTools", "ToolLoop", "ToolTurn", "call_key", "check_tool_format", "fresh_call_ids",
           "results_messages", "scoped", "text_call_fallback"]

NUDGE = ("Your last reply had neither a tool call nor an answer. "
         "Call a tool if you still need one, or give the final answer now.")
"""The user turn sent after a reply with neither a tool call nor any text (every loop sends this one)."""

Ask = Callable[["LLMRequest", Optional["RunContext[Any]"]], Awaitable[Completion]]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class PromptTools:
    """Tools offered in the prompt through one text tool-call format."""

    def __init__(self, fmt: TextToolFormat, tools: Sequence[Any], extra_specs: Sequence[Any] = (), format_name: str = ""):
        self.format = fmt
        self.format_name = format_name or getattr(fmt, "name", "")
        specs = [t.spec for t in tools] + list(extra_specs)
        self.names = tuple(s.name for s in specs)
        self.section: str = fmt.render_tools(specs)
        self._schemas = {s.name: s.parameters for s in specs if s.parameters}

    def extract(self, text: str) -> tuple[list[ToolCall], list[Any], str]:
        """``(calls, malformed-call errors, remaining text)`` found in a reply."""
        calls, errors, remaining = self.format.extract(text)
        calls = [_typed(c, self._schemas.get(c.name)) for c in calls]  # "42" -> 42 for an integer, ...
        bound_calls(calls)  # arguments nested past zagent._trust.limits stay text; the tool runner tells the model
        return calls, list(errors), remaining

    def results_message(self, results: Sequence[ToolResult], errors: Sequence[Any]) -> Message:
        """One user message carrying every result (and the malformed-call feedback) of a step."""
        feedback = self.format.feedback(errors) if errors else ""
        return results_messages(results, native=False, feedback=feedback)[0]


def _typed(call: ToolCall, schema: Optional[dict[str, Any]]) -> ToolCall:
    """``call`` with its arguments converted to ``schema``'s types (``argtypes.coerce``), when any changed."""
    if schema is None or not isinstance(call.arguments, dict):
        return call
    return msgspec.structs.replace(call, arguments=coerce(call.arguments, schema))


def results_messages(results: Sequence[ToolResult], *, native: bool, feedback: str = "") -> list[Message]:
    """What a batch's results add to the conversation: a ``tool`` message per result (native mode), or one
    user message with every result and then ``feedback`` (the malformed-call text) in prompt mode."""
    if native:
        return [r.to_message() for r in results]
    parts = [  # model-chosen names and ids, and tool output, cannot close or forge a block (docs/security.md, 7)
        f'<tool_result name="{_attr(r.name)}" id="{_attr(r.call_id)}" state="{r.state}">\n'
        f'{_defused(r.content)}\n</tool_result>'
        for r in results
    ]
    if feedback:
        parts.append(feedback)
    return [Message(role="user", content="\n".join(parts))]


def _attr(text: str) -> str:
    """``text`` escaped for a double-quoted attribute (``"``, ``<``, ``>``, ``&``)."""
    return html.escape(text or "", quote=True)


def _defused(text: Optional[str]) -> str:
    """``text`` with each ``<tool_result``/``</tool_result`` (any case) written ``&lt;...``: it cannot end its block."""
    text = text or ""
    return _MARKER.sub(lambda m: "&lt;" + m.group()[1:], text) if "<" in text else text


_MARKER = re.compile(r"</?tool_result", re.IGNORECASE)


def text_call_fallback(fmt: TextToolFormat, reply: Message, tools: Sequence[_Named],
                       history: Sequence[Message] = ()) -> Message:
    """Native mode, a reply without native calls: if its text holds only well-formed calls of offered tools
    (read by the text tool-call format ``fmt``), not all repeating calls made in ``history`` (same name and
    arguments), the reply with those calls as native ones and the remaining text (``""`` when none) as content;
    else ``reply``."""
    content = reply.content or ""
    if "{" not in content and "<" not in content and "[" not in content:
        return reply
    calls, errors, text = fmt.extract(content)
    names = {t.name for t in tools}
    if not calls or errors or any(c.name not in names for c in calls):
        return reply
    made = {call_key(c) for m in history if m.role == "assistant" for c in m.tool_calls}
    if made and all(call_key(c) in made for c in calls):
        return reply
    return msgspec.structs.replace(reply, content=text.strip(), tool_calls=list(calls))


def check_tool_format(kernel: Any, name: Any, who: str) -> None:
    """``ConfigError`` unless ``name`` is a registered text tool-call format (``tool_call``, ``hermes``...): an
    output parser such as ``json`` is registered in the same place but cannot write or read tool calls."""
    from ..errors import ConfigError

    fmt = kernel.find("parsers", name) if isinstance(name, str) else None
    if fmt is None or not all(callable(getattr(fmt, m, None)) for m in ("render_tools", "extract", "feedback")):
        formats = [n for n in kernel.names("parsers") if callable(getattr(kernel.find("parsers", n), "extract", None))]
        what = "is not a registered parser" if fmt is None else "is an output parser, not a tool-call format"
        raise ConfigError(f"{who}: tool_format {name!r} {what}; tool-call formats: {', '.join(formats) or 'none'}")


def call_key(call: ToolCall) -> tuple[str, str]:
    """What makes two calls the same request: the tool's name and its arguments (key order ignored)."""
    args = call.arguments
    if isinstance(args, dict):
        return call.name, msgspec.json.encode(args, order="sorted").decode()
    return call.name, str(args)


class Offer:
    """What one model turn offers: ``names`` may run, ``specs`` are shown (natively or as ``prompt_tools``)."""

    __slots__ = ("names", "specs", "native", "prompt_tools", "request_tools")

    def __init__(self, names: frozenset[str], specs: list[ToolSpec], native: bool,
                 prompt_tools: Optional[PromptTools]):
        self.names = names
        self.specs = specs
        self.native = native
        self.prompt_tools = prompt_tools
        #: the specs to send as native tools, ``None`` in prompt mode or when nothing is offered
        self.request_tools: Optional[list[ToolSpec]] = specs if native and specs else None

    def with_section(self, messages: list[Message]) -> list[Message]:
        """``messages`` with the prompt-mode tools section added to the system message (a new list; the
        same list in native mode)."""
        if self.prompt_tools is None:
            return messages
        section = self.prompt_tools.section
        if messages and messages[0].role == "system":
            first = Message(role="system", content=f"{messages[0].content}\n\n{section}")
            return [first, *messages[1:]]
        return [Message(role="system", content=section), *messages]

    def system_with_section(self, system: str) -> str:
        """A system prompt with the prompt-mode tools section appended (``system`` unchanged in native mode)."""
        if self.prompt_tools is None:
            return system
        return f"{system}\n\n{self.prompt_tools.section}".strip()

    def results_messages(self, results: Sequence[ToolResult], errors: Sequence[Any] = (),
                         feedback: str = "") -> list[Message]:
        """``results_messages`` for this offer's mode; ``errors`` (malformed text calls) become the feedback."""
        if errors and self.prompt_tools is not None:
            feedback = self.prompt_tools.format.feedback(errors)
        return results_messages(results, native=self.prompt_tools is None, feedback=feedback)

    def feedback(self, errors: Sequence[Any]) -> str:
        """The text telling the model what was wrong with its malformed text calls (``""`` when none)."""
        if not errors or self.prompt_tools is None:
            return ""
        text: str = self.prompt_tools.format.feedback(errors)
        return text


class ToolTurn:
    """One model turn read by the core: the assistant message to keep, its calls, malformed-call errors
    (prompt mode) and the reply's text without the calls."""

    __slots__ = ("reply", "calls", "errors", "text", "completion")

    def __init__(self, reply: Message, calls: list[ToolCall], errors: list[Any], text: str,
                 completion: Optional[Completion] = None):
        self.reply = reply
        self.calls = calls
        self.errors = errors
        self.text = text
        self.completion = completion

    @property
    def wants_tools(self) -> bool:
        """The model called tools (well-formed or not): the loop runs them and asks again."""
        return bool(self.calls or self.errors)


class ToolLoop:
    """The tool-loop core for one agent: its kernel and text tool-call format (see the module docstring)."""

    def __init__(self, kernel: "Kernel", tool_format: str = "tool_call"):
        self.kernel = kernel
        self.tool_format = tool_format
        self._prompt_tools: Optional[PromptTools] = None

    @property
    def format(self) -> TextToolFormat:
        """The text tool-call format (a registered parser), looked up through the kernel."""
        return self.kernel.tool_format(self.tool_format)

    async def prepare(self, llm: "LLM") -> None:
        """Before a run's first tool turn: let the provider find out how its server takes tools (one probe,
        cached per server and model: see ``zagent.plugins.openai.families``). O(1) once known."""
        if getattr(llm, "tools_probe_due", False):
            await llm.aprobe_tools()  # type: ignore[attr-defined]

    def offer(self, llm: "LLM", tools: Sequence[Any], extra_specs: Sequence[ToolSpec] = ()) -> Offer:
        """What a turn with ``llm`` offers: ``tools`` (registered tools; they may run) and ``extra_specs``
        (pseudo-tools the loop answers itself; shown, never run by the kernel)."""
        specs = [t.spec for t in tools]
        if extra_specs:
            specs.extend(extra_specs)
        names = frozenset(t.name for t in tools)
        profile = llm.profile
        if not specs or profile.native_tools:
            return Offer(names, specs, True, None)
        fmt = self.tool_format
        if profile.tool_format and fmt == "tool_call":  # the model's best format, unless the agent chose one
            fmt = profile.tool_format
        prompt_tools = self._prompt_tools
        if prompt_tools is None or prompt_tools.names != tuple(s.name for s in specs) or prompt_tools.format_name != fmt:
            prompt_tools = self._prompt_tools = PromptTools(self.kernel.tool_format(fmt), tools,
                                                            extra_specs=list(extra_specs), format_name=fmt)
        return Offer(names, specs, False, prompt_tools)

    async def turn(self, llm: "LLM", offer: Offer, messages: list[Message], ctx: Optional["RunContext[Any]"], *,
                   ask: Optional[Ask] = None, add_section: bool = True, **request_options: Any) -> ToolTurn:
        """Ask the model once with ``offer`` and read its reply (``read``).

        ``messages`` is the conversation; in prompt mode the tools section is added to the request's system
        message unless ``add_section=False`` (the loop keeps it in its own messages). ``ask(request, ctx)``
        sends the request (default ``llm.asend``; a loop passes its own to stream or to make the call
        abortable). ``request_options`` go to ``llm.request`` (``response_format``, ``stream``, ...)."""
        sent = offer.with_section(messages) if add_section and offer.prompt_tools is not None else messages
        request = llm.request(sent, tools=offer.request_tools, **request_options)
        completion = await (ask or llm.asend)(request, ctx)
        limit = reply_limit(llm.profile.max_tool_calls_per_reply, ctx)
        extra = {"max_calls": limit} if limit != llm.profile.max_tool_calls_per_reply else {}  # rails lowered it
        turn = self.read(llm, offer, completion.message, messages, **extra, ctx=ctx)
        turn.completion = completion
        return turn

    def read(self, llm: "LLM", offer: Offer, reply: Message, history: Sequence[Message] = (),
             max_calls: Optional[int] = None, ctx: Optional["RunContext[Any]"] = None) -> ToolTurn:
        """The calls, malformed-call errors and text of ``reply`` under ``offer`` (``history``: the
        conversation before it, so a restated call is not run again by the native-mode text fallback).
        Past ``max_calls`` (default: the profile's ``max_tool_calls_per_reply``) calls are refused (``callcap``)."""
        limit = llm.profile.max_tool_calls_per_reply if max_calls is None else max_calls
        prompt_tools = offer.prompt_tools
        if prompt_tools is not None:
            calls, errors, text = prompt_tools.extract(reply.content or "")
            reply, calls = cap_calls(reply, calls, limit)
            calls = _grounded(llm.profile.ground_arguments or "schema", calls, offer, history)
            return ToolTurn(reply, fresh_call_ids(calls, history, ctx), errors, text)
        from_text = False
        if offer.specs and not reply.tool_calls and llm.profile.text_tool_fallback:
            reply = text_call_fallback(self.format, reply, offer.specs, history)
            if reply.tool_calls and hasattr(llm, "note_text_calls"):  # the server hands calls back as text
                llm.note_text_calls()
            from_text = bool(reply.tool_calls)
        if not reply.tool_calls:
            return ToolTurn(reply, [], [], reply.content or "")
        if len(reply.tool_calls) > limit:
            reply, _kept = cap_calls(reply, list(reply.tool_calls), limit)
        level = llm.profile.ground_arguments or ("schema" if from_text else "off")
        if level != "off":
            reply = msgspec.structs.replace(reply, tool_calls=_grounded(level, list(reply.tool_calls), offer, history))
        calls = fresh_call_ids(list(reply.tool_calls), history, ctx)  # each result must find its own call
        if any(a is not b for a, b in zip(calls, reply.tool_calls)):
            reply = msgspec.structs.replace(reply, tool_calls=calls)
        return ToolTurn(reply, calls, [], reply.content or "")

    async def run_tools(self, calls: list[ToolCall], ctx: "RunContext[Any]",
                        max_concurrency: Optional[int] = None) -> list[ToolResult]:
        """Run a batch of calls through ``Kernel.arun_tools`` (rails, the offered-tools scope, validation
        and timeouts apply), results in the calls' order."""
        if not calls:
            return []
        results: list[ToolResult] = await self.kernel.arun_tools(calls, ctx, max_concurrency=max_concurrency)
        return results


def fresh_call_ids(calls: list[ToolCall], history: Sequence[Message],
                   ctx: Optional["RunContext[Any]"] = None) -> list[ToolCall]:
    """``unique_call_ids(calls)`` with each id used before replaced by a fresh one: one of ``history`` (a small
    model copying its last id, a server numbering ids per reply) or of another conversation of ``ctx``'s run
    (``RUN_CALL_IDS``), so no two calls of a run share a ``ctx.idempotency_key`` or a result."""
    calls = unique_call_ids(calls)
    if not calls:
        return calls
    given: set[str] = ctx.shared.get_or_create(RUN_CALL_IDS, set) if ctx is not None else set()
    own = _conversation_ids(history) if history else set()  # the run's set is not copied: it grows with the run
    if any(c.id in given or c.id in own for c in calls):
        calls = [msgspec.structs.replace(c, id=new_call_id()) if c.id in given or c.id in own else c for c in calls]
    given.update(c.id for c in calls)
    return calls


def _conversation_ids(history: Sequence[Message]) -> set[str]:
    """The ids of the calls made in ``history``: native calls, and prompt mode's result blocks."""
    ids: set[str] = set()
    for m in history:
        if m.tool_calls:
            ids.update(c.id for c in m.tool_calls)
        elif m.role == "user" and m.content and "<tool_result " in m.content:
            ids.update(html.unescape(i) for i in _RESULT_ID.findall(m.content))
    return ids


#: in a run's ``ctx.shared``: the ids its agents' calls were given (a reused one is replaced: ``fresh_call_ids``)
RUN_CALL_IDS: StashKey[set[str]] = StashKey("zagent.run_call_ids")
_RESULT_ID = re.compile(r'<tool_result name="[^"]*" id="([^"]*)"')


def _grounded(level: str, calls: list[ToolCall], offer: Offer, history: Sequence[Message]) -> list[ToolCall]:
    """``grounding.ground_calls`` over the conversation so far (only when there are calls to check)."""
    if level == "off" or not calls:
        return calls
    section = offer.prompt_tools.section if offer.prompt_tools is not None else ""
    return ground_calls(calls, offer.specs, conversation_text(history, section), level)


@contextmanager
def scoped(ctx: "RunContext[Any]", offer: Offer) -> Iterator[None]:
    """Within the block, the kernel runs only ``offer.names`` for ``ctx`` (the previous scope comes back after)."""
    previous = ctx.offered_tools
    ctx.offered_tools = offer.names
    try:
        yield
    finally:
        ctx.offered_tools = previous
