"""``chat()`` with documents: route a turn to the agent's ``QueryEngine``, and fall back to it on "I don't know".

Used when ``agent.query_engine`` is set; the response's ``metadata`` says whether it fell back and what it cites.
docs/retrieval.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from zagent import RunContext

    from .agent import Agent
    from .chat import AgentResponse

RETRIEVAL_ROUTER = """Decide how to answer the request below.
Answer "retrieval" if it needs facts from the documents ({about}), "direct" if general knowledge answers it.
Reply with the single word retrieval or direct.

Request: {request}"""

_DONT_KNOW = re.compile(
    r"\b(i\s+(do\s*n[o']?t|do\s+not|don't)\s+know|i\s+am\s+not\s+sure|i'm\s+not\s+sure|"
    r"not\s+mentioned|(does\s+not|doesn't|do\s+not|don't)\s+mention|no\s+(relevant\s+)?information|"
    r"(do\s+not|don't|doesn't|does\s+not)\s+have\s+(any\s+)?(information|data|details|access)|"
    r"(cannot|can't|can\s+not|unable\s+to)\s+(answer|find|determine|say|know)|"
    r"not\s+(enough|sufficient)\s+information|unknown\s+to\s+me|no\s+idea)\b"
    r"|不知道|不清楚|没有提到|未提及|无法回答|没有相关信息", re.IGNORECASE)


def says_dont_know(text: str) -> bool:
    """Whether an answer admits it does not know (llamaindex's fallback trigger, in more words)."""
    return bool(_DONT_KNOW.search(text.replace("\u2019", "'").replace("\u2018", "'")))


async def needs_retrieval(agent: "Agent", engine: Any, user_input: str, ctx: "RunContext[Any]") -> bool:
    """Ask the model whether the request needs the documents (llamaindex's router: retrieval or direct)."""
    about = getattr(engine, "description", "") or "the documents of this agent"
    reply = await agent.llm.asend(agent.llm.request(RETRIEVAL_ROUTER.format(about=about, request=user_input),
                                                    output_spec={"mode": "str", "fields": [
                                                        {"name": "decision", "type": "string"}]}), ctx)
    answer = reply.text.lower()
    found = [(answer.find(word), word) for word in ("retriev", "direct") if word in answer]
    return bool(found) and min(found)[1] == "retriev"  # the word said first; neither: direct (then fallback)


async def from_documents(engine: Any, user_input: str, ctx: "RunContext[Any]", **metadata: Any) -> "AgentResponse":
    """The query engine's answer as a chat response (mode ``retrieval``)."""
    from .chat import AgentResponse

    found = await engine.aquery(user_input, ctx)
    return AgentResponse(content=found.response, mode="retrieval", metadata={
        "run_id": ctx.run_id, "citations": list(found.citations),
        "sources": list(dict.fromkeys(c.source for c in found.sources)), **metadata})


async def chat_with_documents(agent: "Agent", engine: Any, user_input: Any, past: list[Any],
                              ctx: "RunContext[Any]") -> "AgentResponse":
    """Route, answer, and fall back to retrieval on "I don't know" (docs/retrieval.md); ``user_input``
    is text or a user ``Message`` (its text is what routing and retrieval read, the direct answer sees it all)."""
    from .chat import direct

    text = user_input if isinstance(user_input, str) else user_input.content or ""
    if getattr(engine, "route", True) and await needs_retrieval(agent, engine, text, ctx):
        return await from_documents(engine, text, ctx)
    response = await direct(agent, user_input, past, ctx)
    if says_dont_know(response.content):
        return await from_documents(engine, text, ctx, fallback=True, direct_answer=response.content)
    return response
