"""Round thirteen, approvals and checkpoints: a yes given to the question a paused run showed, moved to another call,
speaker or tool through an unsigned store's edited question and "asked" record; a yes replayed by a group chat
nested in a workflow node (a new run id each time it runs); the spent-approvals folder others can write.

Attacks tried (session 2026-12-07, redteam round 13) and whether they got through before this module's fixes (12
tried, 10 got through, all fixed):

- the waiting question's text and the run's record of the call asked (a count raised from 0 to 1, which a restore
  keeps) rewritten to ``danger("/")`` while the replayed model proposes ``"/"``; the person resumes by run id with
  "yes" to the ``"/tmp/x"`` they were shown: a declared agent's node, a ReAct node, a group-chat turn, the waiting
  speaker moved to another speaker, and another function registered under the tool's name with the record of the
  tool asked about edited to it: GOT THROUGH (5) -- fixed: when a call is put to a person, a mark sealed under the
  answer key (``answer_signer``: the checkpoint key, else the user's own key) over the run, its random name, the
  position, the call's digest and the tool is kept with the record; a yes approves a call only with that mark
  (``plugins/actions/asked.py``, ``_held_mark``)
- a group chat used as a workflow node (a run of its own, a new run id each time the node runs): signed, replayed by
  the resume of a later question, and signed, rolled back to the step holding the yes: GOT THROUGH (2) -- fixed: a
  yes is bound to the run that owns the questions (``Asking.run``: the workflow's, the chat's), not to the run id of
  the agent under it; unsigned: held (asked again)
- the folder of spent approvals (``$XDG_DATA_HOME/zagent/approvals-ran``), zagent's data folder holding it, or a
  folder the user's own link names, writable by every user; another user deletes the records and the signed store is
  rolled back to the yes: GOT THROUGH (3) -- fixed: such a folder (or one owned by another user, or a data home
  writable by others without the sticky bit) is a ``ConfigError`` naming it, and no approved call runs
  (``kernel/agentkit/spent.py``, ``_check_folder``); folders 0775 in the user's own private group are used
- held: a stale ``approve=["c1"]`` sent again after the model reused ``c1`` for another held call (the id is
  replaced); guards: the honest resume of a node and of a chat turn, folders made 0775 by a umask of 002
"""
import sqlite3

import pytest

from .conftest import edit_latest, make_kernel

pytestmark = pytest.mark.timeout(60)


class _Undecided:
    """The kernel's approver: "a person decides later" (None)."""

    def __call__(self, call, ctx):
        return None


def _ops_kernel(ran, **config):
    """A fresh kernel with a sensitive ``danger(path)`` that records each path it runs on in ``ran``."""
    k = make_kernel(config={"rails": {"approver": _Undecided()}, **config})

    def danger(path: str) -> str:
        """Delete a path."""
        ran.append(path)
        return "deleted " + path

    k.add_tool(danger, sensitive=True)
    return k


def _delete(path):
    return {"content": None, "tool_calls": [{"name": "danger", "arguments": {"path": path}}]}


CLEANER = {"type": "customize", "name": "ops", "description": "cleans", "prompt": "Do this: {goal}",
           "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "tools": ["danger"], "parse_mode": "str"}


def _one_node(agent=None):
    from zagent.plugins.workflow import WorkFlowGraph

    return WorkFlowGraph.from_dict({"name": "ops", "goal": "clean up", "inputs": [{"name": "goal"}], "edges": [],
                                    "nodes": [{"name": "clean", "description": "clean", "inputs": [{"name": "goal"}],
                                               "outputs": [{"name": "answer"}], "agents": [agent or CLEANER]}]})


def _run_flow(ran, db, replies, graph, answer=None, **config):
    from zagent.plugins.workflow import WorkFlowExecutor

    k = _ops_kernel(ran, **config)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=list(replies)), checkpoints=db)
        if answer is None:
            return ex.run(graph, {"goal": "free disk"}, run_id="wf")
        return ex.resume("wf", graph=graph, answer=answer)
    finally:
        k.close()


def _digest(agent, name, arguments, callers=()):
    """The digest binding a question about a call (public: agent, tool and arguments, as ``question_of`` makes it)."""
    import hashlib

    from zagent.agentkit.signing import canonical

    return hashlib.sha256(canonical([*callers, agent, name]) + b"\0" + canonical(arguments).decode().encode()
                          ).hexdigest()[:32]


