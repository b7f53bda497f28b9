"""``zagent_run_end(result, ctx)``: called when a declared agent's run returns; a failing implementation is logged."""

import zagent
from zagent import hookimpl

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"]
SPEC = {"name": "qa", "prompt": "Answer {q}", "inputs": [{"name": "q"}], "outputs": [{"name": "answer"}],
        "parse_mode": "str", "llm": "test:m"}


class Seen:
    def __init__(self):
        self.results = []

    @hookimpl
    def zagent_run_end(self, result, ctx):
        self.results.append((result, ctx.run_id, ctx.agent))


class Broken:
    @hookimpl
    def zagent_run_end(self, result, ctx):
        raise RuntimeError("observer bug")


def test_run_end_gets_the_result_and_context():
    """A declared agent's run calls zagent_run_end once with its AgentResult and its run context."""
    seen = Seen()
    k = zagent.Kernel([*PLUGINS, seen], entry_points=False)
    result = k.agent(SPEC)(q="why?")
    [(got, run_id, agent)] = seen.results
    assert got is result and agent == "qa" and run_id


def test_a_failing_implementation_does_not_change_the_result():
    """An implementation that raises is logged; the caller still gets the run's result."""
    k = zagent.Kernel([*PLUGINS, Broken()], entry_points=False)
    assert k.agent(SPEC)(q="why?").answer
