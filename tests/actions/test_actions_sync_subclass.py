"""An Action subclass may implement only the sync ``execute`` (issue 17, item 7)."""

import threading

import pytest

from zagent.plugins.actions import Action, Agent


class Shout(Action):
    """A sync-only action: upper-cases its input, recording the thread it ran in."""

    def execute(self, llm, inputs, *, ctx, **kw):
        self.thread = threading.current_thread()
        return {"text": inputs["text"].upper()}


class Nothing(Action):
    """Implements neither aexecute nor execute."""


def test_sync_only_action_runs_through_an_agent(kernel):
    """An agent runs a sync-only action; its return value is the output."""
    action = Shout(name="shout", inputs=[{"name": "text"}], outputs=[{"name": "text"}])
    agent = Agent(kernel=kernel, name="shouter", actions=[action], llm="test:model")
    result = agent.execute("shout", inputs={"text": "hi"})
    assert result.output == {"text": "HI"}


def test_sync_only_action_runs_off_the_event_loop_thread(kernel):
    """The sync execute runs in a worker thread, so it may block without stalling the loop."""
    action = Shout(name="shout", inputs=[{"name": "text"}], outputs=[{"name": "text"}])
    agent = Agent(kernel=kernel, name="shouter", actions=[action], llm="test:model")
    agent.execute("shout", inputs={"text": "hi"})
    assert action.thread is not threading.main_thread()


def test_action_without_either_method_names_what_to_override(kernel):
    """An Action implementing neither method raises a TypeError naming the class and both methods."""
    agent = Agent(kernel=kernel, name="idle", actions=[Nothing(name="nothing")], llm="test:model")
    with pytest.raises(TypeError) as info:
        agent.execute("nothing", inputs={})
    assert "Nothing" in str(info.value) and "aexecute" in str(info.value) and "execute" in str(info.value)
