"""Attack: a spec names ``record:``/``replay:`` with no ``path``, which means the user's own recordings folder.

Without ``path`` a recorder writes (and a replayer reads) ``~/.local/share/zagent/recordings/<model>.jsonl``,
the file the user's own ``--model record:...`` made. A hostile spec naming the same model would overwrite
the user's recording, or answer from it. The model a spec names is refused there; the model the user chose
(``--model``, ``ZAGENT_MODEL``, the kernel's config) keeps its default file.
"""

import json

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel, run_cli

RECORDED = '{"model": "test:offline", "request": {"messages": []}}\n'


@pytest.fixture
def recordings(tmp_path, monkeypatch):
    """The user's recordings folder, holding their recording of ``test:offline``."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    (folder / "test-offline.jsonl").write_text(RECORDED)
    monkeypatch.setenv("ZAGENT_RECORDINGS", str(folder))
    return folder


@pytest.mark.parametrize("where", ["llm", "llm_config"])
def test_a_spec_recording_without_a_path_is_refused(recordings, where):
    """A spec's own ``record:test:offline`` (no path) is a ConfigError at load; the user's recording is intact."""
    over = {"llm": "record:test:offline"} if where == "llm" else {"llm_config": {"model": "record:test:offline"}}
    k = make_kernel()
    with pytest.raises(ConfigError, match="recordings folder"):
        k.agent(agent_spec(**over))(question="hi")
    assert (recordings / "test-offline.jsonl").read_text() == RECORDED
    k.close()


def test_a_spec_replaying_the_users_recording_is_refused(recordings):
    """A react spec's ``replay:test:offline`` (no path) may not read the user's recording: ConfigError at load."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="recordings folder"):
        k.agent({"type": "react", "name": "r", "llm": "replay:test:offline"})
    k.close()


def test_a_sub_agent_recording_without_a_path_is_refused(recordings):
    """An inline agent tool of a react spec naming ``record:`` with no path is refused like the top level."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="recordings folder"):
        k.agent({"type": "react", "name": "r", "agents": [agent_spec(llm="record:test:offline")]})
    k.close()


def test_a_fallback_chain_recording_without_a_path_is_refused(recordings):
    """``llm_config.model: ["record:test:offline"]`` (a fallback chain) is refused too."""
    k = make_kernel(plugins=["zagent.plugins.fallback"])
    with pytest.raises(ConfigError, match="recordings folder"):
        k.agent(agent_spec(llm_config={"model": ["record:test:offline", "test:offline"]}))
    k.close()


def test_a_trusted_spec_records_to_the_default_file(recordings):
    """``k.agent(spec, trust=True)`` with ``record:test:offline`` records to the recordings folder as before."""
    k = make_kernel()
    k.agent(agent_spec(llm="record:test:offline"), trust=True)(question="hi")
    assert json.loads((recordings / "test-offline.jsonl").read_text().splitlines()[0])["model"] == "test:offline"
    k.close()


def test_the_users_default_model_records_to_the_default_file(recordings):
    """A spec naming no model, under the kernel's ``record:test:offline`` default, records (the choice is the app's)."""
    k = make_kernel(config={"model": "record:test:offline"})
    k.agent(agent_spec())(question="hi")
    assert "test:offline" in (recordings / "test-offline.jsonl").read_text()
    k.close()


def test_cli_model_record_still_records_to_the_default_file(tmp_path, recordings):
    """``zagent run agent.json --model record:test:offline`` (the user's flag, no --trust) records there."""
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec()))
    done = run_cli("run", str(tmp_path / "agent.json"), "-i", "question=hi", "--model", "record:test:offline",
                   cwd=tmp_path, env={"ZAGENT_RECORDINGS": str(recordings)})
    assert done.returncode == 0, done.stderr
    assert json.loads((recordings / "test-offline.jsonl").read_text().splitlines()[0])["model"] == "test:offline"


def test_cli_run_of_a_spec_recording_without_a_path_is_refused(tmp_path, recordings):
    """``zagent run evil.json`` whose spec names ``record:test:offline`` fails, saying why; the file is intact."""
    (tmp_path / "evil.json").write_text(json.dumps(agent_spec(llm="record:test:offline")))
    done = run_cli("run", str(tmp_path / "evil.json"), "-i", "question=hi", cwd=tmp_path,
                   env={"ZAGENT_RECORDINGS": str(recordings)})
    assert done.returncode == 1 and "recordings folder" in done.stderr
    assert (recordings / "test-offline.jsonl").read_text() == RECORDED


def test_a_group_chat_model_recording_without_a_path_is_refused(recordings):
    """A group chat spec's ``llm: record:test:offline`` (given to its inline agents) is refused at load."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="recordings folder"):
        k.agent({"type": "groupchat", "name": "c", "llm": "record:test:offline", "max_rounds": 1,
                 "agents": [agent_spec(name="A", inputs=[{"name": "task"}], prompt="Do {task}")]}).run("hi")
    assert (recordings / "test-offline.jsonl").read_text() == RECORDED
    k.close()


def test_a_group_chat_given_the_users_model_records(recordings):
    """``GroupChat.from_dict(spec, k, llm="record:test:offline")``: the caller's model records to the default file."""
    from zagent.plugins.groupchat import GroupChat

    k = make_kernel()
    chat = GroupChat.from_dict({"name": "c", "max_rounds": 1, "agents": [agent_spec(name="A", inputs=[{"name": "task"}], prompt="Do {task}")]}, k,
                               llm="record:test:offline")
    chat.run("hi")
    assert "test:offline" in (recordings / "test-offline.jsonl").read_text()
    k.close()
