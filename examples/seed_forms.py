"""The seeds' own forms, offline: run ``python examples/seed_forms.py`` (no network, no model download).

EvoAgentX's first CustomizeAgent, str mode with several outputs, demonstrations by field name,
crewai's history cut, tiny-agent's TOOL:name|k=v calls, Agent-Z's confidence score, tool definitions
by toolsets and a live trajectory. Each model is a scripted offline one (``scripted:NAME``).
"""

import os
import tempfile

import zagent
from zagent.plugins.react import read_live

k = zagent.Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                           "zagent.plugins.react"], entry_points=False)

# EvoAgentX: a prompt and inputs, no outputs; called with inputs={...}; one model call
simple = k.agent({"name": "SimpleAgent", "prompt": "Answer the following question: {question}",
                  "inputs": [{"name": "question", "type": "string"}]})
simple.llm = k.llm("scripted:simple", replies=["A model that predicts text."])
print(simple(inputs={"question": "What is a language model?"}).content)

# str mode: the raw text in every output; demonstrations keyed by the field names
both = k.agent({"name": "Both", "parse_mode": "str", "inputs": [{"name": "q"}],
                "outputs": [{"name": "summary"}, {"name": "answer"}],
                "prompt_template": {"instruction": "Answer {q}", "demonstrations": [{"q": "2+2?", "summary": "4"}]}})
both.llm = k.llm("scripted:both", replies=["5"])
result = both(q="2+3?")
print(result.summary, result.answer)

# crewai's history cut: the last 10 messages, at most 200 characters each
chat = k.agent({"name": "Chatty", "prompt": "{q}", "inputs": [{"name": "q"}], "memory_size": 10, "memory_chars": 200})
chat.llm = k.llm("scripted:chatty", replies=["x" * 500])
chat.chat("hello")
print(len(chat.messages[-1].content))


# tools in toolsets, with an emoji; tiny-agent's TOOL:name|k=v calls; Agent-Z's confidence score
@zagent.tool(toolset="math", emoji="+")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


k.add_tool(add)
print([d["metadata"] for d in k.tool_definitions(toolsets=["math", "web"])])
live = os.path.join(tempfile.mkdtemp(), "live.jsonl")
# a file a spec names must be in a folder the app allows (docs/security.md): this dict is the app's own code
tiny = k.agent({"type": "react", "name": "tiny", "tools": ["add"], "tool_format": "pipe",
                "live_trajectory_path": live}, trust=True)
tiny.llm = k.llm("scripted:tiny", replies=["TOOL:add|a=2&b=3", "It is 5."], profile={"native_tools": False})
reply = tiny.chat("What is 2+3?", use_react=True)
print(reply.content, reply.tool_result, reply.confidence_score)
print([run["status"] for run in read_live(live)])
k.close()
