"""Images in chat turns: ``Agent.chat``, ReAct agents and loops and handoffs take a ``Message`` with parts,
carried unchanged to the provider and into memory and checkpoints, never raw into trajectories or the run log."""

import base64
import json

import msgspec
import pytest

from zagent import ConfigError, Kernel, Message
from zagent.errors import ProviderConfigError
from zagent.types import Part

from tests.kernels import with_add

from .conftest import PLUGINS, qa_spec

PIXELS = b"\x89PNG\r\n\x1a\n" + b"SECRET-PIXELS-0123456789"
ADD = {"content": None, "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}


@pytest.fixture
def kernel():
    """A fresh kernel with offline providers, parsers, actions, react and the memory plugin, plus `add`."""
    k = with_add(Kernel(plugins=[*PLUGINS, "zagent.plugins.react", "zagent.plugins.memory"], entry_points=False,
                        strict=True))
    yield k
    k.close()


def _react(kernel, replies, **over):
    agent = kernel.agent({"type": "react", "name": "eyes", **over})
    agent.llm = kernel.llm("scripted:eyes", replies=replies)
    return agent


def _image_parts(request):
    return [p for m in request.messages for p in m.parts]


def test_a_direct_chat_sends_the_image_part_to_the_model(kernel):
    """A ReAct agent without tools answers directly; the request's user message carries the image part."""
    agent = _react(kernel, ["a cat"])
    response = agent.chat(Message.user("what is this?", image=PIXELS))
    assert response.mode == "direct" and response.content == "a cat"
    last = agent.llm.requests[0].messages[-1]
    assert (last.role, last.content, [p.data for p in last.parts]) == ("user", "what is this?", [PIXELS])


def test_a_react_chat_keeps_the_image_in_every_step(kernel):
    """With tools, the loop's requests all carry the user's image (the first and the one after the tool)."""
    agent = _react(kernel, [ADD, "5, and a cat"], tools=["add"])
    response = agent.chat(Message.user("add and look", image=PIXELS), use_react=True)
    assert response.mode == "react" and response.content == "5, and a cat"
    assert [len(_image_parts(r)) for r in agent.llm.requests] == [1, 1]


def test_the_image_stays_in_memory_for_the_next_turn(kernel):
    """The turn is remembered with its part: a later chat sends the earlier image in its history."""
    agent = _react(kernel, ["a cat", "still a cat"])
    agent.chat(Message.user("what is this?", image=PIXELS))
    agent.chat("and now?")
    assert agent.messages[0].parts[0].data == PIXELS
    history = agent.llm.requests[1].messages
    assert [m.content for m in history[1:]] == ["what is this?", "a cat", "and now?"]
    assert history[1].parts[0].data == PIXELS


def test_a_declared_agents_chat_takes_an_image(kernel):
    """A declared (customize) agent's chat sends the Message as it is in a direct answer."""
    agent = kernel.agent(qa_spec())
    agent.llm = kernel.llm("scripted:qa-eyes", replies=["a dog"])
    assert agent.chat(Message.user("what is it?", image="https://example.com/dog.png")).content == "a dog"
    assert agent.llm.requests[0].messages[-1].parts[0].url == "https://example.com/dog.png"


def test_a_text_only_model_refuses_the_image_before_any_request(kernel):
    """A model whose profile takes no images: ProviderConfigError before the routing call or any other."""
    agent = _react(kernel, ["never"], tools=["add"])
    agent.llm = kernel.llm("scripted:blind", replies=["never"], profile={"input_media": ()})
    with pytest.raises(ProviderConfigError, match="cannot take image parts"):
        agent.chat(Message.user("look", image=PIXELS))
    assert agent.llm.llm.calls == 0 and agent.messages == []


def test_a_react_loop_refuses_the_image_before_the_run_starts(kernel):
    """ReActLoop.run with an image on a text-only model fails before any request and leaves no state."""
    loop = _react(kernel, ["never"], tools=["add"]).loop()
    loop.llm = kernel.llm("scripted:blind-loop", replies=["never"], profile={"input_media": ()})
    with pytest.raises(ProviderConfigError, match="cannot take image parts"):
        loop.run(Message.user("look", image=PIXELS))
    assert loop.state is None and loop.llm.llm.calls == 0


@pytest.mark.parametrize("bad, why", [
    (Message(role="assistant", content="hi"), "must be a user message"),
    (Message(role="user", content="hi", tool_calls=[{"name": "add"}]), "must be a user message"),
    (Message(role="user", content="x", parts=["not a part"]), "is not a zagent.Part"),
    (Message(role="user", content="x", parts=[Part(type="text", text="bad \ud800")]), "text part #0"),
    (42, "must be text or a zagent.Message"),
])
def test_a_hostile_turn_is_a_config_error_naming_the_problem(kernel, bad, why):
    """A turn that is not a user Message of text and known parts is refused before any request."""
    agent = _react(kernel, ["never"])
    with pytest.raises(ConfigError, match=why):
        agent.chat(bad)
    assert agent.llm.llm.calls == 0


def test_an_oversized_inline_part_built_by_hand_is_refused(kernel, monkeypatch):
    """A Part built directly (skipping Part.image's bound) over the inline limit is refused at the turn."""
    import zagent.plugins.actions.userturn as userturn

    monkeypatch.setattr(userturn, "MAX_INLINE_BYTES", 16)
    agent = _react(kernel, ["never"])
    with pytest.raises(ConfigError, match="over the 16-byte limit"):
        agent.chat(Message(role="user", content="x", parts=[Part(type="image", data=PIXELS, media_type="image/png")]))


def test_the_trajectory_has_a_placeholder_and_the_checkpoint_the_bytes(kernel, tmp_path):
    """The trajectory line has a placeholder (no bytes, no base64); the checkpoint keeps the bytes to resume."""
    path = tmp_path / "runs.jsonl"
    agent = _react(kernel, [ADD, "done"], tools=["add"])
    agent.trajectory_path, agent.checkpoints = str(path), kernel.memory("checkpoints", path=str(tmp_path / "cp.db"))
    loop = agent.loop()
    loop.run(Message.user("look", image=PIXELS))
    line = path.read_text()
    assert "SECRET-PIXELS" not in line and base64.b64encode(PIXELS).decode()[:24] not in line
    assert json.loads(line)["conversations"][1]["parts"][0].startswith("<image/png ")
    from zagent.plugins.react.state import state_decoder

    _step, saved = agent.checkpoints.latest(loop.state.run_id)
    assert [p.data for m in state_decoder.decode(saved).messages for p in m.parts] == [PIXELS]


def test_run_log_never_holds_the_bytes(tmp_path):
    """With the run log on, a chat with an image writes no pixel bytes nor their base64 to the log file."""
    log = tmp_path / "log.db"
    k = with_add(Kernel(plugins=[*PLUGINS, "zagent.plugins.react", "zagent.plugins.memory", "zagent.plugins.runlog"],
                        entry_points=False, strict=True, config={"log": str(log)}))
    agent = _react(k, [ADD, "done"], tools=["add"])
    agent.chat(Message.user("look", image=PIXELS), use_react=True)
    k.close()
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert log.exists() and b"add" in data
    assert b"SECRET-PIXELS" not in data and base64.b64encode(PIXELS)[:24] not in data


def test_a_handoff_hands_the_image_on(kernel):
    """A handed-over conversation gives the next agent the user's image too."""
    billing = _react(kernel, ["the invoice shows 5"])
    billing.name = "billing"
    billing.llm = kernel.llm("scripted:billing", replies=["the invoice shows 5"])
    triage = _react(kernel, [{"content": None, "tool_calls": [
        {"name": "transfer_to_billing", "arguments": {"reason": "an invoice"}}]}])
    triage.handoffs = [billing]
    response = triage.chat(Message.user("read my invoice", image=PIXELS), use_react=True)
    assert response.content == "the invoice shows 5" and response.metadata["answered_by"] == "billing"
    assert [p.data for p in billing.llm.requests[0].messages[-1].parts] == [PIXELS]


def test_a_session_keeps_the_image(kernel, tmp_path):
    """A chat with a SQLite session stores the user turn with its part; a new agent reads it back."""
    from zagent.plugins.memory.session import SQLiteSession

    session = SQLiteSession("s1", str(tmp_path / "s.db"))
    agent = _react(kernel, ["a cat"])
    agent.chat(Message.user("what is this?", image=PIXELS), session=session)
    items = session.get_items()
    assert items[0].parts[0].data == PIXELS and msgspec.json.encode(items[0])


def test_a_streamed_react_run_takes_an_image(kernel):
    """ReActAgent.stream(Message) runs on the message; the request carries its image, the answer comes last."""
    agent = _react(kernel, ["a cat"])
    events = list(agent.stream(Message.user("what is this?", image=PIXELS)))
    assert events[-1].type == "result" and events[-1].result.content == "a cat"
    assert [p.data for p in agent.llm.requests[0].messages[-1].parts] == [PIXELS]
