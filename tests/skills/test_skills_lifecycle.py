"""LifecycleManager: idle → active → stale → archived by usage and age (fake clock), all recorded."""

from zagent.plugins.skills import skills_for

from .conftest import price_skill


def states(skills, name="price-totals"):
    return [(t.from_state, t.to_state) for t in skills.registry.history(name)]


def test_new_skill_is_idle_and_first_use_makes_it_active(kernel):
    """A registered skill starts idle; record_use makes it active and records the transition."""
    skills = skills_for(kernel)
    assert skills.registry.register(price_skill()).state == "idle"
    skill = skills.registry.record_use("price-totals")
    assert (skill.state, skill.usage_count) == ("active", 1)
    assert states(skills) == [("idle", "active")]


def test_unused_for_n_days_becomes_stale(kernel, clock):
    """An active skill unused for stale_after_days turns stale at the next sweep; sooner it does not."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.registry.record_use("price-totals")
    clock.advance(29)
    assert skills.lifecycle.sweep() == []
    clock.advance(1)
    assert [t.to_state for t in skills.lifecycle.sweep()] == ["stale"]
    assert skills.registry["price-totals"].state == "stale"


def test_never_used_skill_goes_stale_from_its_creation(kernel, clock):
    """An idle skill's age counts from its creation."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    clock.advance(31)
    skills.lifecycle.sweep()
    assert states(skills) == [("idle", "stale")]


def test_stale_and_unused_becomes_archived(kernel, clock):
    """A stale skill still unused archive_after_days later is archived."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    clock.advance(30)
    skills.lifecycle.sweep()
    clock.advance(59)
    skills.lifecycle.sweep()
    assert skills.registry["price-totals"].state == "stale"
    clock.advance(1)
    skills.lifecycle.sweep()
    assert states(skills) == [("idle", "stale"), ("stale", "archived")]


def test_using_a_stale_skill_makes_it_active_again(kernel, clock):
    """Use wins over age: a stale skill that is used becomes active."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    clock.advance(30)
    skills.lifecycle.sweep()
    skills.registry.record_use("price-totals")
    assert states(skills) == [("idle", "stale"), ("stale", "active")]


def test_manual_archive_and_activate_are_recorded_with_reasons(kernel, clock):
    """archive() and activate() by hand are transitions like any other, with their reason and time."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.lifecycle.archive("price-totals", reason="obsolete prices")
    clock.advance(1)
    skills.lifecycle.activate("price-totals")
    history = skills.lifecycle.history("price-totals")
    assert [(t.to_state, t.reason) for t in history] == [("archived", "obsolete prices"), ("active", "activated by hand")]
    assert history[1].at - history[0].at == 86400.0


def test_history_survives_a_new_registry(folder, clock, kernel):
    """Transitions are stored in the index file, not in memory."""
    from zagent.plugins.skills import SkillRegistry

    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.lifecycle.archive("price-totals")
    fresh = SkillRegistry(folder, clock=clock).load()
    assert fresh["price-totals"].state == "archived" and len(fresh.history("price-totals")) == 1


def test_hand_written_skill_ages_from_its_file_time(kernel, folder, clock):
    """A file without 'created' counts its age from its modification time, not from 1970."""
    import os

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "greet.md"
    path.write_text("---\nname: greet\ndescription: Say hello\n---\nSay hello.\n")
    os.utime(path, (clock.now, clock.now))
    skills = skills_for(kernel)
    assert skills.lifecycle.sweep() == []
    clock.advance(30)
    assert [t.to_state for t in skills.lifecycle.sweep()] == ["stale"]
