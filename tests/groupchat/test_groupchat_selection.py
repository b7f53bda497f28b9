"""Speaker selection: round-robin, role rules, LLM-chosen with fallback, repeat breaking, plugged-in policies."""

import pytest

from zagent import ConfigError, PluginError
from zagent.plugins.groupchat import GroupChat

from .conftest import Echo, Events, echoes, request_text


def test_round_robin_takes_turns_in_declaration_order(kernel):
    """Round-robin: each speaker after the previous one, wrapping around."""
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B", "C"), termination={"max_rounds": 7})
    assert chat.run("task").speakers == ["A", "B", "C", "A", "B", "C", "A"]


def test_round_robin_ignores_messages_from_outside_the_chat(kernel):
    """A message posted by the user does not move the round-robin pointer."""
    b = Echo("B", say=lambda turn: "b")
    chat = GroupChat(kernel=kernel, agents=[Echo("A", say=lambda turn: chat.post("interjection") and "a"), b],
                     termination={"max_rounds": 3})
    assert chat.run("task").speakers == ["A", "B", "A"]


def test_role_rules_declared_as_data_choose_the_next_role(kernel):
    """Rules {after: next} drive Researcher -> Writer -> Reviewer -> Researcher."""
    chat = GroupChat(kernel=kernel, agents=echoes("Writer", "Reviewer", "Researcher"), termination={"max_rounds": 5},
                     selection={"policy": "rules", "first": "Researcher",
                                "rules": {"Researcher": "Writer", "Writer": "Reviewer", "Reviewer": "Researcher"}})
    assert chat.run("task").speakers == ["Researcher", "Writer", "Reviewer", "Researcher", "Writer"]


def test_a_conditional_rule_matches_a_phrase_of_the_last_message(kernel):
    """A rule with 'when' applies only when the last message contains the phrase; rules are tried in order."""
    reviews = iter(["please REVISE", "approved"])
    agents = [Echo("Writer"), Echo("Reviewer", say=lambda turn: next(reviews)), Echo("Researcher")]
    rules = [{"after": "Reviewer", "when": "revise", "next": "Writer"},
             {"after": "Reviewer", "next": "Researcher"},
             {"after": "Writer", "next": "Reviewer"}]
    chat = GroupChat(kernel=kernel, agents=agents, termination={"max_rounds": 5},
                     selection={"policy": "rules", "first": "Writer", "rules": rules})
    assert chat.run("task").speakers == ["Writer", "Reviewer", "Writer", "Reviewer", "Researcher"]


def test_no_matching_rule_falls_back_to_round_robin(kernel):
    """When no rule applies the chat falls back to round-robin, and says so in the event."""
    events = Events()
    kernel.add_plugin(events)
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B", "C"), termination={"max_rounds": 3},
                     selection={"policy": "rules", "rules": {"A": "C"}})
    assert chat.run("task").speakers == ["A", "C", "A"]
    assert [d["how"] for d in events.of("speaker_selected")] == ["policy", "policy", "fallback"]


def test_the_llm_selector_picks_the_speaker_the_model_names(kernel):
    """LLM-chosen: the model sees the roles' descriptions and its answer picks the speaker."""
    seen = []

    def pick(request):
        seen.append(request_text(request))
        return "Critic"

    llm = kernel.llm("scripted:selector", replies=[pick] * 3)
    agents = [Echo("Poet", "writes verses"), Echo("Critic", "judges verses harshly")]
    chat = GroupChat(kernel=kernel, agents=agents, termination={"max_rounds": 2}, max_consecutive=None,
                     selection={"policy": "llm", "llm": llm})
    assert chat.run("a poem").speakers == ["Critic", "Critic"]
    assert "Critic: judges verses harshly" in seen[0] and "Poet: writes verses" in seen[0]


def test_an_llm_answer_naming_a_speaker_inside_a_sentence_is_understood(kernel):
    """An answer like 'I think Writer should go next.' names Writer."""
    llm = kernel.llm("scripted:chatty", replies=["I think **Writer** should go next, not Reviewer."])
    chat = GroupChat(kernel=kernel, agents=echoes("Reviewer", "Writer"), termination={"max_rounds": 1},
                     selection={"policy": "llm", "llm": llm})
    assert chat.run("task").speakers == ["Writer"]


