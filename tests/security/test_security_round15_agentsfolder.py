"""Round fifteen, the ``--agents`` folder's modules: ``zagent workflow run FILE --agents DIR`` and ``zagent groupchat
run FILE --agents DIR`` trusted the modules of DIR (the user's stored agents' tools) for FILE too, which may be
downloaded. Now DIR's modules serve only the agents loaded from DIR (``AgentManager(storage_trust=...)``,
``manager/stored.cli_trusts``); FILE's own agents get FILE's folder, and a refusal names the module and ``--trust``.

Attacks tried and whether they got through before the fix (checked by running these tests on the old CLI code):

- the downloaded workflow's inline agent naming ``r15tools:wipe`` (round fourteen's open case, fixed there)
- the same from a downloaded group chat's inline speaker: GOT THROUGH -- fixed
- the same from an agent-as-tool nested in the workflow's inline agent, and from a speaker of an inline group chat
  node: GOT THROUGH (2) -- fixed
- the downloaded chat's inline speaker naming ``wipe``, the tool the user's stored ``Clerk`` registered from
  ``r15tools:wipe``: GOT THROUGH -- fixed; the same in ``workflow run`` (refused before, stored agents failing to load)
- the downloaded chat's folder planting ``r15mine.py``, a module the user's stored ``Clerk`` names (the user's own,
  on ``sys.path`` and in ``trusted_imports``): GOT THROUGH (the file's folder was searched for the stored agent)
  -- fixed: stored agents get their store's folder only

Kept working: a stored agent naming its own folder's module, in both commands (it failed in ``workflow run``,
whose stored agents were loaded before any trust was set).
"""

import json
import sys

import pytest

from zagent.plugins.workflow import WorkFlowGraph

from .conftest import make_kernel

TASK = {"name": "Task", "prompt": "Work on {goal}", "inputs": [{"name": "goal"}], "outputs": [{"name": "notes"}],
        "parse_mode": "str"}


@pytest.fixture
def folders(tmp_path):
    """``(agents, downloaded, marker)``: the user's agents folder holding ``r15tools.py`` (creates ``marker`` when
    imported; ``wipe`` appends to ``marker.ran``) and an empty downloaded folder, both the user's (0700)."""
    agents, down = tmp_path / "agents", tmp_path / "downloaded"
    agents.mkdir(mode=0o700)
    down.mkdir(mode=0o700)
    marker = tmp_path / "imported"
    (agents / "r15tools.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\n\ndef wipe(path: str) -> str:\n    \"\"\"Delete a file.\"\"\"\n"
        f"    open({str(marker) + '.ran'!r}, 'a').write(path)\n    return 'wiped ' + path\n")
    yield agents, down, marker
    sys.modules.pop("r15tools", None)


def _clerk(agents, speaker=False, **over):
    """The user's stored ``Clerk`` (agents/Clerk.json) using its folder's ``r15tools:wipe`` (a chat's speaker reads
    ``task``; a node's agent ``goal``)."""
    spec = {**TASK, "name": "Clerk", "prompt": "File {goal}", "tools": ["r15tools:wipe"], **over}
    if speaker:
        spec.update(prompt="File {task}", inputs=[{"name": "task"}], llm="test:offline")
    (agents / "Clerk.json").write_text(json.dumps(spec))


def _workflow(down, *agents):
    path = down / "wf.json"
    path.write_text(WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "notes"}],
         "agents": list(agents)}]}).to_json())
    return path


def _chat(down, *speakers):
    path = down / "chat.json"
    path.write_text(json.dumps({"name": "c", "agents": list(speakers), "max_rounds": 2}))
    return path


def _cli(k, *argv):
    from zagent.plugins.cli import main

    return main([str(a) for a in argv], kernel=k)


def _run(kind, path, agents, capsys, config=None):
    """``zagent workflow|groupchat run path --agents agents`` with model ``test:offline`` (it calls the tools it is
    offered): (exit status, stderr)."""
    with make_kernel(config=config, plugins=["zagent.plugins.cli"]) as k:
        code = _cli(k, kind, "run", path, "--agents", agents, "-m", "test:offline", "-q",
                    "--input", "goal=solar" if kind == "workflow" else "task=solar")
    return code, capsys.readouterr().err


def _speaker(name, **over):
    return {"name": name, "prompt": "Say {task}", "inputs": [{"name": "task"}], **over}


def test_a_downloaded_chats_speaker_gets_no_module_of_the_agents_folder(folders, capsys):
    """Attack: ``zagent groupchat run downloaded/chat.json --agents ~/agents``: the chat's inline speaker names
    ``r15tools:wipe``, the user's module for their stored agents. Defence: exit 1 naming the module and ``--trust``;
    ``r15tools`` is never imported."""
    agents, down, marker = folders
    chat = _chat(down, _speaker("Helper", tools=["r15tools:wipe"]), _speaker("Boss"))
    code, err = _run("groupchat", chat, agents, capsys)
    assert code == 1 and not marker.exists()
    assert "'r15tools'" in err and "--trust" in err