def _redirect_question(old, new, agent="ops"):
    """An edit moving the question asked about ``danger(old)`` to ``danger(new)``: the stored question's text, and
    the run's record of the call asked at that position (a count raised from 0 to 1, which a restore keeps)."""
    was, now = _digest(agent, "danger", {"path": old}), _digest(agent, "danger", {"path": new})

    def change(state):
        for asked in (state.get("interrupts") or {}).values():
            asked["question"] = asked["question"].replace(f'"{old}"', f'"{new}"')
        for counts in (state.get("counters") or {}).values():
            for key in [k for k in counts if was in k]:
                counts[key.replace(was, now)] = counts[key]

    return change


def test_an_edited_question_and_asked_record_do_not_move_a_workflow_yes_to_another_call(tmp_path):
    """Attack (unsigned store): the node paused on ``danger("/tmp/x")``, shown to the person; the store's waiting
    question and its record of the call asked are rewritten to ``danger("/")``, and the replayed model proposes
    ``"/"``. The person resumes the run by id with "yes" (to what they were shown). Held: ``"/"`` does not run."""
    ran, db = [], str(tmp_path / "wf.db")
    first = _run_flow(ran, db, [_delete("/tmp/x")], _one_node())
    assert first.status == "paused" and '"/tmp/x"' in first.interrupts[0].question
    edit_latest(db, "wf", _redirect_question("/tmp/x", "/"))
    try:
        _run_flow(ran, db, [_delete("/"), "done"], _one_node(), answer="yes")
    except Exception as exc:  # refused is fine: what matters is that nothing ran
        print("refused:", exc)
    assert ran == []


