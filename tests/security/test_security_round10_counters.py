"""Round ten: a workflow's per-run counters (``tool_budget``, ``usage_limits``) removed from an unsigned checkpoint
store, so the resumed run starts them from zero.

Attacks tried (session 2026-12-06, redteam round 10) and whether they got through before this module's fixes:

- ``tool_budget: {word_count: 1}``; node ``a`` used the call, node ``b`` failed; the store's counters are dropped and
  the run resumed: GOT THROUGH (``b`` made a second call on a budget of one) -- fixed: each trace entry keeps the
  run's counts as they stood when its node settled, and a restore raises the counters to the highest the trace shows
  (``plugins/workflow/result.py``, ``checked``)
- the same with ``usage_limits.tool_calls: 1`` and with ``usage_limits.requests``: GOT THROUGH -- fixed the same way
- (variant) a group chat's ``tool_budget`` counter dropped: GOT THROUGH (a chat rebuilt only its usage counts) --
  fixed: each turn's message keeps the run's counts (``metadata["counts"]``, ``plugins/groupchat/turn.py``) and a
  restore raises the counters to them (``plugins/groupchat/state.py``, ``counters.raise_counters``)
- the counters dropped and node ``a``'s trace entry removed, ``a`` kept as done: would reset what ``a`` spent -- fixed:
  a node in ``done`` without its ``done`` trace entry is a ``CheckpointError``. Not covered: the trace entries'
  counts edited down as well (an unsigned store is data: sign checkpoints)
"""

import msgspec
import pytest

from zagent.errors import CheckpointError, ProviderError, UsageLimitExceeded

from .conftest import edit_latest, make_kernel

pytestmark = pytest.mark.timeout(60)

COUNT = {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
A = {"name": "A", "description": "counts", "prompt": "Count: {text}", "inputs": [{"name": "text"}],
     "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["word_count"]}
B = {**A, "name": "B", "prompt": "Count again: {answer}", "inputs": [{"name": "answer"}],
     "outputs": [{"name": "again"}]}
BUDGET = "zagent.rails.budget"
USAGE = "zagent.rails.usage"


def graph():
    from zagent.plugins.workflow import WorkFlowGraph

    return WorkFlowGraph.from_dict({"name": "w", "goal": "count", "inputs": [{"name": "text"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}],
         "agents": [A]},
        {"name": "b", "description": "b", "inputs": [{"name": "answer"}], "outputs": [{"name": "again"}],
         "agents": [B]}], "edges": [{"source": "a", "target": "b"}]})


def run(db, rails, replies, ran):
    """The workflow under the kernel's ``rails``, its agents answering ``replies``; what ran goes to ``ran``."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed

    k = make_kernel(config={"rails": rails})
    llm = k.llm("scripted:w", replies=replies)
    try:
        return WorkFlowExecutor(kernel=k, llm=llm, checkpoints=db).run(graph(), {"text": "a b"}, run_id="wf")
    except WorkFlowFailed as exc:
        return exc.result
    finally:
        ran.extend(k.spy.ran)
        run.requests = len(llm.requests)
        k.close()


def first_half(db, rails):
    """``a`` counts once and answers; ``b``'s model is down: the run fails with ``a`` done."""
    ran = []
    result = run(db, rails, [COUNT, "2", ProviderError("down", provider="scripted")], ran)
    assert result.status == "failed" and ran == ["word_count"]
    return ran


def drop(*names):
    def change(state):
        for name in names:
            state["counters"].pop(name, None)
    return change


@pytest.mark.parametrize("rails,dropped", [({"tool_budget": {"word_count": 1}}, BUDGET),
                                           ({"usage_limits": {"tool_calls": 1}}, USAGE)], ids=["budget", "usage"])
def test_a_workflows_tool_count_is_not_reset_by_dropping_its_counter(tmp_path, rails, dropped):
    """Attack: budget of one call per run, used by ``a``; ``b`` failed. The unsigned store's counter is dropped and
    the run resumed: ``b``'s call is refused (budget) or ends the run (usage limit), never a second call."""
    db = str(tmp_path / "runs.db")
    ran = first_half(db, rails)
    edit_latest(db, "wf", drop(BUDGET, USAGE))
    try:
        run(db, rails, [COUNT, "done", "done"], ran)
    except UsageLimitExceeded as exc:
        assert "tool_calls=1" in str(exc)
    assert ran == ["word_count"]


