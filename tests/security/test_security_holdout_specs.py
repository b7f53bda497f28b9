"""Hold-out round three: hostile spec values, lying models and edited checkpoints on paths the first rounds did
not take (sub-agents, handoffs, a selector's model, template values).

Attacks tried (session 2026-12-03, redteam) and whether they got through before this module's fixes:

- a group chat ``selection.llm`` given as a mapping (``{"model": "record:...", "path": "/home/me/.bashrc"}``):
  GOT THROUGH as a crash (accepted at load, an ``AttributeError`` at the first turn; nothing written) -- fixed:
  a ``ConfigError`` at load
- a kernel ``tool_budget`` of 1 per run against a ReAct agent calling a sub-agent (agents as tools) three times,
  and against a handoff: held (one run, one budget)
- an edited ReAct checkpoint whose pending batch calls a tool the restoring code does not offer: held (blocked)
- a ReAct checkpoint holding JSON nested 200,000 deep: held (``ConfigError``, no crash)
- an input value ``{b}`` filling a prompt that also names ``{b}``: held (one pass, never expanded)
"""

import pathlib

import pytest

from zagent import ConfigError

from .conftest import agent_spec, failed_react, make_kernel

COUNT = {"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
BUDGET = {"rails": {"tool_budget": {"word_count": 1}}}


def scripted(name, replies):
    return {"model": f"scripted:{name}", "replies": replies}


def test_a_selector_llm_given_as_a_mapping_is_refused_at_load(tmp_path):
    """``selection: {"policy": "llm", "llm": {...}}``: a ConfigError naming the key, before any turn."""
    k = make_kernel()
    member = agent_spec(name="A", description="a", inputs=[{"name": "task"}], prompt="{task}", llm="test:offline")
    spec = {"type": "groupchat", "name": "c", "agents": [member, {**member, "name": "B"}], "max_rounds": 2,
            "selection": {"policy": "llm", "llm": {"model": "record:test:offline", "path": str(tmp_path / "x.jsonl")}}}
    with pytest.raises(ConfigError, match="selection 'llm' must be a 'provider:model' string"):
        k.agent(spec)
    assert not (tmp_path / "x.jsonl").exists()
    k.close()


def test_a_sub_agent_called_three_times_shares_the_runs_tool_budget():
    """A ReAct agent calls its sub-agent three times, each wanting ``word_count``: one call runs in all."""
    k = make_kernel(config=BUDGET)
    sub = {"type": "react", "name": "Sub", "description": "counts", "tools": ["word_count"],
           "llm_config": scripted("sub", [COUNT, "sub done"] * 3)}
    call_sub = {"tool_calls": [{"name": "Sub", "arguments": {"task": "count a b"}}]}
    boss = k.agent({"type": "react", "name": "Boss", "agents": [sub],
                    "llm_config": scripted("boss", [call_sub] * 3 + ["all done"])})
    boss.chat("go")
    assert k.spy.ran == ["word_count"]
    k.close()


def test_a_handoff_shares_the_runs_tool_budget():
    """Agent A counts once, then hands off to B, which wants to count again: B's call is over the budget."""
    k = make_kernel(config=BUDGET)
    b = {"type": "react", "name": "B", "description": "b", "tools": ["word_count"],
         "llm_config": scripted("b", [COUNT, "b done"])}
    transfer = {"tool_calls": [{"name": "transfer_to_B", "arguments": {"reason": "b"}}]}
    a = k.agent({"type": "react", "name": "A", "tools": ["word_count"], "handoffs": [b],
                 "llm_config": scripted("a", [COUNT, transfer])})
    a.chat("go")
    assert k.spy.ran == ["word_count"]
    k.close()


def restored(k, store, run_id, tools):
    from zagent.plugins.react import ReActLoop

    return ReActLoop.restore(k, run_id, checkpoints=store, llm=k.llm("scripted:again", replies=["done"]),
                             tools=tools, agent_config={})


def test_a_pending_call_to_a_tool_not_offered_is_blocked_after_restore(tmp_path):
    """The attacker edits the saved batch to call ``steal``; the restoring code offers only ``word_count``."""
    import msgspec

    k = make_kernel()
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [COUNT], tools=("word_count",))
    step, raw = store.latest(run_id)
    state = msgspec.json.decode(raw)
    state["pending"], state["finished"] = [{"id": "x1", "name": "steal", "arguments": {"path": "/etc/shadow"}}], {}
    store.save(run_id, step + 1, msgspec.json.encode(state))
    result = restored(k, store, run_id, ["word_count"]).run()
    assert "steal" not in k.spy.ran and [s.is_blocked for s in result.steps if s.tool == "steal"] == [True]
    k.close()


def test_a_checkpoint_nested_200000_deep_is_a_config_error(tmp_path):
    """A saved state with JSON nested 200,000 deep: refused saying it is damaged, not a crash."""
    k = make_kernel()
    store = k.memory("checkpoints", path=pathlib.Path(tmp_path) / "runs.db")
    run_id = failed_react(k, store, [COUNT], tools=("word_count",))
    step, raw = store.latest(run_id)
    store.save(run_id, step + 1, raw.replace(b'"task":', b'"junk":' + b"[" * 200_000 + b"]" * 200_000 + b',"task":', 1))
    with pytest.raises(ConfigError, match="damaged"):
        restored(k, store, run_id, ["word_count"])
    k.close()


def test_an_input_value_naming_another_placeholder_is_not_expanded():
    """``a="{b}"`` in a prompt ``A: {a} B: {b}``: the model reads ``{b}`` literally, once."""
    k = make_kernel()
    agent = k.agent(agent_spec(prompt="A: {a} B: {b}", inputs=[{"name": "a"}, {"name": "b"}],
                               llm_config=scripted("m", ["ok"])))
    agent(a="{b} {question}", b="SECRET")
    [prompt] = [m.content for m in agent.llm.requests[-1].messages]
    assert prompt.startswith("A: {b} {question} B: SECRET") and prompt.count("SECRET") == 1
    k.close()
