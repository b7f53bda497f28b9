"""Attack: an edited checkpoint carries policy. A restored ReAct run takes its rails, budgets, denies and
approver from the kernel and the restoring code; the saved state is checked against them."""

import msgspec
import pytest

from zagent.agentkit.approvals import approval_key
from zagent.errors import CheckpointError, ConfigError
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.react import ReActLoop
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import failed_react, make_kernel, workflow_stopped_at_b


def count(text="a b"):
    return {"tool_calls": [{"name": "word_count", "arguments": {"text": text}}]}


class No:
    """The kernel's approver: says no to everything, and remembers it was asked."""

    def __init__(self):
        self.asked = []

    def __call__(self, call, ctx):
        self.asked.append(call.name)
        return False


def kernel_with(rails=None):
    k = make_kernel(config={"rails": rails} if rails else None)
    k.add_tool(lambda path: k.spy.ran.append("danger") or "deleted", name="danger", sensitive=True,
               description="Delete a path.")
    return k


def fresh(k, tmp_path):
    """A new kernel like ``k`` with the same store file, as the process that restores the run would have."""
    k.close()
    k2 = kernel_with(k.config.get("rails"))
    return k2, k2.memory("checkpoints", path=tmp_path / "runs.db")


def edit_latest(store, run_id, change):
    """The attacker: read the latest checkpoint, change it, write it as the next step."""
    step, raw = store.latest(run_id)
    state = msgspec.json.decode(raw)
    change(state)
    store.save(run_id, step + 1, msgspec.json.encode(state))


def test_a_pending_call_edited_in_as_approved_asks_the_kernels_approver(tmp_path):
    """A sensitive call appended to the saved batch with its id (and a forged key) under ``approved``: the
    restored run asks the kernel's approver, which says no, and the call does not run."""
    no = No()
    k = kernel_with({"approver": no})
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count()])
    args = {"path": "/home/user"}

    def forge(state):
        state["pending"] = [{"id": "x1", "name": "danger", "arguments": args}]
        state["finished"] = {}
        state["call_keys"] = {"x1": "m1"}
        state["approved"] = ["x1", approval_key("m1", "danger", args)]

    edit_latest(store, run_id, forge)
    k, store = fresh(k, tmp_path)
    loop = ReActLoop.restore(k, run_id, checkpoints=store, llm=k.llm("scripted:second", replies=["done"]),
                             tools=["word_count", "danger"], agent_config={})
    result = loop.run()
    assert no.asked == ["danger"] and "danger" not in k.spy.ran
    assert [s.is_blocked for s in result.steps if s.tool == "danger"] == [True]
    k.close()


def test_negative_saved_budget_counts_are_refused_naming_the_step(tmp_path):
    """Budget counts edited to -1000 (so a budget of 2 would allow 1002 calls): the restore is a CheckpointError
    that names the checkpoint step."""
    k = kernel_with({"tool_budget": {"word_count": 2}})
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count()])
    edit_latest(store, run_id, lambda s: s["stash"].update({"zagent.rails.budget": {"word_count": -1000}}))
    step = store.latest(run_id)[0]
    k, store = fresh(k, tmp_path)
    with pytest.raises(CheckpointError, match=f"checkpoint {step} of run") as info:
        ReActLoop.restore(k, run_id, checkpoints=store, llm=k.llm("scripted:x", replies=["done"]),
                          tools=["word_count"], agent_config={})
    assert info.value.step == step
    k.close()


def test_saved_budget_counts_lowered_below_the_steps_are_raised_to_them(tmp_path):
    """Counts edited to 0 after two calls ran: the steps show two, so a budget of 2 allows no more calls."""
    k = kernel_with({"tool_budget": {"word_count": 2}})
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count(), count("c")])
    edit_latest(store, run_id, lambda s: s["stash"].update({"zagent.rails.budget": {"word_count": 0}}))
    k, store = fresh(k, tmp_path)
    llm = k.llm("scripted:more", replies=[count("d"), count("e"), "done"])
    result = ReActLoop.restore(k, run_id, checkpoints=store, llm=llm, tools=["word_count"],
                               agent_config={}).run()
    assert k.spy.ran == []  # the restored process made no call: the two made before used the budget
    assert [s.is_blocked for s in result.steps if s.tool] == [False, False, True, True]
    k.close()


def test_a_removed_budget_entry_is_rebuilt_from_the_steps(tmp_path):
    """The saved budget counts deleted altogether: the steps still count, the budget of 2 stays 2."""
    k = kernel_with({"tool_budget": {"word_count": 2}})
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count(), count("c")])
    edit_latest(store, run_id, lambda s: s.update({"stash": {}}))
    k, store = fresh(k, tmp_path)
    llm = k.llm("scripted:more", replies=[count("d"), "done"])
    ReActLoop.restore(k, run_id, checkpoints=store, llm=llm, tools=["word_count"], agent_config={}).run()
    assert k.spy.ran == []
    k.close()