def test_a_workflows_requests_limit_is_not_reset_by_dropping_its_counter(tmp_path):
    """Attack: ``usage_limits.requests: 4``; ``a`` made 2 requests, ``b``'s first failed. Counters dropped, resumed:
    the run still counts the 3 requests its trace shows, so ``b`` gets the one that is left, not 4 more."""
    db, rails = str(tmp_path / "runs.db"), {"usage_limits": {"requests": 4}}
    first_half(db, rails)
    edit_latest(db, "wf", drop(BUDGET, USAGE))
    result = run(db, rails, [{"content": None, "tool_calls": [{"name": "nothing", "arguments": {}}]}] * 6, [])
    assert result.status == "failed" and "requests=4" in result.errors["b"] and run.requests == 1


def test_a_resumed_workflow_keeps_its_counts_without_an_edit(tmp_path):
    """The honest resume (nothing edited): the counts stand as saved; ``b``'s call is refused on a budget of one."""
    db, rails = str(tmp_path / "runs.db"), {"tool_budget": {"word_count": 1}}
    ran = first_half(db, rails)
    assert run(db, rails, [COUNT, "done"], ran).status == "finished" and ran == ["word_count"]


def test_the_trace_entries_keep_the_counts_of_the_run(tmp_path):
    """Each settled node's trace entry carries the run's budget and usage counts at that point (what a restore
    raises the counters to)."""
    db, rails = str(tmp_path / "runs.db"), {"tool_budget": {"word_count": 5}, "usage_limits": {"requests": 9}}
    first_half(db, rails)
    k = make_kernel()
    state = msgspec.json.decode(k.memory("checkpoints", path=db).latest("wf")[1])
    k.close()
    (done,) = [e for e in state["trace"] if e["node"] == "a" and e["status"] == "done"]
    assert done["counts"][BUDGET] == {"word_count": 1} and done["counts"][USAGE]["requests"] == 2


@pytest.mark.parametrize("count", [-1, "9", True])
def test_an_edited_count_in_the_trace_is_refused(tmp_path, count):
    """A trace entry's count that is not a whole number >= 0 is a ``CheckpointError`` naming the checkpoint."""
    db, rails = str(tmp_path / "runs.db"), {"tool_budget": {"word_count": 1}}
    first_half(db, rails)

    def change(state):
        state["trace"][0]["counts"] = {BUDGET: {"word_count": count}}
    edit_latest(db, "wf", change)
    with pytest.raises(CheckpointError, match=r"checkpoint \d+ of workflow run 'wf' .*trace"):
        run(db, rails, [COUNT, "done"], [])


def test_a_done_node_without_its_trace_entry_is_refused(tmp_path):
    """Attack: the counters and ``a``'s trace entry are removed, ``a`` kept as done (so it is not run again): the
    store no longer agrees with itself; the run is not resumed (``CheckpointError`` naming the node)."""
    db, rails = str(tmp_path / "runs.db"), {"tool_budget": {"word_count": 1}}
    ran = first_half(db, rails)

    def change(state):
        drop(BUDGET, USAGE)(state)
        state["trace"] = [e for e in state["trace"] if e["node"] != "a"]
    edit_latest(db, "wf", change)
    with pytest.raises(CheckpointError, match="'a'"):
        run(db, rails, [COUNT, "done"], ran)
    assert ran == ["word_count"]


def test_a_group_chats_tool_budget_is_not_reset_by_dropping_its_counter(tmp_path):
    """Attack (variant): ``tool_budget: {word_count: 1}``; Ann's turn used it, Bob's model was down. The unsigned
    store's budget counter is dropped and the chat resumed: GOT THROUGH before (a second call; a chat rebuilt only its
    usage). Defence: each turn's message keeps the run's counts (``metadata["counts"]``), a restore raises to them."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    db, ran = str(tmp_path / "runs.db"), []
    spec = {**A, "inputs": [{"name": "task"}], "prompt": "Go: {task}"}

    def chat(ann, bob, resume=None):
        k = make_kernel(config={"rails": {"tool_budget": {"word_count": 1}}})
        try:
            agents = [CustomizeAgent.from_dict({**spec, "name": n}, k, llm=k.llm("scripted:" + n, replies=r))
                      for n, r in (("Ann", ann), ("Bob", bob))]
            group = GroupChat(kernel=k, agents=agents, max_rounds=4, checkpoints=db)
            return group.resume(resume) if resume else group.run("talk", run_id="gc")
        finally:
            ran.extend(k.spy.ran)
            k.close()

    with pytest.raises(ProviderError):
        chat([COUNT, "a1"], [ProviderError("down", provider="scripted")])
    edit_latest(db, "gc", drop(BUDGET, USAGE))
    chat([COUNT, "a2"] * 3, [COUNT, "b"] * 3, resume="gc")
    assert ran == ["word_count"]