def _chat(ran, db, replies, answer=None, **config):
    """Group chat ``gc`` of one declared speaker ``ops`` (may call ``danger``), two rounds at most."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    k = _ops_kernel(ran, **config)
    try:
        spec = {**CLEANER, "inputs": [{"name": "task"}], "prompt": "Do this: {task}"}
        agent = CustomizeAgent.from_dict(spec, k, llm=k.llm("scripted:ops", replies=list(replies)))
        group = GroupChat(kernel=k, agents=[agent], max_rounds=1, checkpoints=db)
        return group.resume("gc", answer=answer) if answer else group.run("free disk", run_id="gc")
    finally:
        k.close()


def test_an_edited_question_and_asked_record_do_not_move_a_group_chat_yes_to_another_call(tmp_path):
    """Attack (unsigned store): as in a workflow, in a group chat's turn: the waiting question and the record of the
    call asked are rewritten to ``danger("/")``, the replayed speaker proposes ``"/"``, the person says "yes" to the
    ``"/tmp/x"`` they were shown. Held: ``"/"`` does not run."""
    ran, db = [], str(tmp_path / "gc.db")
    first = _chat(ran, db, [_delete("/tmp/x")])
    assert first.status == "paused" and '"/tmp/x"' in first.interrupts[0].question

    def change(state):
        _redirect_question("/tmp/x", "/")(state)
        asked = state.get("interrupt") or {}
        asked["question"] = asked.get("question", "").replace('"/tmp/x"', '"/"')

    edit_latest(db, "gc", change)
    try:
        _chat(ran, db, [_delete("/"), "done"], answer="yes")
    except Exception as exc:  # refused is fine: what matters is that nothing ran
        print("refused:", exc)
    assert ran == []


REACT_CLEANER = {"type": "react", "name": "ops", "description": "cleans", "tools": ["danger"]}


def test_an_edited_question_and_asked_record_do_not_move_a_react_nodes_yes_to_another_call(tmp_path):
    """Attack (unsigned store): as above, the node's agent a ReAct agent (its calls asked by ``arun_asking``).
    Held: ``"/"`` does not run on the yes given to ``"/tmp/x"``."""
    ran, db = [], str(tmp_path / "wf.db")
    first = _run_flow(ran, db, [_delete("/tmp/x")], _one_node(REACT_CLEANER))
    assert first.status == "paused" and '"/tmp/x"' in first.interrupts[0].question
    edit_latest(db, "wf", _redirect_question("/tmp/x", "/"))
    try:
        _run_flow(ran, db, [_delete("/"), "done"], _one_node(REACT_CLEANER), answer="yes")
    except Exception as exc:
        print("refused:", exc)
    assert ran == []


def test_an_unedited_paused_run_still_runs_the_call_its_yes_was_given_to(tmp_path):
    """Guard (no attack): the sealed mark of the asked call does not stop the honest resume: the yes runs the call
    shown, once, in a workflow node and in a group-chat turn."""
    ran = []
    assert _run_flow(ran, str(tmp_path / "wf.db"), [_delete("/tmp/x")], _one_node()).status == "paused"
    assert _run_flow(ran, str(tmp_path / "wf.db"), [_delete("/tmp/x"), "done"], _one_node(), answer="yes").ok
    assert _chat(ran, str(tmp_path / "gc.db"), [_delete("/tmp/y")]).status == "paused"
    assert _chat(ran, str(tmp_path / "gc.db"), [_delete("/tmp/y"), "done"], answer="yes").status == "completed"
    assert ran == ["/tmp/x", "/tmp/y"]


KEY = "round13-key-" + "0123456789abcdef" * 2


def _steps(db, run_id):
    with sqlite3.connect(db) as c:
        return [r[0] for r in c.execute("SELECT step FROM checkpoints WHERE run_id = ? ORDER BY step", (run_id,))]


@pytest.mark.parametrize("shared", ["approvals-ran", "zagent", "symlink"])
def test_a_spent_record_folder_others_can_write_is_not_trusted(tmp_path, monkeypatch, shared):
    """Attack (signed store): the folder of spent approvals (or zagent's data folder holding it, or the folder a
    link of the user's names) was made writable by every user (a shared ``XDG_DATA_HOME``, an old umask); another
    user deletes the record of the person's yes, and the store is rolled back to the step holding it. Defence:
    zagent does not use a record folder others can write: the call is not run on a yes it cannot record, and the
    error names the folder and the fix."""
    import os

    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    if shared == "symlink":
        (tmp_path / "shared").mkdir(mode=0o777)
        os.chmod(tmp_path / "shared", 0o777)
        (data / "zagent").mkdir(parents=True)
        (data / "zagent" / "approvals-ran").symlink_to(tmp_path / "shared")
    else:
        (data / "zagent" / "approvals-ran").mkdir(parents=True)
        os.chmod(data / "zagent" / ("approvals-ran" if shared == "approvals-ran" else ""), 0o777)
    ran, db = [], str(tmp_path / "wf.db")
    assert _run_flow(ran, db, [_delete("/tmp/x")], _one_node(), checkpoint_key=KEY).status == "paused"
    answered = _steps(db, "wf")[-1] + 1
    errors = []
    try:
        _run_flow(ran, db, [_delete("/tmp/x"), "done"], _one_node(), answer="yes", checkpoint_key=KEY)
    except Exception as exc:
        errors.append(str(exc))
    for record in (data / "zagent" / "approvals-ran").iterdir():  # the other user, through the open folder
        record.unlink()
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM checkpoints WHERE run_id = 'wf' AND step > ?", (answered,))
    from zagent.agentkit import spent

    monkeypatch.setattr(spent, "_HERE", set())  # the rolled-back run is continued by another process
    try:
        _run_flow(ran, db, [_delete("/tmp/x"), "done"], _one_node(), checkpoint_key=KEY)
    except Exception as exc:
        errors.append(str(exc))
    assert len(ran) <= 1, ran
    assert ran == [] and any("approvals-ran" in e and "other users" in e for e in errors), errors


def _chat_node_flow(ran, db, answer=None, **config):
    """Workflow ``wf``: one node whose agent is a group chat of two declared speakers, Alice (calls
    ``danger("/a")``) then Bob (calls ``danger("/b")``); both calls need the person's yes."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = _ops_kernel(ran, **config)
    try:
        speakers = [CustomizeAgent.from_dict({**CLEANER, "name": name, "inputs": [{"name": "task"}],
                                              "prompt": "Do this: {task}"}, k,
                                             llm=k.llm(f"scripted:{name}", replies=[_delete(path), "done"] * 3))
                    for name, path in (("Alice", "/a"), ("Bob", "/b"))]
        chat = GroupChat(kernel=k, agents=speakers, max_rounds=2, name="chat")
        graph = WorkFlowGraph.from_dict({"name": "w", "goal": "clean", "inputs": [{"name": "task"}], "edges": [],
                                         "nodes": [{"name": "n", "description": "clean", "inputs": [{"name": "task"}],
                                                    "outputs": [{"name": "content"}], "agents": [chat]}]})
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:wf", replies=["x"]), checkpoints=db)
        return ex.resume("wf", graph=graph, answer=answer) if answer else ex.run(graph, {"task": "clean"}, run_id="wf")
    finally:
        k.close()


@pytest.mark.parametrize("key", [None, KEY], ids=["unsigned", "signed"])
def test_a_chat_node_replayed_after_its_second_question_does_not_run_the_first_call_twice(tmp_path, key):
    """Attack: a node is a group chat (a run of its own, a new run id each time it runs); Alice's ``danger("/a")``
    is approved and runs, then Bob's ``danger("/b")`` pauses the node; the resume replays the node from its start.
    Defence: Alice's yes is spent: ``/a`` runs once (the chat's own new run id does not make it a new yes)."""
    ran, db = [], str(tmp_path / "wf.db")
    config = {"checkpoint_key": key} if key else {}
    assert _chat_node_flow(ran, db, **config).status == "paused"
    second = _chat_node_flow(ran, db, answer="yes", **config)
    assert second.status == "paused" and '"/b"' in second.interrupts[0].question, second
    _chat_node_flow(ran, db, answer="yes", **config)
    assert ran.count("/a") == 1, ran


def test_a_signed_chat_node_rolled_back_to_its_yes_does_not_run_the_call_again(tmp_path, monkeypatch):
    """Attack (signed store): a node's group chat ran Alice's approved ``danger("/a")``; the store is rolled back to
    the step holding the yes and the run continued by another process. Defence: the call does not run again."""
    ran, db = [], str(tmp_path / "wf.db")
    assert _chat_node_flow(ran, db, checkpoint_key=KEY).status == "paused"
    answered = _steps(db, "wf")[-1] + 1
    _chat_node_flow(ran, db, answer="yes", checkpoint_key=KEY)
    assert ran == ["/a"]
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM checkpoints WHERE run_id = 'wf' AND step > ?", (answered,))
    from zagent.agentkit import spent

    monkeypatch.setattr(spent, "_HERE", set())  # another process
    try:
        _chat_node_flow(ran, db, checkpoint_key=KEY)
    except Exception as exc:
        print("refused:", exc)
    assert ran == ["/a"]


def test_a_yes_does_not_cover_another_tool_registered_under_the_name_with_its_record_edited_in(tmp_path):
    """Attack (unsigned store): the node paused on ``danger("/tmp/x")`` of one function; the resuming process has
    another function registered as ``danger`` (``shred``), and the store's record of the tool asked about is edited
    to name it (a count raised from 0 to 1). The person says yes to the question they were shown. Held: ``shred``
    does not run on it (asked about again)."""
    import hashlib

    from zagent.agentkit.approvals import tool_identity

    ran, db = [], str(tmp_path / "wf.db")
    assert _run_flow(ran, db, [_delete("/tmp/x")], _one_node()).status == "paused"

    def shred(path: str) -> str:
        """Shred a path."""
        ran.append("shred " + path)
        return "shredded"

    from zagent.plugins.workflow import WorkFlowExecutor

    k = _ops_kernel(ran)
    k.remove_tool("danger")
    k.add_tool(shred, name="danger", sensitive=True)
    theirs = hashlib.sha256(tool_identity(k.find("tools", "danger")).encode()).hexdigest()[:16]

    def change(state):
        for counts in (state.get("counters") or {}).values():
            for key in [k for k in counts if "#tool=" in k]:
                counts[key.split("#tool=")[0] + "#tool=" + theirs] = 1

    edit_latest(db, "wf", change)
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[_delete("/tmp/x"), "done"]),
                              checkpoints=db)
        try:
            ex.resume("wf", graph=_one_node(), answer="yes")
        except Exception as exc:
            print("refused:", exc)
    finally:
        k.close()
    assert ran == []


