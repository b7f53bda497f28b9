"""``zagent.agentkit.guardrails.check``: the one dispatch point of zagent_check_input / zagent_check_output."""

import asyncio

import pytest

from zagent import Deny, GuardrailTripped, Kernel
from zagent.agentkit.guardrails import check, wanted


def test_no_guardrail_means_nothing_is_wanted():
    """With no hook implementation and no agent guardrail, wanted() is False (the loops skip the check)."""
    k = Kernel(entry_points=False)
    assert not wanted(k.context(), "input") and not wanted(k.context(), "output")
    k.close()


def test_zagent_check_input_hook_trips_with_its_plugin_name():
    """A zagent_check_input implementation returning Deny raises GuardrailTripped naming the plugin."""
    class Hook:
        def zagent_check_input(self, agent, inputs):
            return Deny(f"{agent} may not see {inputs}")

    k = Kernel(entry_points=False)
    k.add_plugin(Hook(), name="policy")
    with pytest.raises(GuardrailTripped) as info:
        asyncio.run(check(k.context(), "input", "bot", "x"))
    assert (info.value.guardrail, info.value.where) == ("policy", "input")
    assert info.value.reason == "bot may not see x"
    k.close()


def test_zagent_check_output_hook_returning_none_lets_it_through():
    """A zagent_check_output that answers None, even async, lets the output through."""
    seen = []

    class Hook:
        async def zagent_check_output(self, output):
            seen.append(output)

    k = Kernel(entry_points=False, plugins=[Hook()])
    asyncio.run(check(k.context(), "output", "bot", "fine"))
    assert seen == ["fine"]
    k.close()


def test_a_guardrail_returning_something_else_trips():
    """A guardrail that returns neither None, a str nor Deny trips (fail closed), saying what it returned."""
    k = Kernel(entry_points=False)
    with pytest.raises(GuardrailTripped, match="returned int"):
        asyncio.run(check(k.context(), "output", "bot", "x", own=[lambda output, ctx: 42]))
    k.close()
