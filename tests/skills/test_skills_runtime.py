"""Use at run time: injection through zagent_before_llm_call, figures from run_end, third-party skills."""

import pytest
from zagent import NoAnswerError
from zagent.plugins.react import ReActLoop
from zagent.plugins.skills import Skill, skills_for

from .conftest import has_skill, price_skill, shopper

REQUEST = "What do 2 pears and 5 apples cost?"


def loop(kernel, name, replies, **kw):
    llm = kernel.llm(f"scripted:{name}", replies=replies)
    return ReActLoop(kernel=kernel, llm=llm, tools=["lookup_price", "add"], **kw), llm


def test_enabled_run_gets_the_skill_as_a_system_message(kernel):
    """With agent_config skills on, the matched skill's instructions follow the system prompt in every step."""
    skills_for(kernel).registry.register(price_skill())
    run, llm = loop(kernel, "on", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    assert all(r.messages[1].metadata.get("skill") == "price-totals" for r in llm.requests)
    assert run.state.messages[1].role == "user"  # the run's own history is not changed


def test_runs_without_skills_enabled_are_untouched(kernel):
    """Skills are off unless the run or the kernel config turns them on."""
    skills_for(kernel).registry.register(price_skill())
    run, llm = loop(kernel, "off", [shopper] * 5)
    run.run(REQUEST)
    assert not any(has_skill(r) for r in llm.requests)
    assert skills_for(kernel).registry["price-totals"].usage_count == 0


def test_kernel_config_enables_skills_per_agent_name(folder, clock):
    """kernel.config["skills"]["enabled"] may list the agents that use skills."""
    from .conftest import make_kernel

    k = make_kernel(folder, clock, enabled=["shop"])
    try:
        skills_for(k).registry.register(price_skill())
        other, llm_other = loop(k, "other", [shopper] * 5, agent="other")
        other.run(REQUEST)
        shop, llm_shop = loop(k, "shop", [shopper] * 5, agent="shop")
        shop.run(REQUEST)
        assert not any(has_skill(r) for r in llm_other.requests) and all(has_skill(r) for r in llm_shop.requests)
    finally:
        k.close()


def test_completed_run_counts_use_and_success(kernel):
    """A run using a skill counts one use; its run_end with status completed counts one success."""
    skills_for(kernel).registry.register(price_skill())
    run, _ = loop(kernel, "ok", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    skill = skills_for(kernel).registry["price-totals"]
    assert (skill.usage_count, skill.success_count, skill.success_rate, skill.state) == (1, 1, 1.0, "active")


def test_failed_run_counts_use_without_success(kernel):
    """A run that fails lowers the skill's success rate."""
    skills_for(kernel).registry.register(price_skill())
    call = {"tool_calls": [{"name": "lookup_price", "arguments": {"item": "pear"}}]}
    run, _ = loop(kernel, "fail", [call] * 2, agent_config={"skills": True}, max_iterations=2)
    with pytest.raises(NoAnswerError):
        run.run(REQUEST)
    skill = skills_for(kernel).registry["price-totals"]
    assert (skill.usage_count, skill.success_count, skill.success_rate) == (1, 0, 0.0)


def test_no_match_leaves_requests_alone(kernel):
    """When no skill fits, nothing is added and nothing is counted."""
    skills_for(kernel).registry.register(price_skill())
    run, llm = loop(kernel, "nomatch", ["Hello there."], agent_config={"skills": True})
    run.run("Tell me a joke about the weather")
    assert len(llm.requests[0].messages) == 2


def test_router_question_is_not_given_a_skill(kernel):
    """A one-word routing prompt (no tools, no system prompt, str output) is not eligible."""
    from zagent.plugins.skills.runtime import eligible

    llm = kernel.llm("scripted:router", replies=["yes"])
    request = llm.request("Reply yes or no. Request: " + REQUEST, output_spec={"mode": "str", "fields": []})
    assert not eligible(request)


def test_skill_used_event_names_the_skill(kernel):
    """Observers see a skill_used event with the skill, version and score."""
    seen = []

    class Observer:
        def zagent_event(self, event):
            if event.type == "skill_used":
                seen.append(event.data)

    kernel.add_plugin(Observer())
    skills_for(kernel).registry.register(price_skill())
    run, _ = loop(kernel, "events", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    assert [(d["skill"], d["version"], d["method"]) for d in seen] == [("price-totals", 1, "keyword")]


def test_skill_matching_is_a_span_inside_the_step(kernel):
    """skill_start/skill_end pair (one span id) inside the first step, the end naming the skill chosen."""
    seen = []

    class Observer:
        def zagent_event(self, event):
            seen.append(event)

    kernel.add_plugin(Observer())
    skills_for(kernel).registry.register(price_skill())
    run, _ = loop(kernel, "span", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    start = next(e for e in seen if e.type == "skill_start")
    end = next(e for e in seen if e.type == "skill_end")
    step = next(e for e in seen if e.type == "step_start")
    assert end.span_id == start.span_id and start.parent_id == step.span_id
    assert end.data["skill"] == "price-totals" and end.data["outcome"] == "ok"


def test_third_party_skills_come_through_the_hook(kernel):
    """A plugin implementing zagent_register_skills adds skills that match and are used like folder skills."""
    class PricePack:
        def zagent_register_skills(self, register):
            register(Skill(**price_skill()))

    kernel.add_plugin(PricePack())
    skills = skills_for(kernel)
    assert skills.registry["price-totals"].source.startswith("PricePack")
    run, llm = loop(kernel, "plugin", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    assert all(has_skill(r) for r in llm.requests)


def test_skills_plugin_given_at_start_in_any_order_is_accepted(tmp_path):
    """A plugin implementing zagent_register_skills listed before the skills plugin at start-up works."""
    from zagent import Kernel

    class PricePack:
        def zagent_register_skills(self, register):
            register(Skill(**price_skill()))

    k = Kernel(plugins=[PricePack(), "zagent.plugins.skills"], entry_points=False, strict=True,
               config={"skills": {"folder": str(tmp_path / "skills"), "index": str(tmp_path / "skills.db")}})
    try:
        assert "price-totals" in [s.name for s in skills_for(k).registry.list()]
    finally:
        k.close()


def test_folder_skill_shadows_a_plugin_skill_of_the_same_name(kernel):
    """A person's file of the same name wins over a plugin's skill."""
    class PricePack:
        def zagent_register_skills(self, register):
            register({**price_skill(), "instructions": "plugin text"})

    kernel.add_plugin(PricePack())
    skills = skills_for(kernel)
    skills.registry.register({**price_skill(), "instructions": "my own text"})
    assert skills.registry["price-totals"].instructions == "my own text"


def test_customize_agent_uses_skills_when_enabled_for_it(folder, clock):
    """A CustomizeAgent named in kernel.config["skills"]["enabled"] gets the skill; its run_end counts a success."""
    from .conftest import make_kernel

    k = make_kernel(folder, clock, enabled=["pricer"])
    try:
        skills_for(k).registry.register(price_skill())
        llm = k.llm("scripted:pricer", replies=['{"total": 4.25}'])
        agent = k.agent({"name": "pricer", "prompt": "{question}", "inputs": [{"name": "question"}],
                         "outputs": [{"name": "total", "type": "number"}], "parse_mode": "json"})
        agent.llm = llm
        assert agent(question=REQUEST).total == 4.25
        assert has_skill(llm.requests[0])
        skill = skills_for(k).registry["price-totals"]
        assert (skill.usage_count, skill.success_count) == (1, 1)
    finally:
        k.close()


def test_curator_learns_straight_from_a_finished_run(kernel):
    """curate() also takes a ReActResult, for learning right after a run."""
    from .conftest import curator_model

    run, _ = loop(kernel, "direct", [shopper] * 5)
    result = run.run(REQUEST)
    cur = skills_for(kernel).curator(llm=kernel.llm("scripted:direct-curator", replies=[curator_model()] * 2))
    assert cur.curate(result).action == "created"
    assert skills_for(kernel).registry["price-totals"].provenance == [result.state.run_id]


def test_a_broken_matcher_never_blocks_the_run(kernel, monkeypatch):
    """Matching errors are logged and the run goes on without a skill (skills are not a guard)."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())

    async def broken(*args, **kwargs):
        raise RuntimeError("index gone")

    monkeypatch.setattr(type(skills), "amatch", broken)
    run, llm = loop(kernel, "broken", [shopper] * 5, agent_config={"skills": True})
    assert run.run(REQUEST).content == "The total is 4.0."
    assert not any(has_skill(r) for r in llm.requests)


def test_kernels_that_never_use_skills_observe_no_events(kernel):
    """The run_end observer is added only when a run uses a skill, so other kernels build no events."""
    skills_for(kernel).registry.register(price_skill())
    run, _ = loop(kernel, "quiet", [shopper] * 5)
    run.run(REQUEST)
    assert not kernel.hooks.active("zagent_event")
    run, _ = loop(kernel, "loud", [shopper] * 5, agent_config={"skills": True})
    run.run(REQUEST)
    assert kernel.hooks.active("zagent_event")


def test_removing_a_plugin_removes_its_skills(kernel):
    """Plugin skills are asked for again when the plugins change; a removed plugin's skills are gone."""
    class PricePack:
        def zagent_register_skills(self, register):
            register(price_skill())

    name = kernel.add_plugin(PricePack())
    skills = skills_for(kernel)
    assert skills.match(REQUEST) is not None
    kernel.remove_plugin(name)
    assert skills.match(REQUEST) is None and "price-totals" not in skills.registry


def test_two_plugins_registering_one_skill_name_is_refused_naming_both(kernel):
    """The kernel's clash check covers skills: the second plugin is refused with both names; the first keeps it."""
    from zagent import PluginError

    class PricePack:
        def zagent_register_skills(self, register):
            register(price_skill())

    kernel.add_plugin(PricePack(), name="first")
    with pytest.raises(PluginError, match="skill 'price-totals' is registered by both plugin 'first' and plugin 'second'"):
        kernel.add_plugin(PricePack(), name="second")
    assert skills_for(kernel).registry["price-totals"].source == "first"


def test_a_plugin_skill_with_override_replaces_another_plugins(kernel):
    """override=True wins over another plugin's skill of the same name, whatever the order."""

    class PricePack:
        def zagent_register_skills(self, register):
            register({**price_skill(), "instructions": "first text"})

    class Better:
        def zagent_register_skills(self, register):
            register({**price_skill(), "instructions": "better text"}, override=True)

    kernel.add_plugin(PricePack(), name="first")
    kernel.add_plugin(Better(), name="better")
    skill = skills_for(kernel).registry["price-totals"]
    assert (skill.source, skill.instructions) == ("better", "better text")


def test_a_plugin_registering_a_malformed_skill_is_refused(kernel):
    """A skill that is neither a Skill nor a dict of its fields drops the plugin with an error naming it."""
    from zagent import PluginError

    class Broken:
        def zagent_register_skills(self, register):
            register(42)

    with pytest.raises(PluginError, match="plugin 'broken' failed in zagent_register_skills: .*Skill or a dict"):
        kernel.add_plugin(Broken(), name="broken")
    assert "broken" not in [p.name for p in kernel.plugins()]
