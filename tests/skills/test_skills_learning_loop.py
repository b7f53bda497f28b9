"""Curation learns from the run's own request, the 'edited by a person' flag clears once merged, and runs can
be curated automatically when they end (issue 17, items 15-17)."""


from zagent.plugins.react import ReActLoop
from zagent.plugins.skills import skills_for
from zagent.plugins.skills.curator import first_request

from .conftest import curator_model, make_kernel, shopper, trajectory


def chat_run(kernel, *requests):
    """A ReAct run over several user turns (a chat): the last request is the run's task."""
    llm = kernel.llm("scripted:shop", replies=[shopper] * 40)
    loop = ReActLoop(kernel=kernel, llm=llm, tools=["lookup_price", "add"])
    history = []
    for text in requests[:-1]:
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
    return loop.run(requests[-1], history=history)


def test_trajectory_records_the_runs_own_request(kernel):
    """A chat run's trajectory has a 'task' (its own request), which curation uses, not the first user turn."""
    from zagent.plugins.react.trajectory import record

    result = chat_run(kernel, "Hello, who are you?", "What do 3 apples and 4 pears cost?")
    line = record(result.state)
    assert line["task"] == "What do 3 apples and 4 pears cost?"
    assert first_request(line) == "What do 3 apples and 4 pears cost?"


def test_a_skill_curated_from_a_chat_matches_a_similar_request(kernel):
    """Curated from a chat run, the skill's example is the run's request, so a similar request matches it."""
    from zagent.plugins.react.trajectory import record

    result = chat_run(kernel, "Hello, who are you?", "What do 3 apples and 4 pears cost?")
    llm = kernel.llm("scripted:cur", replies=[curator_model()] * 4)
    outcome = skills_for(kernel).curator(llm=llm).curate(record(result.state))
    skill = skills_for(kernel).registry[outcome.skill]
    assert skill.examples == ["What do 3 apples and 4 pears cost?"]
    match = skills_for(kernel).matcher.match("What do 2 pears and 5 apples cost?")
    assert match is not None and match.skill.name == skill.name


def test_edited_flag_clears_after_a_merge_and_no_second_backup(kernel, folder):
    """After a person's edit is merged (and backed up once), the skill is zagent's again: no flag, no new backup."""
    llm = kernel.llm("scripted:c", replies=[curator_model()] * 6)
    cur = skills_for(kernel).curator(llm=llm)
    cur.curate(trajectory())
    path = folder / "price-totals.md"
    path.write_text(path.read_text().replace("then answer with the total.", "then answer in euros."))
    first = cur.curate(trajectory(run_id="run-2", request="What do 2 pears and 6 apples cost together?"))
    assert first.backup
    skills_for(kernel).registry.refresh()
    assert not skills_for(kernel).registry["price-totals"].edited_by_human
    second = cur.curate(trajectory(run_id="run-3", request="What do 1 pear and 2 apples cost together?"))
    assert second.action == "merged" and second.backup is None
    assert sorted(p.name for p in folder.glob("price-totals.v*.md")) == ["price-totals.v1.md"]


def test_runs_are_curated_automatically_when_enabled(folder, clock):
    """With curate_after_run on, a completed ReAct run becomes a skill without calling the Curator by hand."""
    k = make_kernel(folder, clock)
    try:
        k.config["skills"]["curate_after_run"] = True
        k.config["skills"]["curator_model"] = k.llm("scripted:cur", replies=[curator_model()] * 4)
        chat_run(k, "What do 3 apples and 4 pears cost?")

        async def settle():
            await skills_for(k).acurations()

        from zagent import run_sync

        run_sync(settle())
        assert "price-totals" in skills_for(k).registry
    finally:
        k.close()


def test_no_automatic_curation_by_default(kernel, folder):
    """Without the setting, a finished run writes no skill."""
    chat_run(kernel, "What do 3 apples and 4 pears cost?")
    assert not folder.exists() or not list(folder.glob("*.md"))
