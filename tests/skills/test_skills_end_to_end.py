"""Acceptance: run → curate → a second, similar run uses the learned skill and needs fewer steps."""

from zagent.plugins.skills import skills_for

from .conftest import curator_model, has_skill, make_kernel, shopper


def test_second_run_uses_the_learned_skill_in_fewer_steps(folder, clock, tmp_path):
    """A good run is curated into a skill; the next similar request matches it and finishes in fewer steps."""
    runs = tmp_path / "trajectories"
    k = make_kernel(folder, clock, enabled=["shop"])
    try:
        llm = k.llm("scripted:shop", replies=[shopper] * 20)
        agent = k.agent({"type": "react", "name": "shop", "tools": ["lookup_price", "add"],
                         "trajectory_path": str(runs / "shop.jsonl")}, trust=True)  # the test's own spec
        agent.llm = llm

        first = agent.chat("What do 3 apples and 4 pears cost?", use_react=True)
        assert first.content == "The total is 4.5." and not any(has_skill(r) for r in llm.requests)

        results = skills_for(k).curator(llm=k.llm("scripted:curator", replies=[curator_model()] * 4)) \
            .curate_folder(runs)
        assert [(r.action, r.skill) for r in results] == [("created", "price-totals")]

        before = len(llm.requests)
        second = agent.chat("How much do 2 bananas and 5 pears cost?", use_react=True)
        assert second.content == "The total is 4.25."
        assert all(has_skill(r) for r in llm.requests[before:])
        assert second.metadata["iterations"] < first.metadata["iterations"]
        skill = skills_for(k).registry["price-totals"]
        assert (skill.usage_count, skill.success_count, skill.state) == (1, 1, "active")
    finally:
        k.close()