def test_an_llm_selector_answering_garbage_falls_back_to_round_robin(kernel):
    """An answer that names nobody falls back to round-robin, each time."""
    events = Events()
    kernel.add_plugin(events)
    llm = kernel.llm("scripted:garbage", replies=["¯\\_(ツ)_/¯", "", "the next one, obviously"])
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 3},
                     selection={"policy": "llm", "llm": llm})
    assert chat.run("task").speakers == ["A", "B", "A"]
    assert [d["how"] for d in events.of("speaker_selected")] == ["fallback"] * 3


def test_an_llm_selector_failing_falls_back_to_round_robin(kernel):
    """A provider error while choosing does not end the chat: round-robin chooses, and the event says why."""
    from zagent import ProviderError

    events = Events()
    kernel.add_plugin(events)
    llm = kernel.llm("scripted:down", replies=[ProviderError("503 from the server", status=503), "B"])
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 2}, max_consecutive=None,
                     selection={"policy": "llm", "llm": llm})
    assert chat.run("task").speakers == ["A", "B"]
    first = events.of("speaker_selected")[0]
    assert first["how"] == "fallback" and "503" in first["error"]


def test_rules_naming_someone_outside_the_chat_are_refused(kernel):
    """Role rules (or 'first') naming a non-participant are a ConfigError when the chat is built."""
    with pytest.raises(ConfigError, match="Editor"):
        GroupChat(kernel=kernel, agents=echoes("A", "B"), selection={"policy": "rules", "rules": {"A": "Editor"}})


def test_a_selection_repeating_one_speaker_forever_is_broken(kernel):
    """A rule that would pick the same speaker forever is overruled after max_consecutive turns."""
    events = Events()
    kernel.add_plugin(events)
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B", "C"), termination={"max_rounds": 6}, max_consecutive=2,
                     selection={"policy": "rules", "rules": {"A": "A", "B": "A", "C": "A"}})
    assert chat.run("task").speakers == ["A", "A", "B", "A", "A", "B"]
    broken = [d for d in events.of("speaker_selected") if d["how"] == "repeat_broken"]
    assert [(d["speaker"], d["proposed"]) for d in broken] == [("B", "A"), ("B", "A")]


def test_a_plugin_registers_a_selector_through_the_hook(kernel):
    """zagent_register_speaker_selectors adds a policy usable by name (plugin added after start)."""

    class Loudest:
        def zagent_register_speaker_selectors(self, register):
            register("last_first", lambda options, kernel: (lambda sel: sel.names[-1]))

    kernel.add_plugin(Loudest())
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B", "C"), termination={"max_rounds": 2},
                     selection="last_first", max_consecutive=None)
    assert chat.run("task").speakers == ["C", "C"]


def test_a_selector_plugin_given_at_start_before_groupchat_works():
    """A selector plugin listed in Kernel(plugins=[...]) before the groupchat plugin is accepted."""
    from zagent import Kernel

    class Loudest:
        def zagent_register_speaker_selectors(self, register):
            register("last_first", lambda options, kernel: (lambda sel: sel.names[-1]))

    k = Kernel(plugins=[Loudest(), "zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.groupchat"], entry_points=False, strict=True)
    chat = GroupChat(kernel=k, agents=echoes("A", "B", "C"), termination={"max_rounds": 2},
                     selection="last_first", max_consecutive=None)
    assert chat.run("task").speakers == ["C", "C"]


def test_two_plugins_registering_one_selector_name_is_an_error_naming_both(kernel):
    """A selector name registered twice without override is refused by the kernel's clash check, naming both."""

    class One:
        def zagent_register_speaker_selectors(self, register):
            register("dup", lambda options, kernel: None)

    kernel.add_plugin(One(), name="one")
    with pytest.raises(PluginError, match="speaker selector 'dup' is registered by both plugin 'one' and plugin 'two'"):
        kernel.add_plugin(One(), name="two")
    assert kernel.registries["speaker_selectors"].entry("dup").plugin == "one"