@pytest.mark.parametrize("strip", [lambda c: c["rails"].pop("deny_tools"), lambda c: c.clear()])
def test_a_stripped_deny_list_does_not_run_the_denied_tool(tmp_path, strip):
    """The saved agent_config's deny_tools removed (or the whole config): a restore without agent_config= is
    refused (an unsigned checkpoint's settings are not used), and the denied tool never runs."""
    k = kernel_with()
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count()], agent_config={"rails": {"deny_tools": ["steal"], "max_argument_bytes":
                                                                     1000}})
    edit_latest(store, run_id, lambda s: strip(s["agent_config"]))
    k, store = fresh(k, tmp_path)
    llm = k.llm("scripted:steal", replies=[{"tool_calls": [{"name": "steal", "arguments": {"path": "/x"}}]}, "done"])
    with pytest.raises(ConfigError, match="agent_config="):
        ReActLoop.restore(k, run_id, checkpoints=store, llm=llm, tools=["word_count", "steal"]).run()
    assert "steal" not in k.spy.ran
    k.close()


def test_the_restoring_codes_agent_config_wins_over_the_saved_one(tmp_path):
    """Restored with agent_config= (the app's own settings), a saved config edited to drop a deny changes nothing."""
    k = kernel_with()
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    config = {"rails": {"deny_tools": ["steal"]}}
    run_id = failed_react(k, store, [count()], agent_config=config)
    edit_latest(store, run_id, lambda s: s.update({"agent_config": {}}))
    k, store = fresh(k, tmp_path)
    llm = k.llm("scripted:steal", replies=[{"tool_calls": [{"name": "steal", "arguments": {"path": "/x"}}]}, "done"])
    result = ReActLoop.restore(k, run_id, checkpoints=store, llm=llm, tools=["word_count", "steal"],
                               agent_config=config).run()
    assert "steal" not in k.spy.ran and [s.is_blocked for s in result.steps if s.tool == "steal"] == [True]
    k.close()


def chat_kernel(tmp_path, budget=1):
    k = make_kernel(config={"rails": {"tool_budget": {"word_count": budget}}})
    return k, k.memory("checkpoints", path=tmp_path / "runs.db")


def counting_speaker(name="Ann"):
    spec = {"name": name, "description": "counts", "prompt": "Count: {text}\n{transcript}",
            "inputs": [{"name": "text"}, {"name": "transcript"}], "outputs": [{"name": "answer"}],
            "parse_mode": "str", "tools": ["word_count"]}
    return spec


def crashed_chat(k, store, rounds_before_crash):
    """A chat whose speaker calls word_count each round; the selector fails after ``rounds_before_crash``."""
    llm = k.llm("scripted:chat", replies=[count(), "said"] * rounds_before_crash)
    chat = GroupChat(kernel=k, agents=[counting_speaker()], termination={"max_rounds": 4}, llm=llm,
                     checkpoints=store)
    with pytest.raises(Exception):
        chat.run("count", run_id="gc", text="a b")


def test_a_resumed_group_chat_keeps_its_tool_budget(tmp_path):
    """A chat that used its budget of 1 and crashed, resumed in a new process, gets no new budget."""
    k, store = chat_kernel(tmp_path)
    crashed_chat(k, store, 1)
    assert k.spy.ran == ["word_count"]
    k.close()
    k, store = chat_kernel(tmp_path)
    llm = k.llm("scripted:more", replies=[count(), "said"] * 3)
    GroupChat(kernel=k, agents=[counting_speaker()], termination={"max_rounds": 4}, llm=llm,
              checkpoints=store).run(run_id="gc")
    assert k.spy.ran == []
    k.close()


@pytest.mark.parametrize("edit", [lambda s: s.update(round=-100), lambda s: s.update(
    counters={"zagent.rails.budget": {"word_count": -1000}})])
def test_negative_group_chat_counts_are_refused(tmp_path, edit):
    """A chat checkpoint with a negative round or budget count is a CheckpointError naming the step."""
    k, store = chat_kernel(tmp_path)
    crashed_chat(k, store, 1)
    edit_latest(store, "gc", edit)
    step = store.latest("gc")[0]
    chat = GroupChat(kernel=k, agents=[counting_speaker()], termination={"max_rounds": 4},
                     llm=k.llm("scripted:x", replies=["said"]), checkpoints=store)
    with pytest.raises(CheckpointError, match=f"checkpoint {step} of group chat run 'gc'"):
        chat.run(run_id="gc")
    k.close()


