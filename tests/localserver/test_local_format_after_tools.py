"""The calculator agent against a loopback server replaying what the 0.5B model did (issue 22's gap): shown a
JSON format next to the tools it answered the sum itself; shown the task and tools only, it calls `add`, then
restates the call; the format comes after that tool phase."""

from __future__ import annotations

import json

from tests.servers.openai_server import completion

from .conftest import EXAMPLES, bodies

CALC = str(EXAMPLES / "calculator_agent.json")
CALL = '{"name": "add", "arguments": {"a": 17, "b": 25}}'


def test_calculator_format_follows_the_tool_phase_native(server, zagent):
    """Native mode: no format in the first request; the call restated as text is an echo (not run again) and
    the format turn follows it."""
    server.then(completion(CALL), completion(CALL), completion('{"result": 42, "explanation": "17 + 25"}'))
    code, out, err = zagent("run", CALC, "--input", "question=What is 17 + 25?", "--json")
    assert code == 0, err
    assert json.loads(out) == {"result": 42, "explanation": "17 + 25"}
    sent = bodies(server)
    assert "Output format" not in json.dumps(sent[0]["messages"]) and sent[0]["tools"][0]["function"]["name"] == "add"
    assert "## Output format" in sent[2]["messages"][-1]["content"]
    assert sent[2]["messages"][-2] == {"role": "assistant", "content": CALL}
    assert err.count("add -> success") == 1


def test_calculator_format_follows_the_tool_phase_prompt_tools(server, zagent):
    """Prompt-tools mode: the same, with the tools in the system prompt and results as a user message."""
    server.then(completion(f"<tool_call>{CALL}</tool_call>"), completion("The sum is 42."),
                completion('{"result": 42, "explanation": "17 + 25"}'))
    code, out, err = zagent("run", CALC, "--input", "question=What is 17 + 25?", "--profile", "native_tools=false",
                            "--json")
    assert code == 0, err
    assert json.loads(out)["result"] == 42
    sent = bodies(server)
    assert "tools" not in sent[0] and "Output format" not in sent[0]["messages"][-1]["content"]
    assert sent[2]["messages"][-2]["content"] == "The sum is 42."
    assert "## Output format" in sent[2]["messages"][-1]["content"]
