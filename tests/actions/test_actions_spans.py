"""An agent run is a span: run_start/run_end paired, also when the run fails."""

import pytest


class Seen:
    def __init__(self):
        self.events = []

    def zagent_event(self, event):
        self.events.append(event)


def test_a_run_whose_model_fails_still_ends_its_span_with_the_error(kernel):
    """The LLM raises: run_end follows with the run's span id, outcome error and the exception named."""
    seen = Seen()
    kernel.add_plugin(seen)
    agent = kernel.agent({"type": "customize", "name": "Echo", "prompt": "{question}",
                          "inputs": [{"name": "question"}], "outputs": [{"name": "answer"}], "parse_mode": "str"})
    agent.llm = kernel.llm("scripted:none", replies=[])  # no reply left: the call raises
    with pytest.raises(Exception) as info:
        agent(question="hi")
    start = next(e for e in seen.events if e.type == "run_start")
    end = next(e for e in seen.events if e.type == "run_end")
    assert end.span_id == start.span_id and end.data["outcome"] == "error"
    assert type(info.value).__name__ in end.data["error"]