@pytest.mark.parametrize("where", ["agent-as-tool", "chat-node-speaker"])
def test_an_agent_nested_in_a_downloaded_workflow_gets_no_module_of_the_agents_folder(folders, capsys, where):
    """Attack: the downloaded workflow hides ``r15tools:wipe`` one level down: in an agent its inline agent calls
    as a tool (``"agents": [{...}]``), or in a speaker of an inline group chat node. Defence: exit 1 naming the
    module; ``r15tools`` is never imported."""
    agents, down, marker = folders
    inner = {**TASK, "name": "Inner", "tools": ["r15tools:wipe"]}
    agent = {**TASK, "name": "Outer", "agents": [inner]} if where == "agent-as-tool" else {
        "type": "groupchat", "name": "Team", "max_rounds": 2,
        "agents": [_speaker("Helper", tools=["r15tools:wipe"]), _speaker("Boss")]}
    code, err = _run("workflow", _workflow(down, agent), agents, capsys)
    assert code == 1 and not marker.exists()
    assert "'r15tools'" in err


@pytest.mark.parametrize("kind", ["groupchat", "workflow"])
def test_a_downloaded_file_cannot_name_the_tool_a_stored_agent_registered(folders, capsys, kind):
    """Attack: the user's stored ``Clerk`` uses ``r15tools:wipe`` (registered as tool ``wipe`` once ``Clerk`` is
    loaded: a chat's earlier speaker, or every stored agent in ``workflow run``); the downloaded file's inline
    agent names the registered ``wipe``. Defence: exit 1 naming ``wipe`` and its import path."""
    agents, down, _ = folders
    _clerk(agents, speaker=kind == "groupchat", llm="test:offline")
    if kind == "groupchat":
        path = _chat(down, "Clerk", _speaker("Evil", tools=["wipe"]))
    else:
        path = _workflow(down, {**TASK, "name": "Evil", "tools": ["wipe"]})
    code, err = _run(kind, path, agents, capsys)
    assert code == 1
    assert "'wipe'" in err and "'r15tools:wipe'" in err


def test_a_stored_agent_gets_no_module_of_the_downloaded_files_folder(folders, tmp_path, capsys, monkeypatch):
    """Attack: the user's stored ``Clerk`` names ``r15mine:tool``, the user's module (on ``sys.path``, trusted by
    ``trusted_imports``); the downloaded chat's folder holds a planted ``r15mine.py``, searched first for every
    agent of the run. Defence: a stored agent gets its store's folder only; the user's ``r15mine`` is imported."""
    agents, down, _ = folders
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    planted = tmp_path / "planted-ran"
    (mine / "r15mine.py").write_text("def tool(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n")
    (down / "r15mine.py").write_text(f"open({str(planted)!r}, 'w').close()\n\n\ndef tool(text: str) -> str:\n"
                                     "    \"\"\"Echo.\"\"\"\n    return text\n")
    monkeypatch.syspath_prepend(str(mine))
    _clerk(agents, speaker=True, tools=["r15mine:tool"])
    chat = _chat(down, "Clerk", _speaker("Boss"))
    try:
        code, err = _run("groupchat", chat, agents, capsys, config={"trusted_imports": ["r15mine"]})
        assert not planted.exists()
        assert sys.modules["r15mine"].__file__ == str(mine / "r15mine.py")
        assert code == 0, err
    finally:
        sys.modules.pop("r15mine", None)


def test_workflow_run_gives_a_stored_agent_its_own_folders_module(folders, capsys):
    """A stored agent named by the workflow (``"Clerk"``, model ``test:offline``, which calls the tools it is
    offered) uses the module next to it in the ``--agents`` folder: the run succeeds and ``wipe`` ran."""
    agents, down, marker = folders
    _clerk(agents, llm="test:offline")
    code, err = _run("workflow", _workflow(down, "Clerk"), agents, capsys)
    assert code == 0, err
    assert marker.with_name(marker.name + ".ran").exists()


def test_groupchat_run_gives_a_stored_speaker_its_own_folders_module(folders, capsys):
    """A stored agent named as a speaker (``"Clerk"``) loads with the module next to it in the ``--agents`` folder:
    the chat runs (exit 0) and ``r15tools`` was imported for it."""
    agents, down, marker = folders
    _clerk(agents, speaker=True)
    code, err = _run("groupchat", _chat(down, "Clerk", _speaker("Boss")), agents, capsys)
    assert code == 0, err
    assert marker.exists()
