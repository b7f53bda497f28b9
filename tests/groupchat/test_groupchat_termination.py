"""Termination: max rounds, keyword, judge, token and time budgets; combinable; the result names the cause."""

import pytest

from zagent import ConfigError, Usage
from zagent.plugins.groupchat import GroupChat, Judge, Keyword, MaxRounds, Reply, TokenBudget

from .conftest import Echo, echoes


def test_max_rounds_ends_the_chat_and_the_result_says_so(kernel):
    """After max_rounds turns the chat stops with stopped_by='max_rounds'."""
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"max_rounds": 3}).run("task")
    assert (result.stopped_by, result.rounds, result.status) == ("max_rounds", 3, "completed")


def test_a_chat_without_a_round_limit_is_still_bounded(kernel):
    """Without any max_rounds condition the chat's max_rounds (default 20) bounds it."""
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination=[Keyword(["never said"])],
                       max_rounds=4).run("task")
    assert (result.stopped_by, result.rounds) == ("max_rounds", 4)


def test_a_keyword_in_a_reply_ends_the_chat(kernel):
    """A reply containing a termination phrase (any case) ends the chat after that turn."""
    says = iter(["working", "still working", "All done: TERMINATE"])
    agents = [Echo("A", say=lambda turn: next(says)), Echo("B", say=lambda turn: next(says))]
    result = GroupChat(kernel=kernel, agents=agents, termination={"keywords": ["terminate"], "max_rounds": 9}).run("t")
    assert (result.stopped_by, result.rounds) == ("keyword", 3)
    assert "A said 'terminate'" == result.detail


def test_a_keyword_in_the_task_does_not_end_the_chat(kernel):
    """Only participants' replies are checked, not the task posted by the user."""
    result = GroupChat(kernel=kernel, agents=echoes("A"), termination={"keywords": ["DONE"], "max_rounds": 2}).run(
        "say DONE when done")
    assert result.stopped_by == "max_rounds"


def test_a_judge_agent_deciding_done_ends_the_chat(kernel):
    """The judge reads the transcript after each turn; its 'done' verdict ends the chat with its reason."""
    seen = []

    def verdict(turn):
        seen.append(turn.transcript)
        return "done: the draft is final" if turn.round == 2 else "not yet"

    judge = Echo("Judge", say=verdict)
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"judge": judge, "max_rounds": 9}).run("t")
    assert (result.stopped_by, result.rounds) == ("judge", 2)
    assert result.detail == "Judge: done: the draft is final"
    assert "A: A in round 1" in seen[0]


def test_a_judge_can_be_asked_every_n_rounds(kernel):
    """judge_every=3 asks the judge only after rounds 3, 6, ..."""
    asked = []
    judge = Echo("Judge", say=lambda turn: asked.append(turn.round) or "no")
    GroupChat(kernel=kernel, agents=echoes("A"), max_consecutive=None,
              termination={"judge": judge, "judge_every": 3, "max_rounds": 7}).run("t")
    assert asked == [3, 6]


def test_a_declared_judge_with_a_boolean_done_field_is_understood(kernel):
    """A customize judge answering JSON {done, reason} ends the chat when done is true."""
    llm = kernel.llm("scripted:judge", replies=['{"done": false, "reason": "thin"}',
                                                 '{"done": true, "reason": "complete"}'])
    judge = {"name": "Judge", "prompt": "Judge this: {transcript}", "inputs": [{"name": "transcript"}],
             "outputs": [{"name": "done", "type": "boolean"}, {"name": "reason"}], "parse_mode": "json", "llm": llm}
    from zagent.plugins.actions import CustomizeAgent

    agent = CustomizeAgent.from_dict({k: v for k, v in judge.items() if k != "llm"}, kernel, llm=llm)
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination={"judge": agent}).run("t")
    assert (result.stopped_by, result.rounds, result.detail) == ("judge", 2, "Judge: complete")


