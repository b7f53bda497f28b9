"""``ActionRun``: one ``CustomizeAction`` call, step by step, and its ``ActionOutput``. Only offered tools run; with
tools, the output format comes after the tool phase (``format_turn``), else in the first prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Optional, Sequence

import attrs
import msgspec

from zagent.agentkit import fields as zfields
from zagent.agentkit.callcap import reply_limit
from zagent.agentkit.guardrails import check
from zagent.agentkit.holding import Held
from zagent.agentkit.runkeys import PENDING_APPROVAL
from zagent.agentkit.toolloop import NUDGE, Offer, ToolTurn, call_key
from zagent.agentkit.turns import TOOL, bound
from zagent.errors import NoAnswerError, ParseError
from zagent.types import Message, ToolCall, ToolResult, Usage

from . import asked, offloop

if TYPE_CHECKING:  # pragma: no cover
    from zagent import LLM, RunContext

    from .action import CustomizeAction

FORMAT_TURN = "Now give the final answer, formatted as follows.\n\n## Output format\n{instructions}"
"""The end of the user turn that asks for the output format once a tool phase ends (see ``format_turn``)."""
#: the format turn recaps at most this many of the last tool results, each cut to this many characters
RECAP_RESULTS = 10
RECAP_CHARS = 400


@attrs.define(repr=False, eq=False, slots=False)
class ActionOutput:
    """What one action run produced: the typed output, the raw reply and the trajectory."""

    output: Any
    raw: str
    messages: list[Message]
    tool_results: list[ToolResult]
    usage: Usage
    steps: int
    prompt: str


@attrs.define(repr=False, eq=False, slots=False)
class ActionRun:
    """The state of one ``CustomizeAction.aexecute`` call (never shared between calls)."""

    action: CustomizeAction
    llm: "LLM"
    ctx: "RunContext[Any]"
    messages: list[Message]
    offer: Offer
    response_format: Optional[dict[str, Any]] = None
    format_due: bool = False
    """The output format has not been shown yet (it comes after the tool phase)."""
    prompt: str = ""
    tool_results: list[ToolResult] = attrs.field(factory=list)
    succeeded: set[tuple[str, str]] = attrs.field(factory=set)
    """Calls (``call_key``) that ran successfully in this run."""
    calls: dict[int, ToolCall] = attrs.field(factory=dict)
    """The calls run, by their result's place in ``tool_results`` (the format turn's recap names them; a model's
    id may repeat across steps)."""
    usage: Usage = attrs.field(factory=Usage)

    async def loop(self, prompt: str) -> ActionOutput:
        """The steps of the run; within it the kernel runs only the offered tools for this run's context
        (the previous scope comes back after, as with ``toolloop.scoped``). One coroutine for the whole
        run: the await chain is resumed at every wait of every call, so each level costs per wait."""
        ctx = self.ctx
        previous = ctx.offered_tools
        ctx.offered_tools = self.offer.names  # the kernel blocks any other name
        try:
            action, core, llm, offer = self.action, self.action._tool_loop, self.llm, self.offer
            events = action.kernel.has_impls("zagent_event")
            output_spec = action._output_hint  # built once per action
            cap = reply_limit(llm.profile.max_tool_calls_per_reply, ctx)  # lowered by the rails of the run's layers
            for step in range(1, action.max_steps + 1):
                if events:
                    await self.ctx.aemit("step_start", step=step, action=action.name)
                # core.turn, inlined (one coroutine less in the await chain): the request, the call, the reading
                request = llm.request(self.messages, tools=offer.request_tools, response_format=self.response_format,
                                      output_spec=output_spec, **(bound(llm, TOOL) if self.format_due else {}))
                completion = await llm.asend(request, self.ctx)
                turn = core.read(llm, offer, completion.message, self.messages, max_calls=cap, ctx=self.ctx)
                turn.completion = completion
                self.usage = self.usage + completion.usage
                self.messages.append(turn.reply)
                if turn.wants_tools:
                    # A reply that only restates calls which already succeeded ends the tool phase (small
                    # models echo their last call instead of answering): they run again, then the format turn.
                    phase_over = self.format_due and self._restated(turn)
                    results = await core.run_tools(turn.calls, self.ctx, action.max_tool_call_concurrency)
                    if ctx.frame.get(PENDING_APPROVAL):  # held for a human: asked as the node's (turn's) interrupt
                        results = await asked.settle_awaiting(  # asked in the agent's name (actions share names)
                            ctx.agent or action.name, turn.calls, results, ctx,
                            lambda calls: core.run_tools(calls, ctx, action.max_tool_call_concurrency))
                    self.tool_results.extend(results)
                    if self.format_due:  # what the format turn needs (the recap, restated calls)
                        first = len(self.tool_results) - len(results)
                        self.calls.update((first + i, c) for i, c in enumerate(turn.calls))
                        self.succeeded.update(call_key(c) for c, r in zip(turn.calls, results) if r.state == "success")
                    self.messages.extend(self.offer.results_messages(results, turn.errors))
                    if phase_over and step < action.max_steps:
                        self.format_due = False
                        self.messages.append(self.format_turn())
                    if events:
                        await self.ctx.aemit("step_end", step=step, action=action.name,
                                             tools=[c.name for c in turn.calls])
                    continue
                text = turn.text
                if events:
                    await self.ctx.aemit("step_end", step=step, action=action.name, answered=bool(text.strip()))
                if not text.strip():
                    self.messages.append(Message(role="user", content=NUDGE))
                    continue
                if self.format_due:  # the tool phase is over: an answer already in the format stands
                    self.format_due = False
                    try:
                        output = await offloop.parse(action.parse, text)
                    except ParseError:
                        if step < action.max_steps:  # else the repair prompt shows the format
                            _drop_unjudged(self.ctx)
                            self.messages.append(self.format_turn())
                            continue
                        output = await self._parse(text)
                    return ActionOutput(output=output, raw=text, messages=self.messages, tool_results=self.tool_results,
                                        usage=self.usage, steps=step, prompt=prompt)
                output = await self._parse(text)
                return ActionOutput(output=output, raw=text, messages=self.messages, tool_results=self.tool_results,
                                    usage=self.usage, steps=step, prompt=prompt)
            raise NoAnswerError(
                f"action {action.name!r} gave no final answer within max_steps={action.max_steps}; raise max_steps, "
                "or check the trajectory (error.trajectory) for a tool that keeps failing",
                trajectory=self.messages, limit="max_steps")
        finally:
            ctx.offered_tools = previous

    def format_turn(self) -> Message:
        """The user turn asking for the final answer in the output format once the tool phase is over:
        the request, what the tools returned (bounded), then ``FORMAT_TURN``."""
        parts = [f"The request:\n{self.prompt}"]
        first = max(0, len(self.tool_results) - RECAP_RESULTS)
        recap = _recap([(self.calls.get(i), r) for i, r in enumerate(self.tool_results[first:], first)])
        if recap:
            parts.append(f"What the tools returned:\n{recap}")
        parts.append(self.action._format_turn)
        return Message(role="user", content="\n\n".join(parts))

    def _restated(self, turn: ToolTurn) -> bool:
        """Every call of ``turn`` repeats one that already succeeded (and none is malformed)."""
        return bool(turn.calls) and not turn.errors and all(call_key(c) in self.succeeded for c in turn.calls)

    async def _parse(self, text: str) -> Any:
        try:
            return await self._parsed(text)
        except ParseError as exc:  # its message quotes the reply, which a hostile server can fill with the key
            from zagent.agentkit.secrets import mask_exception
            from zagent.providerkit.metadata import models_mask

            mask = models_mask(self.llm)
            if mask is not None:
                mask_exception(exc, mask)  # its message, and the replies it keeps (raw, attempts, invalid)
            raise

    async def _parsed(self, text: str) -> Any:
        action = self.action
        try:
            return await offloop.parse(action.parse, text)
        except ParseError:
            if not action.repair:
                raise
        _drop_unjudged(self.ctx)  # the repaired answer is the one the guardrails judge and the stream shows
        values = await action._parser.aparse_with_repair(
            text, action.output_spec, self.llm, self.ctx, **action._parse_options)
        return zfields.convert(values, action.output_spec, raw=text)


def _drop_unjudged(ctx: "RunContext[Any]") -> None:
    """A streamed run's held pieces of its latest reply, which is not the answer, are dropped (``holding``)."""
    if isinstance(ctx.on_delta, Held):
        ctx.on_delta.drop_last()


