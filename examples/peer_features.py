"""What pydantic-ai and openai-agents users reach for, offline: run ``python examples/peer_features.py``.

Fallback models (``FallbackModel``), usage limits (``UsageLimits``), output validators with retries
(``ModelRetry``) and typed dependencies (``RunContext[Deps]``), each with scripted offline models
(``scripted:NAME``: no network, no model download). docs/coming-from.md maps every name.
"""

from dataclasses import dataclass

import zagent
from zagent import RunContext
from zagent.errors import RateLimitError
from zagent.plugins.actions import ModelRetry

k = zagent.Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                           "zagent.plugins.react", "zagent.plugins.rails", "zagent.plugins.fallback"],
                  entry_points=False)


def busy(request):
    raise RateLimitError("429: the first model is overloaded")


# FallbackModel: an outage (429, 5xx, a connection failure) moves the call to the next model
chain = k.llm("fallback:scripted:primary,scripted:backup",
              models=[{"model": "scripted:primary", "replies": [busy]},
                      {"model": "scripted:backup", "replies": ["answered by the backup"]}])
print("fallback:", chain.complete("hello").text)

# UsageLimits: a per-run cap on requests (tool calls, tokens) that ends the run with a clear error
def echo(text: str) -> str:
    """Echo a text."""
    return text


k.add_tool(echo)
looper = k.agent({"type": "react", "name": "looper", "tools": ["echo"], "rails": {"usage_limits": {"requests": 2}}})
looper.llm = k.llm("scripted:looper", replies=[{"tool_calls": [{"name": "echo", "arguments": {"text": "again"}}]}] * 5)
try:
    looper.chat("loop for ever", use_react=True)
    raise SystemExit("the usage limit should have ended the run")
except zagent.UsageLimitExceeded as exc:
    print("usage limit:", exc.limit, exc.allowed)


# ModelRetry: the app's own check of the parsed output; the reason goes back to the model
def in_future(output):
    if output.year <= 2026:
        raise ModelRetry("the year must be after 2026")


planner = k.agent({"name": "planner", "prompt": "When should we launch? {goal}", "inputs": [{"name": "goal"}],
                   "outputs": [{"name": "year", "type": "integer"}], "parse_mode": "json", "max_output_retries": 2})
planner.output_validators = [in_future]
planner.llm = k.llm("scripted:planner", replies=['{"year": 2020}', '{"year": 2030}'])
result = planner(goal="a moon base")
print("validated:", result.year, "after", result.message.metadata["output_retries"], "retry")


# RunContext[Deps]: the app's objects reach the tools, typed
@dataclass
class Deps:
    users: dict


def find_user(user_id: str, ctx: RunContext[Deps]) -> str:
    """Find a user's name by id."""
    return ctx.deps.users.get(user_id, "unknown")


k.add_tool(find_user)
desk = k.agent({"type": "react", "name": "desk", "tools": ["find_user"]}, deps=Deps(users={"u1": "Ann Lee"}))
desk.llm = k.llm("scripted:desk", replies=[{"tool_calls": [{"name": "find_user", "arguments": {"user_id": "u1"}}]},
                                           "u1 is Ann Lee."])
print("deps:", desk.chat("Who is u1?", use_react=True).content, "| the tool read:",
      desk.llm.requests[1].messages[-1].content)
k.close()