def test_a_record_folder_of_the_users_own_private_group_is_used(tmp_path, monkeypatch):
    """Guard (no attack): a umask of 002 makes the folders 0775 in the user's own primary group; the records are
    kept there and the yes runs its call once."""
    import os

    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    (data / "zagent" / "approvals-ran").mkdir(parents=True)
    for folder in (data, data / "zagent", data / "zagent" / "approvals-ran"):
        os.chmod(folder, 0o775)
    ran, db = [], str(tmp_path / "wf.db")
    assert _run_flow(ran, db, [_delete("/tmp/x")], _one_node()).status == "paused"
    assert _run_flow(ran, db, [_delete("/tmp/x"), "done"], _one_node(), answer="yes").ok
    assert ran == ["/tmp/x"] and len(list((data / "zagent" / "approvals-ran").iterdir())) == 1


def test_a_chat_question_moved_to_another_speaker_with_its_record_does_not_run_their_call(tmp_path):
    """Attack (unsigned store): speaker Alice's turn paused on her ``danger("/tmp/x")``; the store's waiting speaker
    is changed to Bob, the question's text and the record of the call asked renamed to Bob's ``danger("/")``, and the
    person says yes to Alice's question they were shown. Held: Bob's ``"/"`` does not run."""
    from zagent.plugins.actions import CustomizeAgent
    from zagent.plugins.groupchat import GroupChat

    ran, db = [], str(tmp_path / "gc.db")

    def chat(replies_alice, replies_bob, answer=None):
        k = _ops_kernel(ran)
        try:
            speakers = [CustomizeAgent.from_dict({**CLEANER, "name": name, "inputs": [{"name": "task"}],
                                                  "prompt": "Do this: {task}"}, k,
                                                 llm=k.llm(f"scripted:{name}", replies=list(replies)))
                        for name, replies in (("Alice", replies_alice), ("Bob", replies_bob))]
            group = GroupChat(kernel=k, agents=speakers, max_rounds=1, checkpoints=db)
            return group.resume("gc", answer=answer) if answer else group.run("free disk", run_id="gc")
        finally:
            k.close()

    assert chat([_delete("/tmp/x")], []).status == "paused"
    was, now = _digest("Alice", "danger", {"path": "/tmp/x"}), _digest("Bob", "danger", {"path": "/"})

    def change(state):
        asked = state["interrupt"]
        asked["speaker"] = "Bob"
        asked["question"] = asked["question"].replace('"Alice"', '"Bob"').replace('"/tmp/x"', '"/"')
        for counts in (state.get("counters") or {}).values():
            for key in [k for k in counts if was in k]:
                counts[key.replace(was, now).replace("speaker=Alice", "speaker=Bob")] = counts[key]

    edit_latest(db, "gc", change)
    try:
        chat([], [_delete("/"), "done"], answer="yes")
    except Exception as exc:
        print("refused:", exc)
    assert ran == []