def judge_text(ctx: "RunContext[Any]", agent: Any, action: Any) -> Optional[Callable[[str], Awaitable[None]]]:
    """How a streamed ``str`` answer's other held text (replies before tool calls, reasoning) is judged: read as an
    answer and given to the output guardrails (``holding.Held.release``). ``None`` for a structured answer: its
    guardrails read fields, and that text is not released."""
    if getattr(action, "parse_mode", "str") != "str":
        return None

    async def judge(text: str) -> None:
        output = await offloop.parse(action.parse, text)
        await check(ctx, "output", agent.name, output, agent.guardrails.get("output", ()))

    return judge


def keep_judged(held: Held, action: Any, output: Any) -> None:
    """Of a streamed structured answer (``parse_mode`` other than ``str``), release only what the output guardrails
    judged: the reply's pieces when its text is just the parsed fields (the format's rendering, or in ``json`` mode
    the same object, fenced or not), else one piece, the fields rendered in the format (prose, other objects or
    extra keys around them are never judged)."""
    parser = getattr(action, "_parser", None)
    text = held.last_text()
    if getattr(action, "parse_mode", "str") == "str" or not text.strip():  # str: the whole reply is the answer
        return
    values = zfields.to_dict(output)
    try:
        rendered = parser.render(values, action.output_spec, **action._parse_options)  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - a user's render_func failed: the judged values as JSON
        rendered = msgspec.json.encode(values).decode()
    if text.strip() == rendered.strip() or (action.parse_mode == "json" and _same_object(text, values)):
        return
    held.replace_last_text(rendered)


def _same_object(text: str, values: dict[str, Any]) -> bool:
    """``text`` is one JSON object (in a ```` ```json ```` fence or not) with no key twice, equal to ``values``."""
    import json

    body = text.strip()
    if body.startswith("```") and body.endswith("```") and body.count("```") == 2:
        body = body[3:-3].strip()
        body = body[4:] if body[:4].lower() == "json" else body

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({k for k, _ in items}) != len(items):
            raise ValueError("a key given twice")
        return dict(items)

    try:
        return bool(json.loads(body, object_pairs_hook=pairs) == values)
    except (ValueError, RecursionError):
        return False


def _recap(results: Sequence[tuple[Optional[ToolCall], ToolResult]]) -> str:
    """One line per ``(call, result)``: the call (name and arguments) and what it returned."""
    if not results:
        return ""
    lines = []
    for call, r in results:
        args = "" if call is None else _clip(msgspec.json.encode(call.arguments).decode())
        outcome = "returned" if r.state == "success" else f"failed ({r.state}):"
        lines.append(f"- {r.name}({args}) {outcome} {_clip(r.content or '')}")
    return "\n".join(lines)


def _clip(text: str) -> str:
    return text if len(text) <= RECAP_CHARS else text[:RECAP_CHARS] + " [...]"
