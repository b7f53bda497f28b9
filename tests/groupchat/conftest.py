"""Fixtures for the group chat tests: a fresh offline kernel per test, and small speakers."""

import pytest

from zagent import Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.groupchat"]


@pytest.fixture
def kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield k
    k.close()


class Echo:
    """A native speaker: says its name, the round, and how many messages it saw."""

    def __init__(self, name, description="", say=None):
        self.name = name
        self.description = description or f"the {name}"
        self.say = say
        self.turns = []

    def speak(self, turn):
        self.turns.append(turn)
        if self.say is not None:
            return self.say(turn) if callable(self.say) else self.say
        return f"{self.name} in round {turn.round}"


def echoes(*names):
    return [Echo(n) for n in names]


def request_text(request):
    """Everything a request says, for callable scripted replies keyed on the prompt."""
    return "\n".join(m.content or "" for m in request.messages)


class Events:
    """A plugin recording (type, data) of every event."""

    def __init__(self):
        self.seen = []

    def zagent_event(self, event):
        self.seen.append((event.type, dict(event.data), event.run_id))

    def types(self):
        return [t for t, _, _ in self.seen]

    def of(self, type_):
        return [d for t, d, _ in self.seen if t == type_]