def test_a_token_budget_ends_the_chat(kernel):
    """When speakers have spent max_tokens, the chat stops with stopped_by='max_tokens'."""
    spend = Echo("A", say=lambda turn: Reply(content="x", usage=Usage(input_tokens=40, output_tokens=10, calls=1)))
    result = GroupChat(kernel=kernel, agents=[spend], max_consecutive=None,
                       termination={"max_tokens": 120, "max_rounds": 9}).run("t")
    assert (result.stopped_by, result.rounds, result.usage.total_tokens) == ("max_tokens", 3, 150)


def test_the_judge_s_tokens_count_against_the_budget(kernel):
    """Tokens the judge spends are part of the chat's usage."""
    judge = Echo("Judge", say=lambda turn: Reply(content="no", usage=Usage(output_tokens=100)))
    result = GroupChat(kernel=kernel, agents=echoes("A"), max_consecutive=None,
                       termination={"judge": judge, "max_tokens": 250, "max_rounds": 9}).run("t")
    assert (result.stopped_by, result.rounds) == ("max_tokens", 3)


def test_a_time_budget_ends_the_chat(kernel):
    """When the chat has run max_seconds (by its clock), it stops with stopped_by='max_time'."""
    now = [0.0]

    def tick(turn):
        now[0] += 10.0
        return "tick"

    result = GroupChat(kernel=kernel, agents=[Echo("A", say=tick)], max_consecutive=None, clock=lambda: now[0],
                       termination={"max_seconds": 25, "max_rounds": 9}).run("t")
    assert (result.stopped_by, result.rounds) == ("max_time", 3)


def test_conditions_combine_and_the_first_that_holds_is_reported(kernel):
    """Several conditions hold at once: the first in order (a list given programmatically) wins."""
    result = GroupChat(kernel=kernel, agents=echoes("A", "B"),
                       termination=[TokenBudget(10 ** 9), MaxRounds(2), Keyword(["round 2"])]).run("t")
    assert (result.stopped_by, result.rounds) == ("max_rounds", 2)


def test_a_custom_condition_is_any_object_with_name_and_check(kernel):
    """A condition is anything with check(view) (or acheck) and a name; its reason becomes the detail."""

    class TwoBs:
        name = "two_bs"

        def check(self, view):
            return "B spoke twice" if [m.speaker for m in view.messages].count("B") == 2 else None

    result = GroupChat(kernel=kernel, agents=echoes("A", "B"), termination=[TwoBs()]).run("t")
    assert (result.stopped_by, result.detail, result.rounds) == ("two_bs", "B spoke twice", 4)


def test_unknown_termination_settings_are_refused(kernel):
    """A misspelt termination key is a ConfigError naming the known keys."""
    with pytest.raises(ConfigError, match="max_round.*known"):
        GroupChat(kernel=kernel, agents=echoes("A"), termination={"max_round": 3})


def test_judge_verdicts_from_text_and_fields():
    """is_done: boolean 'done' first, else another boolean, else the reply's first word."""
    from zagent.plugins.groupchat.termination import is_done

    assert is_done({"done": True, "ok": False}, "") and not is_done({"done": False}, "done")
    assert is_done({"finished": True}, "") and is_done({}, "**Yes**, it is complete")
    assert not is_done({}, "No, the draft lacks sources") and not is_done({}, "")
    assert isinstance(Judge(agent=None).name, str)


@pytest.mark.parametrize("reply, done", [
    ("Yes, but the conclusion is missing.", False),
    ("Done, except for the references", False),
    ("yes - not yet", False),
    ("Yes. The draft is ready; nothing but praise.", True),
    ("DONE", True),
    ("Complete: all three sections are there.", True),
])
def test_a_hedged_yes_is_not_a_verdict_of_done(reply, done):
    """The text fallback reads only an unhedged first sentence as done ("Yes, but ..." goes on)."""
    from zagent.plugins.groupchat.termination import is_done

    assert is_done({}, reply) is done
