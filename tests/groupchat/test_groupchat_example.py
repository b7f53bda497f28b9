"""Acceptance: the Researcher/Writer/Reviewer example runs end to end offline and ends by the judge; the CLI runs it."""

import json
import os

import pytest

from zagent.plugins.cli import main
from zagent.plugins.groupchat import GroupChat

from .conftest import Events, request_text

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "groupchat_research.json")


def team_model(kernel, name="scripted:team"):
    """One scripted model for the whole team, answering by the role named in the prompt."""
    reviews = iter(["Needs one number: the UK's tidal capacity.", "APPROVED: clear and sourced."])
    drafts = iter(["Draft 1: tides are predictable.", "Draft 2: tides are predictable; the UK has ~10 GW."])
    facts = iter(["- tides are predictable", "- UK potential ~10 GW"])

    def reply(request):
        text = request_text(request)
        if "You are the Judge" in text:
            approved = "Reviewer: APPROVED" in text
            return json.dumps({"done": approved, "reason": "approved by the Reviewer" if approved else "not yet"})
        if "You are the Researcher" in text:
            return next(facts)
        if "You are the Writer" in text:
            return next(drafts)
        if "You are the Reviewer" in text:
            return next(reviews)
        raise AssertionError(f"unexpected prompt: {text[:80]}")

    return kernel.llm(name, replies=[reply] * 20)


def test_the_research_example_ends_by_the_judge(kernel):
    """Researcher -> Writer -> Reviewer twice; the judge (every 3 rounds) ends the chat after the approval."""
    events = Events()
    kernel.add_plugin(events)
    chat = GroupChat.load(EXAMPLE, kernel, llm=team_model(kernel))
    result = chat.run("Write a short brief on tidal energy")
    assert result.stopped_by == "judge" and result.detail == "Judge: approved by the Reviewer"
    assert result.speakers == ["Researcher", "Writer", "Reviewer"] * 2
    assert result.content == "APPROVED: clear and sourced."
    assert len(events.of("turn_end")) == 6


def test_the_cli_streams_each_turn_of_the_example(kernel, capsys):
    """zagent groupchat run prints every turn as it is recorded, and how the chat ended."""

    class TeamProvider:
        def zagent_register_providers(self, register, kernel):
            register("team", lambda model, **options: team_model(kernel, f"scripted:{model}"))

    kernel.add_plugin(TeamProvider())
    code = main(["groupchat", "run", EXAMPLE, "--input", "task=Write a brief on tidal energy",
                 "--model", "team:cli"], kernel=kernel)
    out, err = capsys.readouterr()
    assert code == 0
    assert out.index("[1] Researcher: - tides are predictable") < out.index("[2] Writer: Draft 1")
    assert "[6] Reviewer: APPROVED" in out and "stopped by judge after 6 round(s)" in err


def test_the_cli_runs_the_example_with_the_default_offline_model(kernel, capsys):
    """With no model configured the example runs on the offline test model and ends without crashing."""
    code = main(["groupchat", "run", EXAMPLE, "--input", "task=anything", "--max-rounds", "4"], kernel=kernel)
    out, err = capsys.readouterr()
    assert code == 0 and "[1] Researcher:" in out and "stopped by" in err


def test_the_cli_without_a_task_is_a_usage_error(kernel, capsys):
    """Running without --input task=... (and no --run-id) fails with a message saying what to give."""
    assert main(["groupchat", "run", EXAMPLE], kernel=kernel) == 1
    assert "--input task=" in capsys.readouterr().err


def test_the_cli_resumes_a_checkpointed_chat_by_run_id(kernel, tmp_path, capsys):
    """--checkpoints and --run-id: a finished chat refuses to run again under the same id."""
    db = str(tmp_path / "chats.db")
    args = ["groupchat", "run", EXAMPLE, "--checkpoints", db, "--run-id", "team-1", "--max-rounds", "2"]
    assert main(args + ["--input", "task=anything"], kernel=kernel) == 0
    assert main(args, kernel=kernel) == 1
    assert "completed" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".yaml"])
def test_the_example_loads_from_yaml_too(kernel, tmp_path, suffix):
    """A chat file may be YAML."""
    yaml = pytest.importorskip("yaml")
    with open(EXAMPLE) as f:
        data = json.load(f)
    path = tmp_path / f"chat{suffix}"
    path.write_text(yaml.safe_dump(data))
    assert GroupChat.load(str(path), kernel, llm="test:offline").speakers == ["Researcher", "Writer", "Reviewer"]