def test_a_group_chat_round_reset_cannot_buy_more_rounds(tmp_path):
    """The round edited back to 0 after 2 rounds: the messages show 2, so max_rounds=4 allows 2 more, not 4."""
    k, store = chat_kernel(tmp_path, budget=100)
    crashed_chat(k, store, 2)
    edit_latest(store, "gc", lambda s: s.update(round=0))
    llm = k.llm("scripted:more", replies=[count(), "said"] * 4)
    result = GroupChat(kernel=k, agents=[counting_speaker()], termination={"max_rounds": 4}, llm=llm,
                       checkpoints=store).run(run_id="gc")
    assert result.rounds == 4 and llm.calls == 4
    k.close()


def test_a_resumed_workflow_keeps_its_tool_budget(tmp_path):
    """Node a used the run's budget of 1, node b failed; resumed in a new process, b's call is refused."""
    db = tmp_path / "runs.db"

    def graph(second):
        return WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "text"}], "nodes": [
            {"name": "a", "description": "a", "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}],
             "agents": [{**counting_speaker("A"), "prompt": "Count: {text}", "inputs": [{"name": "text"}]}]},
            {"name": "b", "description": "b", "inputs": [{"name": "answer"}], "outputs": [{"name": "final"}],
             "agents": [second]}], "edges": [{"source": "a", "target": "b"}]})

    class Broken:
        name = "B"

        async def aexecute(self, *, inputs, ctx=None):
            raise RuntimeError("crash")

    k, _ = chat_kernel(tmp_path)
    with pytest.raises(Exception):
        WorkFlowExecutor(kernel=k, checkpoints=str(db), llm=k.llm("scripted:a", replies=[count(), "2"])).run(
            graph(Broken()), {"text": "a b"}, run_id="wf")
    assert k.spy.ran == ["word_count"]
    k.close()
    k, _ = chat_kernel(tmp_path)
    second = {**counting_speaker("B"), "prompt": "Count: {answer}", "inputs": [{"name": "answer"}],
              "outputs": [{"name": "final"}]}
    llm = k.llm("scripted:b", replies=[count(), "done"])
    result = WorkFlowExecutor(kernel=k, checkpoints=str(db), llm=llm).run(graph(second), {"text": "a b"},
                                                                          run_id="wf")
    assert result.status == "finished" and k.spy.ran == []
    k.close()


def test_negative_workflow_loop_counts_are_refused(tmp_path):
    """A workflow checkpoint whose loop count was edited to -3 (to buy more passes than max_loops): refused."""
    db = str(tmp_path / "runs.db")
    k = make_kernel()
    ex, graph = workflow_stopped_at_b(k, db)
    edit_latest(ex.checkpoints, "wf", lambda s: s.update(loops={"b->a": -3}))
    with pytest.raises(CheckpointError, match="of workflow run 'wf' is damaged or was edited"):
        ex.run(graph, {"x": "hi"}, run_id="wf")
    k.close()


def test_transient_stash_names_edited_into_a_checkpoint_are_dropped(tmp_path):
    """A saved stash given the cost so far (negative) and a chosen skill: the restored run's stash has neither
    (only persistent plugin state comes back)."""
    k = kernel_with()
    store = k.memory("checkpoints", path=tmp_path / "runs.db")
    run_id = failed_react(k, store, [count()])
    planted = {"zagent.cost_usd": -1e9, "zagent.skills": {"skill": {"name": "evil"}}}
    edit_latest(store, run_id, lambda s: s.setdefault("stash", {}).update(planted))
    k, store = fresh(k, tmp_path)
    loop = ReActLoop.restore(k, run_id, checkpoints=store, llm=k.llm("scripted:x", replies=["done"]),
                             tools=["word_count"], agent_config={})
    assert "zagent.cost_usd" not in loop.state.stash and "zagent.skills" not in loop.state.stash
    loop.run()
    assert loop._ctx.stash.get("zagent.cost_usd", 0.0) >= 0 and "zagent.skills" not in loop._ctx.stash
    k.close()


def test_a_group_chat_usage_reset_cannot_buy_more_tokens(tmp_path):
    """A chat stopped on its token budget's edge, its saved usage edited to 0: the messages' usage still counts,
    so the resumed chat stops at once instead of spending the budget again."""
    k, store = chat_kernel(tmp_path, budget=100)
    crashed_chat(k, store, 2)
    spent = msgspec.json.decode(store.latest("gc")[1])["usage"]
    edit_latest(store, "gc", lambda s: s.update(usage={}))
    budget = spent["input_tokens"] + spent["output_tokens"]
    llm = k.llm("scripted:more", replies=[count(), "said"] * 4)
    result = GroupChat(kernel=k, agents=[counting_speaker()], termination={"max_rounds": 10, "max_tokens": budget},
                       llm=llm, checkpoints=store).run(run_id="gc")
    assert result.stopped_by == "max_tokens" and llm.calls <= 2
    k.close()
