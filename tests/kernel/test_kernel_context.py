"""RunContext.for_agent: an agent called inside a run keeps the run and brings its own settings."""

from zagent import Kernel
from zagent.types import Usage


def test_for_agent_keeps_the_run_and_swaps_the_agents_settings():
    """The derived context shares run id, stash and metadata, has the agent's own config and fresh usage."""
    k = Kernel(plugins=[], entry_points=False)
    outer = k.context(agent="workflow", agent_config={"rails": {"deny_tools": ["x"]}}, metadata={"node": "n"})
    outer.add_usage(Usage(input_tokens=5, output_tokens=1, calls=1))
    config = {"rails": {"allow_tools": ["y"]}}
    inner = outer.for_agent("A", config)
    assert (inner.run_id, inner.agent, inner.agent_config) == (outer.run_id, "A", config)
    assert inner.agent_config is not config  # the agent's dict is not shared with the run
    assert inner.stash is outer.stash and inner.metadata is outer.metadata
    assert inner.usage == Usage()
    assert outer.agent_config == {"rails": {"deny_tools": ["x"]}}
