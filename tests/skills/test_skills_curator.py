"""Curator: good trajectories become skills, bad ones nothing, similar ones merge, human edits are kept."""

import json

from zagent.plugins.skills import skills_for

from .conftest import curator_model, price_skill, trajectory


def curator(kernel, name="c", **kw):
    llm = kernel.llm(f"scripted:{name}", replies=[curator_model(**kw)] * 6)
    return skills_for(kernel).curator(llm=llm), llm


def test_successful_trajectory_becomes_a_skill(kernel, folder):
    """A completed run the model judges good is written as a new skill with its request and provenance."""
    cur, _ = curator(kernel)
    result = cur.curate(trajectory())
    assert (result.action, result.skill, result.version) == ("created", "price-totals", 1)
    skill = skills_for(kernel).registry["price-totals"]
    assert skill.provenance == ["run-1"] and skill.examples == ["What do 3 apples and 4 pears cost?"]
    assert skill.tool_sequence == ["lookup_price", "add"] and skill.state == "idle"
    assert (folder / "price-totals.md").exists()


def test_the_model_sees_the_transcript_and_answers_in_json(kernel):
    """The analysis request carries the run's transcript and asks for JSON output."""
    cur, llm = curator(kernel)
    cur.curate(trajectory())
    first = llm.requests[0]
    assert "What do 3 apples and 4 pears cost?" in first.messages[-1].content
    assert first.output_spec["mode"] == "json"


def test_failed_trajectory_creates_nothing_and_asks_no_model(kernel):
    """A run that did not complete is skipped before any model call."""
    cur, llm = curator(kernel)
    result = cur.curate(trajectory(status="failed", final=None))
    assert result.action == "skipped" and "failed" in result.reason
    assert llm.calls == 0 and skills_for(kernel).registry.names() == []


def test_goal_not_reached_creates_nothing(kernel):
    """A completed run the model judges unsuccessful creates no skill."""
    cur, _ = curator(kernel, good=False)
    assert cur.curate(trajectory()).reason == "the goal was not reached"
    assert skills_for(kernel).registry.names() == []


def test_similar_trajectory_merges_into_the_existing_skill(kernel):
    """A second good run of the same kind improves the skill (version 2) instead of adding a duplicate."""
    cur, llm = curator(kernel, name="m", instructions="Improved: look up all prices at once, then add.")
    cur.curate(trajectory())
    result = cur.curate(trajectory(run_id="run-2", request="What do 2 pears and 6 apples cost together?"))
    assert (result.action, result.skill, result.version) == ("merged", "price-totals", 2)
    reg = skills_for(kernel).registry
    assert reg.names() == ["price-totals"]
    assert reg["price-totals"].provenance == ["run-1", "run-2"] and len(reg["price-totals"].examples) == 2
    assert "Existing skill" in llm.requests[-1].messages[-1].content


def test_same_name_from_the_model_merges_too(kernel):
    """A draft named like an existing skill merges into it even when the request words differ."""
    skills_for(kernel).registry.register(price_skill())
    cur, _ = curator(kernel)
    result = cur.curate(trajectory(run_id="run-9", request="Sum up my shopping list: 3 melons"))
    assert (result.action, result.skill) == ("merged", "price-totals")


def test_curating_the_same_run_twice_changes_nothing(kernel):
    """A trajectory already in a skill's provenance is skipped."""
    cur, _ = curator(kernel)
    cur.curate(trajectory())
    assert cur.curate(trajectory()).reason == "already curated"
    assert skills_for(kernel).registry["price-totals"].version == 1


def test_merging_into_a_human_edited_skill_keeps_the_persons_version(kernel, folder):
    """The Curator never overwrites a person's edit without keeping it as <name>.v<version>.md."""
    cur, _ = curator(kernel)
    cur.curate(trajectory())
    path = folder / "price-totals.md"
    edited = path.read_text().replace("then answer with the total.", "then answer in euros.")
    path.write_text(edited)
    result = cur.curate(trajectory(run_id="run-2", request="What do 2 pears and 6 apples cost together?"))
    assert result.backup and (folder / "price-totals.v1.md").read_text() == edited
    assert skills_for(kernel).registry["price-totals"].version == 2


def test_batch_curation_reads_a_trajectory_folder(kernel, tmp_path):
    """curate_folder reads every *.jsonl file; good runs become skills, failed ones are reported as skipped."""
    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [trajectory(), trajectory(run_id="run-2", status="failed", final=None)]
    (runs / "a.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    cur, _ = curator(kernel)
    assert [r.action for r in cur.curate_folder(runs)] == ["created", "skipped"]


def test_batch_curation_stops_at_a_provider_error(kernel, tmp_path):
    """A provider's error (here a 401) ends the batch with that error after one request: it is not logged
    and repeated for every trajectory of the folder."""
    import pytest
    from zagent import AuthenticationError

    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [trajectory(run_id=f"run-{i}", request=f"What do {i} apples cost?") for i in range(3)]
    (runs / "a.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    llm = kernel.llm("scripted:down", replies=[AuthenticationError("401 bad key", status=401)] * 3)
    with pytest.raises(AuthenticationError):
        skills_for(kernel).curator(llm=llm).curate_folder(runs)
    assert llm.calls == 1
