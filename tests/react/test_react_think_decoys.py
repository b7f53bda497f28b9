"""Attack: in the ReAct loop a tool call or answer inside <think> is never run or returned (issue 16)."""

import pytest

from zagent.plugins.react import ReActLoop, read_trajectories

from tests.kernels import with_wipe

from .conftest import call


@pytest.fixture
def wiped(kernel):
    """A destructive tool that records each run (it must never run in these tests)."""
    return with_wipe(kernel)


def loop_for(kernel, replies, profile=None, **kw):
    llm = kernel.llm("scripted:m", replies=replies, profile=profile or {})
    return ReActLoop(kernel=kernel, llm=llm, tools=["add", "wipe"], **kw), llm


DECOY_CALL = '<tool_call>{"name": "wipe", "arguments": {"path": "/"}}</tool_call>'


def test_prompt_mode_decoy_call_inside_think_never_runs(kernel, wiped):
    """Prompt-mode tools: only the call after </think> runs."""
    reply = f'<think>Option: {DECOY_CALL}. Too risky.</think>\n<tool_call>{{"name": "add", "arguments": {{"a": 1, "b": 2}}}}</tool_call>'
    loop, _ = loop_for(kernel, [reply, "3"], profile={"native_tools": False})
    result = loop.run("1+2?")
    assert wiped == [] and [s.tool for s in result.steps if s.action == "use_tool"] == ["add"]
    assert result.content == "3"


def test_prompt_mode_unclosed_think_is_not_an_answer_or_a_call(kernel, wiped):
    """A reply cut inside <think> runs nothing and is not taken as the answer."""
    loop, _ = loop_for(kernel, [f"<think>{DECOY_CALL}", "fine"], profile={"native_tools": False})
    result = loop.run("q")
    assert wiped == [] and result.content == "fine"


def test_native_mode_answer_excludes_decoy(kernel, wiped):
    """Native tools: the final answer is the text after </think>, and the decoy call never runs."""
    loop, _ = loop_for(kernel, [f"<think>{DECOY_CALL}</think>Done."])
    result = loop.run("q")
    assert wiped == [] and result.content == "Done."


def test_trajectory_keeps_reasoning_beside_the_answer(kernel, tmp_path, wiped):
    """The trajectory line keeps the model's reasoning, outside the answer's value."""
    path = tmp_path / "t.jsonl"
    loop, _ = loop_for(kernel, [call("add", a=1, b=1), "<think>1+1 is 2</think>2"], trajectory_path=str(path))
    loop.run("1+1?")
    turns = next(read_trajectories(str(path)))["conversations"]
    last = [t for t in turns if t["from"] == "gpt"][-1]
    assert last["value"] == "2" and last["reasoning"] == "1+1 is 2"


def test_streaming_loop_gives_reasoning_to_its_own_callback(kernel, wiped):
    """With on_text and on_reasoning set, think spans reach on_reasoning and never on_text."""
    text, thought = [], []
    loop, _ = loop_for(kernel, [f"<think>{DECOY_CALL}</think>Fine."], on_text=text.append, on_reasoning=thought.append)
    result = loop.run("q")
    assert "".join(text) == "Fine." == result.content and "wipe" in "".join(thought) and wiped == []


def test_chat_cli_prints_reasoning_to_stderr_not_the_answer(capsys):
    """zagent chat's reasoning printer writes to stderr (dimmed only on a terminal), never stdout."""
    from zagent.plugins.react.cli import _show_reasoning

    _show_reasoning("pondering")
    out = capsys.readouterr()
    assert out.out == "" and out.err == "pondering"


def test_checkpoint_keeps_reasoning_and_signed_blocks(kernel, tmp_path, wiped):
    """A checkpointed run (SQLite file) keeps the assistant turn's reasoning and its signed thinking block."""
    import msgspec

    from zagent import Completion, Message, ToolCall
    from zagent.plugins.react.state import ReActState

    block = {"type": "thinking", "thinking": "add them", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}
    turn = Completion(message=Message(role="assistant", tool_calls=[ToolCall(id="t1", name="add", arguments={"a": 1, "b": 2})],
                                      reasoning="add them", reasoning_blocks=[block]), finish_reason="tool_calls")
    store = kernel.memory("checkpoints", path=str(tmp_path / "c.db"))
    loop, _ = loop_for(kernel, [turn, "3"], checkpoints=store)
    result = loop.run("1+2?")
    _, data = store.latest(result.state.run_id)
    state = msgspec.json.decode(data, type=ReActState)
    kept = [m for m in state.messages if m.role == "assistant" and m.tool_calls][0]
    assert kept.reasoning == "add them" and kept.reasoning_blocks == [block]
