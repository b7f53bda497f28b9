"""RunContext.for_agent: an agent called inside a run keeps the run and brings its own settings."""

from zagent import Kernel
from zagent.types import Usage


def test_for_agent_keeps_the_run_and_swaps_the_agents_settings():
    """The derived context shares run id, stash and metadata, has the agent's own config and fresh usage."""
    class ReadsRails:
        def zagent_config_keys(self):
            return ("rails",)

    k = Kernel(plugins=[ReadsRails()], entry_points=False)
    outer = k.context(agent="workflow", agent_config={"rails": {"deny_tools": ["x"]}}, metadata={"node": "n"})
    outer.add_usage(Usage(input_tokens=5, output_tokens=1, calls=1))
    config = {"rails": {"allow_tools": ["y"]}}
    inner = outer.for_agent("A", config)
    assert (inner.run_id, inner.agent, inner.agent_config) == (outer.run_id, "A", config)
    assert inner.agent_config is not config  # the agent's dict is not shared with the run
    assert inner.stash is outer.stash and inner.metadata is outer.metadata
    assert inner.usage == Usage()
    assert outer.agent_config == {"rails": {"deny_tools": ["x"]}}


def test_run_metadata_is_in_the_run_start_event_and_not_copied_into_the_others():
    """RunContext.metadata's documented contract: a run's run_start event carries a copy of it, the run's
    other events do not (no per-event copies on the hot path)."""
    from zagent import Kernel
    from zagent.plugins.react import ReActLoop

    class Events:
        def __init__(self):
            self.seen = []

        def zagent_event(self, event):
            self.seen.append((event.type, dict(event.data)))

    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react"], entry_points=False)
    events = Events()
    k.add_plugin(events, name="events")
    ctx = k.context(agent="bot", metadata={"batch": "b1", "item": "7"})
    ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=["done"]), agent="bot").run("hi", ctx=ctx)
    k.close()
    starts = [d for t, d in events.seen if t == "run_start"]
    assert starts == [{**starts[0], "metadata": {"batch": "b1", "item": "7"}}]
    assert all("metadata" not in d for t, d in events.seen if t != "run_start") and len(events.seen) > 2
