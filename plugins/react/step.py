"""One ReAct step: compress the context, pick the tools to offer, ask the model once, record its decision.

``Steps`` is a base of ``ReActLoop``; ``CLARIFY`` is the ``ask_clarification`` pseudo-tool.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Optional, Sequence

from zagent.agentkit.toolloop import NUDGE, ToolLoop, call_key
from zagent.agentkit.turns import TOOL, bound
from zagent.errors import CheckpointError, NoAnswerError, ProviderError, RunAborted, ToolBlocked, ZagentError
from zagent.providerkit import new_call_id
from zagent.agentkit.runkeys import CALL_KEYS
from zagent.types import Message, ToolCall, ToolSpec

from .ends import RunEnds, _named
from .state import Decision, StepResult

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

CLARIFY = ToolSpec(
    name="ask_clarification",
    description=("Ask the user clarifying questions, only when the request cannot be done without information "
                 "the user has not given."),
    parameters={"type": "object", "properties": {"questions": {"type": "array", "items": {"type": "string"}}},
                "required": ["questions"]},
)


class CompressionFailed(ZagentError):
    """Summarising older turns failed; the step is recorded as an error and ``on_error`` decides."""



class Steps(RunEnds):
    """The step of a ``ReActLoop`` (its fields are declared on ``ReActLoop``)."""

    allow_clarification: Optional[bool]
    tool_limit: int
    pinned_tools: Sequence[str]
    max_context_messages: Optional[int]
    max_context_tokens: Optional[int]
    keep_recent: int
    on_error: str
    on_text: Optional[Any]
    on_reasoning: Optional[Any]
    _text_hold: Optional[list[Any]]
    _tool_loop: ToolLoop

    async def _step(self) -> None:
        state = self._running
        state.step += 1
        await self._emit("step_start", step=state.step)
        started = time.perf_counter()
        try:
            await self._maybe_compress()
            tools = await self._offered_tools()
            decision, reply = await self._decide(tools)
        except (RunAborted, CheckpointError):
            raise
        except Exception as exc:  # not only the step errors below: any other is Agent-Z's ABORTED (after them)
            state.steps.append(StepResult(step=state.step, action="direct_response", is_error=True,
                                          is_blocked=isinstance(exc, ToolBlocked), reason=_named(exc),
                                          duration=time.perf_counter() - started))
            await self._emit("step_end", step=state.step, error=str(exc))
            provider_error = _provider_error(exc)
            if provider_error is not None:  # the provider already retried what was worth retrying
                raise await self._fail(provider_error) from None
            if not isinstance(exc, (ToolBlocked, CompressionFailed)):
                await self._fail(exc, status="aborted")
                raise
            if self.on_error == "stop":
                raise await self._fail(NoAnswerError(f"step {state.step} failed: {exc}", trajectory=state.steps,
                                                     limit="step_error")) from exc
            await self._checkpoint()
            return
        took = time.perf_counter() - started
        state.messages.append(reply)
        state.usage = self._ctx.usage
        state.reasoning = decision.reasoning
        state.feedback = decision.feedback
        if decision.action == "use_tool":
            state.pending = list(decision.calls)
            state.finished = {}
            state.call_keys = {c.id: new_call_id() for c in state.pending}  # approvals bind these, not the model's ids
            state.approval_keys = {}
            self._ctx.frame[CALL_KEYS] = state.call_keys
        elif decision.feedback:
            state.messages.append(Message(role="user", content=decision.feedback))
            state.feedback = ""
            state.steps.append(StepResult(step=state.step, action="use_tool", is_error=True,
                                          reason="malformed tool call", result=decision.feedback, duration=took))
        elif decision.action == "ask_clarification":
            state.questions = decision.questions
            state.steps.append(StepResult(step=state.step, action="ask_clarification", reasoning=decision.reasoning,
                                          result="\n".join(decision.questions), duration=took))
        elif decision.content:
            state.final = decision.content
            state.steps.append(StepResult(step=state.step, action="direct_response", result=decision.content,
                                          reasoning=decision.reasoning, duration=took))
        else:
            state.messages.append(Message(role="user", content=NUDGE))
            state.steps.append(StepResult(step=state.step, action="direct_response", is_error=True,
                                          reason="empty reply", duration=took))
        end = {"step": state.step, "action": decision.action, "tools": [c.name for c in decision.calls]}
        if state.pending:  # the step's span stays open over its tool calls (ended in _run_batch)
            self._step_end = end
        else:
            await self._emit("step_end", **end)
        await self._checkpoint()

    async def _decide(self, tools: list[Any]) -> tuple[Decision, Message]:
        core = self._tool_loop
        if tools:
            await core.prepare(self.llm)
        clarify = clarifies(self)
        offer = core.offer(self.llm, tools, [CLARIFY] if clarify else [])
        self._ctx.offered_tools = offer.names  # the kernel blocks any other name
        turn = await core.turn(self.llm, offer, self._running.messages, self._ctx, ask=self._ask_abortable,
                               stream=self.on_text is not None, **(bound(self.llm, TOOL) if offer.specs else {}))
        decision = _decision(turn.calls, turn.text, clarify)
        if decision.action == "use_tool" and not turn.errors and offer.prompt_tools is not None:
            decision = _echo_answer(decision, turn.text, self._running.steps) or decision
        if turn.errors:
            decision.feedback = offer.feedback(turn.errors)
        return decision, turn.reply

    def _ask_abortable(self, request: Any, ctx: Optional["RunContext[Any]"]) -> Any:
        """The model call for ``request`` as an awaitable that ``abort()`` cancels (``ctx`` is the loop's own)."""
        return self._abortable(self._ask(request))

    async def _ask(self, request: Any) -> Any:
        """One model call; streamed to ``on_text`` when it is set."""
        if self.on_text is None or (request.tools and not self.llm.profile.streaming_tools):
            return await self.llm.asend(request, self._ctx)
        final = None
        if self._text_hold is not None:
            self._text_hold.append((None, ""))  # a reply starts (``ends._release_held`` judges reply by reply)
        async for chunk in self.llm.astream(request.messages, tools=request.tools or None, ctx=self._ctx,
                                            **(request.options or {})):
            said = self.on_text if chunk.type == "text" and chunk.text else self.on_reasoning \
                if chunk.type == "reasoning" else None
            if said is not None and self._text_hold is not None:  # shown once the output guardrails pass
                self._text_hold.append((said, chunk.text))
            elif said is not None:
                said(chunk.text)
            elif chunk.type == "done":
                final = chunk.completion
        if final is None:
            raise ProviderError("the stream ended without a final chunk", provider=self.llm.provider)
        return final

    async def _offered_tools(self) -> list[Any]:
        tools = self.kernel.tools(list(self.tools)) if self.tools else []
        if len(tools) <= self.tool_limit:
            return tools
        from .retrieval import aselect_tools

        # The user's request, not the latest "user" message: in prompt mode tool results and nudges are
        # user messages too, and ranking tools against a tool's output picks the wrong ones.
        query = self._running.task or next(
            (m.content for m in reversed(self._running.messages) if m.role == "user" and m.content), "")
        return await aselect_tools(tools, query, limit=self.tool_limit, pinned=self.pinned_tools,
                                   embedder=self.kernel.embedder())

    async def _maybe_compress(self) -> None:
        if self.max_context_messages is None and self.max_context_tokens is None:
            return
        from .compression import SUMMARY_KEY, compress, needs_compression

        state = self._running
        if needs_compression(state.messages, max_messages=self.max_context_messages,
                             max_tokens=self.max_context_tokens):
            try:
                compressed = await self._abortable(
                    compress(state.messages, self.llm, keep_recent=self.keep_recent, ctx=self._ctx))
            except (ProviderError, ValueError) as exc:
                raise CompressionFailed(f"compressing the context failed: {exc}") from exc
            kept = {id(m) for m in compressed}
            state.archived.extend(m for m in state.messages
                                  if id(m) not in kept and not m.metadata.get(SUMMARY_KEY))
            state.messages = compressed
            await self._emit("compressed", messages=len(state.messages))


def _provider_error(exc: Optional[BaseException]) -> Optional[ProviderError]:
    """The provider's error behind a failed step (also under a failed compression), if any.

    It ends the run whatever ``on_error`` says: a non-retryable one (auth, bad request, a
    reply that is not the protocol) fails the same way on every try, and a retryable one
    has already been retried by the provider's own policy; asking again each step would
    multiply those requests by ``max_iterations`` and hide the error behind ``NoAnswerError``.
    """
    while exc is not None and not isinstance(exc, ProviderError):
        exc = exc.__cause__
    return exc


def clarifies(loop: Any) -> bool:
    """Whether ``loop`` offers ``ask_clarification`` (``allow_clarification``; ``None``: in native mode only)."""
    clarify = loop.allow_clarification
    # prompt mode: the model asks in plain text (why: docs/architecture.md (Design notes, plugins/react/loop.py))
    return bool(loop.llm.profile.native_tools if clarify is None else clarify)


def _decision(calls: list[ToolCall], text: str, offered: bool = True) -> Decision:
    """Tool calls win over a clarification asked in the same reply (that call is answered with a
    note, so every call of the assistant message gets its result). Not ``offered``, ``ask_clarification``
    is a call like any other (the kernel blocks it: it was not offered)."""
    clarify = [c for c in calls if c.name == CLARIFY.name] if offered else []
    if clarify and len(clarify) == len(calls):
        args = clarify[0].arguments if isinstance(clarify[0].arguments, dict) else {}
        questions = args.get("questions") or []
        if not isinstance(questions, list):  # model output: a bare string, or a number or object where a list was due
            questions = [questions]
        return Decision(action="ask_clarification", reasoning=text, questions=[str(q) for q in questions])
    if calls:
        return Decision(action="use_tool", reasoning=text, calls=calls)
    return Decision(action="direct_response", reasoning="", content=text.strip())


def _echo_answer(decision: Decision, text: str, steps: Sequence[StepResult]) -> Optional[Decision]:
    """Prompt mode: a reply whose every call repeats one that already succeeded is an echo, not a request (small models
    restate ``[word_count(text='...'), 5]`` next to its result): the answer is the reply's own text, else
    those results. ``None`` when any call is new."""
    done = {call_key(ToolCall(id="", name=s.tool, arguments=s.parameters)): s.result for s in steps
            if s.action == "use_tool" and s.tool and not s.is_error and not s.is_blocked}
    if not done:
        return None
    keys = [call_key(c) for c in decision.calls if c.name != CLARIFY.name]  # restated next to a question, too
    if not keys or not all(k in done for k in keys):
        return None
    said = text.strip().strip("[](),;` \n")
    answer = said if any(ch.isalnum() for ch in said) else "\n".join(done[k] for k in dict.fromkeys(keys))
    return Decision(action="direct_response", reasoning="", content=answer)