class _Paused(Exception):
    """The process 'ends' while the ReAct run waits for a person (raised from ``on_pause``)."""


def _end_process():
    raise _Paused()


def test_a_stale_approve_of_a_model_reused_id_does_not_approve_the_next_held_call(tmp_path):
    """Attack: a ReAct run held ``danger("/tmp/x")`` under the model's id ``c1``; the app resumes it with
    ``approve=["c1"]``; the model's next reply reuses ``c1`` for ``danger("/")``, held in turn; the app's approval
    is sent again (a retried request, a double click). Held: the reused id is replaced, ``"/"`` keeps waiting."""
    from zagent.plugins.react import ReActLoop

    ran, db = [], str(tmp_path / "r.db")

    def reply(path):
        return {"content": None, "tool_calls": [{"id": "c1", "name": "danger", "arguments": {"path": path}}]}

    def loop_of(k, replies):
        return ReActLoop(kernel=k, llm=k.llm("scripted:r", replies=replies), tools=["danger"], agent_config={},
                         checkpoints=k.memory("checkpoints", path=db), on_pause=_end_process)

    k = _ops_kernel(ran)
    loop = loop_of(k, [reply("/tmp/x")])
    with pytest.raises(_Paused):
        loop.run("clean")
    run_id = loop.state.run_id
    k.close()
    for _ in range(2):
        k = _ops_kernel(ran)
        loop = loop_of(k, [reply("/"), "done"])
        with pytest.raises(_Paused):
            loop.resume(run_id, approve=["c1"])
        k.close()
    assert ran == ["/tmp/x"] and [c.arguments for c in loop.state.pending] == [{"path": "/"}]
