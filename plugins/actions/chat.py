"""``Agent.chat``: any agent answers a chat turn directly, or with the ReAct loop when it has tools.

``achat`` returns an ``AgentResponse``; with ``use_react=None`` one short model call decides. The loop is the
kernel's ``react`` agent type (a ``ConfigError`` without it). Turns, images included, are kept in short-term memory.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Optional, Sequence

import attrs
import msgspec
from zagent.errors import ConfigError
from zagent.agentkit.guardrails import check as check_guardrails, check_history, hand_over, spare
from zagent.agentkit.holding import hold
from zagent.agentkit.inputs import check_text
from zagent.agentkit.inputs import to_messages
from zagent.types import Message

from .sessions import JUDGED, append_judged
from .userturn import UserInput, check_parts, history_text, judged_text, text_of, user_turn

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

    from .agent import Agent

ROUTER = """Decide how to handle the user's request below.
Answer "yes" if it needs tools ({tools}) or several steps of work, "no" if you can answer it directly.
Reply with the single word yes or no.

Request: {request}"""

DIRECT_SYSTEM = "You are a helpful assistant. Answer the user's request directly and concisely."


@attrs.define(slots=False, eq=False, repr=False, kw_only=True)
class AgentResponse:
    """The reply of ``chat``: content, the mode used, the tools used and their results, steps and timing."""

    content: str
    mode: str
    tool_used: Optional[str] = None
    tool_result: Optional[str] = None
    steps: list[Any] = attrs.field(factory=list)
    questions: list[str] = attrs.field(factory=list)
    execution_time: float = 0.0
    metadata: dict[str, Any] = attrs.field(factory=dict)
    confidence_score: float = 1.0
    """0-1, from the run (Agent-Z's field): 1.0 for a direct answer or a run whose steps all succeeded, the
    share of steps that succeeded when some failed or were blocked, 0.0 for clarification questions."""

    def __repr__(self) -> str:
        return f"<AgentResponse {self.mode} steps={len(self.steps)} content={self.content[:60]!r}>"


async def achat(agent: "Agent", user_input: UserInput, history: Optional[Sequence[Any]] = None,
                use_react: Optional[bool] = None, *, ctx: Optional["RunContext[Any]"] = None,
                session: Optional[Any] = None) -> AgentResponse:
    """The body of ``Agent.achat`` (see the module docstring)."""
    turn = user_turn(user_input, f"the user_input of a chat with {agent.name!r}")  # text or a user Message
    text = text_of(turn)
    check_parts(agent.llm, turn)  # an image the model cannot take: an error before the routing call
    started = time.perf_counter()
    session = session if session is not None else getattr(agent, "session", None)
    given = history is not None  # the caller's (judged below); else the agent's own, judged when each was new
    if history is None and session is not None:  # the conversation so far, maybe from another process
        from .sessions import session_history

        history = await session_history(session, agent.memory_size)
    past = to_messages(history) if history is not None else agent.messages_for_chat()
    if history is not None:
        for i, message in enumerate(past):
            if message.content is not None:
                check_text(message.content, f"history message #{i} of a chat with {agent.name!r}")
    deps = getattr(agent, "deps", None)
    ctx = agent.kernel.context(agent=agent.name, agent_config=agent.run_config(),
                               deps=deps if deps is not None or ctx is None else ctx.deps,
                               **({"run_id": ctx.run_id, "metadata": dict(ctx.metadata)} if ctx is not None else {}))
    # The routing call (tools or not?) and the run it chooses are one run: one trace, one run-log entry.
    routed = use_react is None and bool(agent.chat_tools()) and agent.kernel.has_impls("zagent_event")
    if routed:
        await ctx.aemit("run_start", mode="chat")
    own = getattr(agent, "guardrails", None) or {}
    held = hold(ctx, own.get("output", ()))  # streamed: the answer waits for the output guardrails
    try:
        if own or agent.kernel.has_impls("zagent_check_input"):
            judged = judged_text(turn)  # its text parts and text files too: the model reads them
            await check_guardrails(ctx, "input", agent.name, judged, own.get("input", ()))
            if given and past:  # a stateless chat API's client wrote it: its user turns too (each text once a run)
                await check_history(ctx, agent.name, past, history_text, own.get("input", ()))
            elif past:  # memory, a session's items a chat wrote: not judged again, by a handoff's next agent either
                added = [m for m in past if session is not None and not m.metadata.get(JUDGED)]  # the app's own
                fresh = {id(m) for m in added}
                spare(ctx, [m for m in past if id(m) not in fresh])
                if added:  # a session item the app added itself (add_items): judged as a caller's history is
                    await check_history(ctx, agent.name, added, history_text, own.get("input", ()))
            hand_over(ctx, judged)  # the ReAct loop it may route into does not check it (nor the history) again
        if use_react is None:
            use_react = await needs_react(agent, text, ctx)
        engine = getattr(agent, "query_engine", None)
        if use_react:
            response = await agent._react(turn, past, ctx)
        elif engine is not None:  # llamaindex's router and its "I don't know" fallback to retrieval
            from .docchat import chat_with_documents

            response = await chat_with_documents(agent, engine, turn, past, ctx)
        else:
            response = await direct(agent, turn, past, ctx)
        if not use_react and (own or agent.kernel.has_impls("zagent_check_output")):
            # (a ReAct loop, handoffs too, checks its answer itself with the agent's guardrails before it is done)
            await check_guardrails(ctx, "output", agent.name, response.content, own.get("output", ()))
        if held is not None:  # judged above, or by the ReAct loop with the same guardrails; the rest now
            await held.release(lambda said: check_guardrails(ctx, "output", agent.name, said, own.get("output", ())),
                               response.content)
    except BaseException as exc:
        if routed:
            import asyncio

            from zagent.agentkit.secrets import error_excerpt  # masked, then cut
            await ctx.aemit("run_end", mode="chat", error=error_excerpt(exc),
                            status="cancelled" if isinstance(exc, asyncio.CancelledError) else "failed")
        raise
    finally:
        if held is not None:
            held.close()
    if routed:
        await ctx.aemit("run_end", mode="chat", status="completed", chosen=response.mode)
    response.execution_time = time.perf_counter() - started
    response.metadata["usage"] = msgspec.to_builtins(ctx.usage)
    said = [Message(role="user", content=text, parts=list(turn.parts)),  # its images too: later turns see them
            Message(role="assistant", content=response.content, name=agent.name,
                    metadata={"mode": response.mode, **response.metadata})]
    await agent._remember(said)
    if session is not None:
        await append_judged(session, [Message(role=m.role, content=m.content, name=m.name, parts=m.parts) for m in said])
    return response


async def direct(agent: "Agent", user_input: UserInput, past: list[Message], ctx: "RunContext[Any]") -> AgentResponse:
    """One model call, framed as a run (``run_start``/``run_end`` events) like a loop run; ``user_input`` is
    sent as it is (a ``Message`` with its parts)."""
    events = agent.kernel.has_impls("zagent_event")
    if events:
        await ctx.aemit("run_start", mode="direct")
    turn = user_input if isinstance(user_input, Message) else Message(role="user", content=user_input)
    messages = [Message(role="system", content=agent.chat_system_prompt()), *past, turn]
    try:
        reply = await agent.llm.asend(agent.llm.request(messages), ctx)
    except Exception as exc:
        if events:
            await ctx.aemit("run_end", status="failed", mode="direct", error=str(exc))
        raise
    if events:
        await ctx.aemit("run_end", status="completed", mode="direct", steps=1)
    return AgentResponse(content=reply.text.strip(), mode="direct", metadata={"run_id": ctx.run_id})


async def needs_react(agent: "Agent", user_input: str, ctx: "RunContext[Any]") -> bool:
    """Ask the model whether the request needs the agent's tools (False without tools, no call made)."""
    tools = agent.chat_tools()
    if not tools:
        return False
    prompt = ROUTER.format(tools=", ".join(tools), request=user_input)
    from zagent.agentkit.turns import DECIDE, bound

    reply = await agent.llm.asend(agent.llm.request(prompt, output_spec={
        "mode": "str", "fields": [{"name": "decision", "type": "string"}]}, **bound(agent.llm, DECIDE)), ctx)
    decision = read_decision(reply.text)
    return True if decision is None else decision  # an answer that is neither: the tools stay on offer


_WORDS = {"yes": True, "true": True, "react": True, "no": False, "false": False, "direct": False}


def read_decision(text: str) -> Optional[bool]:
    """The mode decision in a router reply: JSON ``{"use_react": ...}`` (Agent-Z's form; an object without
    the key is ``False``), a bare JSON bool, or a first word yes/no/true/false; ``None`` when it is none."""
    body = text.strip().strip("`").strip()
    if body[:4].lower() == "json":
        body = body[4:].strip()
    start, end = body.find("{"), body.rfind("}")
    for candidate in (body, body[start:end + 1] if 0 <= start < end else None):
        if candidate is None:
            continue
        try:
            value = msgspec.json.decode(candidate)
        except (msgspec.DecodeError, RecursionError):  # nested past the decoder's limit: no decision
            continue
        if isinstance(value, dict):
            value = value.get("use_react", False)
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return _WORDS.get(value.strip().lower())
    word = body.split(maxsplit=1)[0].strip(".,!:;\"'").lower() if body else ""
    return _WORDS.get(word)


def response_of(result: Any) -> AgentResponse:
    """An ``AgentResponse`` from a ReAct loop's result."""
    used = [s for s in result.steps if s.tool]
    return AgentResponse(
        content=result.content, mode="react", steps=result.steps, questions=result.questions,
        tool_used=used[-1].tool if used else None, tool_result=used[-1].result if used else None,
        confidence_score=confidence(result.steps, result.questions),
        metadata={"run_id": result.state.run_id, "iterations": result.state.step})


def confidence(steps: Sequence[Any], questions: Sequence[str]) -> float:
    """``AgentResponse.confidence_score`` of a loop run (see the field)."""
    if questions or not steps:
        return 0.0 if questions else 1.0
    return sum(1 for s in steps if not (s.is_error or s.is_blocked)) / len(steps)


async def react_through_kernel(agent: "Agent", user_input: UserInput, past: list[Message], ctx: "RunContext[Any]"
                               ) -> AgentResponse:
    """Run a ReAct loop for a declared agent, through the kernel's ``react`` agent type."""
    factory = agent.kernel.find("agent_types", "react")
    if factory is None:
        raise ConfigError(f"agent {agent.name!r} needs the ReAct loop for this chat (it has tools), but no 'react' "
                          "agent type is installed; install the react plugin or chat with use_react=False")
    spec: dict[str, Any] = {"type": "react", "name": agent.name, "tools": agent.chat_tools()}
    if agent.system_prompt:
        spec["system_prompt"] = agent.system_prompt
    react = factory(spec, agent.kernel)
    react.llm = agent.llm
    react.agent_config = dict(agent.agent_config)
    react.guardrails = dict(getattr(agent, "guardrails", None) or {})
    response: AgentResponse = await react._react(user_input, past, ctx)  # the react type's own run
    return response