def test_selectors_live_in_the_kernel_registry_and_go_with_their_plugin(kernel):
    """kernel.registries['speaker_selectors'] holds built-ins and plugin policies; remove_plugin drops the latter."""

    class Loudest:
        def zagent_register_speaker_selectors(self, register):
            register("last_first", lambda options, kernel: (lambda sel: sel.names[-1]))

    registry = kernel.registries["speaker_selectors"]
    assert list(registry) == ["llm", "round_robin", "rules"]
    kernel.add_plugin(Loudest(), name="loud")
    assert registry.entry("last_first").plugin == "loud"
    kernel.remove_plugin("loud")
    with pytest.raises(ConfigError, match="unknown speaker selection policy 'last_first'"):
        GroupChat(kernel=kernel, agents=echoes("A"), selection="last_first")


def test_a_badly_registered_selector_drops_the_plugin_with_a_clear_error(kernel):
    """register() with a name containing ':' is refused naming the plugin; the plugin is not added."""

    class Bad:
        def zagent_register_speaker_selectors(self, register):
            register("a:b", lambda options, kernel: None)

    with pytest.raises(PluginError, match="plugin 'bad' registered a speaker selector with invalid name 'a:b'"):
        kernel.add_plugin(Bad(), name="bad")
    assert "a:b" not in kernel.registries["speaker_selectors"]


def test_groupchat_removed_and_added_back_keeps_its_registry(kernel):
    """Re-adding the groupchat plugin finds its hook spec and kind already there and registers the built-ins again."""
    kernel.remove_plugin("zagent.plugins.groupchat")
    assert "round_robin" not in kernel.registries["speaker_selectors"]
    kernel.add_plugin("zagent.plugins.groupchat")
    assert "round_robin" in kernel.registries["speaker_selectors"]


def test_a_plugin_may_override_a_builtin_policy(kernel):
    """override=True replaces a built-in policy of the same name."""

    class Mine:
        def zagent_register_speaker_selectors(self, register):
            register("round_robin", lambda options, kernel: (lambda sel: "B"), override=True)

    kernel.add_plugin(Mine())
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 2}, max_consecutive=None)
    assert chat.run("task").speakers == ["B", "B"]


def test_a_selector_named_by_import_path_is_used(kernel):
    """'policy': 'package.module:factory' needs no hook (once the module is in trusted_imports)."""
    kernel.config["trusted_imports"] = ["tests.groupchat.*"]
    chat = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 2}, max_consecutive=None,
                     selection={"policy": "tests.groupchat.test_groupchat_selection:always_b"})
    assert chat.run("task").speakers == ["B", "B"]


def always_b(options, kernel):
    return lambda sel: "B"


def test_an_unknown_policy_is_a_config_error_listing_the_known_ones(kernel):
    """An unknown policy name fails when the chat is built, with the known names."""
    with pytest.raises(ConfigError, match="round_robin"):
        GroupChat(kernel=kernel, agents=echoes("A"), selection="nope")


def test_the_plugin_adds_its_selector_hook_spec_to_each_kernel(kernel):
    """Every kernel with the groupchat plugin knows zagent_register_speaker_selectors."""
    assert kernel.pm.hook.zagent_register_speaker_selectors.has_spec()


def test_a_selector_plugin_given_at_start_up_after_groupchat_works():
    """A selector plugin listed after the groupchat plugin at start-up registers its policy."""
    from zagent import Kernel

    from .conftest import PLUGINS

    class Early:
        def zagent_register_speaker_selectors(self, register):
            register("early", lambda options, kernel: (lambda sel: sel.names[0]))

    with Kernel(plugins=PLUGINS + [Early()], entry_points=False, strict=True) as k:
        chat = GroupChat(kernel=k, agents=echoes("A", "B"), termination={"max_rounds": 2},
                         selection="early", max_consecutive=None)
        assert chat.run("task").speakers == ["A", "A"]


def test_react_speaker_runs_under_the_chat_run_id(kernel):
    """A ReActAgent speaker's turn runs under the chat's run id, with its own agent name."""
    seen = []

    class Spy:
        def zagent_before_llm_call(self, request, ctx):
            seen.append((ctx.run_id, ctx.agent))

    kernel.add_plugin(Spy())
    helper = kernel.agent({"type": "react", "name": "Helper"})
    helper.llm = kernel.llm("scripted:h", replies=["I can help."])
    chat = GroupChat(kernel=kernel, agents=[helper], termination={"max_rounds": 1})
    result = chat.run("task")
    assert seen == [(result.run_id, "Helper")]
