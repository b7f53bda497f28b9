"""Handoffs: one agent hands the conversation over to another (``Handoffs`` and a react file's ``handoffs``)."""

import asyncio
import json

import pytest

from zagent import ConfigError
from zagent.speckit import Trust
from zagent.plugins.react import Handoffs

from .conftest import call


def _agent(kernel, name, replies, **over):
    agent = kernel.agent({"type": "react", "name": name, "description": f"the {name} desk", **over})
    agent.llm = kernel.llm(f"scripted:{name}", replies=replies)
    return agent


def test_handoff_moves_the_answer_to_the_target_agent(kernel):
    """A transfer_to_<name> call ends the first agent's run and the target answers; the trace says who."""
    triage = _agent(kernel, "triage", [call("transfer_to_billing", reason="a refund")])
    billing = _agent(kernel, "billing", ["Your refund is on its way."])
    result = Handoffs(kernel, [triage, billing]).chat("I want my money back")
    assert result.content == "Your refund is on its way."
    assert result.answered_by == "billing"
    assert [(h.agent, h.reason) for h in result.trace] == [("triage", ""), ("billing", "a refund")]


def test_target_sees_the_history_and_the_reason(kernel):
    """The agent taking over gets the earlier turns, the user's request and why it was handed over."""
    triage = _agent(kernel, "triage", [{"content": "Let me pass you on.", "tool_calls": [
        {"name": "transfer_to_billing", "arguments": {"reason": "a refund"}}]}])
    billing = _agent(kernel, "billing", ["done"])
    Handoffs(kernel, [triage, billing]).chat("refund please", history=[{"role": "user", "content": "hi"},
                                                                        {"role": "assistant", "content": "hello"}])
    seen = [(m.role, m.content) for m in billing.llm.requests[0].messages[1:]]
    assert seen == [("user", "hi"), ("assistant", "hello"), ("assistant", "Let me pass you on."),
                    ("user", "refund please\n\n(Handed over to you by triage: a refund)")]


def test_agents_offer_only_their_routes(kernel):
    """Each agent is offered transfer tools for the agents its route names, and not for itself."""
    triage = _agent(kernel, "triage", ["I can answer that myself."])
    billing = _agent(kernel, "billing", [])
    support = _agent(kernel, "support", [])
    result = Handoffs(kernel, [triage, billing, support], routes={"triage": ["billing"]}).chat("hello")
    offered = [t.name for t in triage.llm.requests[0].tools]
    assert "transfer_to_billing" in offered and "transfer_to_support" not in offered
    assert "transfer_to_triage" not in offered
    assert result.answered_by == "triage"


def test_handoffs_stop_at_max_handoffs(kernel):
    """Past max_handoffs the last agent is offered no transfer tool and its answer stands."""
    ping = _agent(kernel, "ping", [call("transfer_to_pong"), "ping answers"])
    pong = _agent(kernel, "pong", [call("transfer_to_ping")])
    result = Handoffs(kernel, [ping, pong], max_handoffs=2).chat("go")
    assert [h.agent for h in result.trace] == ["ping", "pong", "ping"]
    assert result.answered_by == "ping" and result.content == "ping answers"
    assert not [t for t in ping.llm.requests[-1].tools if t.name.startswith("transfer_to_")]


def test_handoff_is_one_run_with_a_handoff_event(kernel):
    """Every agent of a handoff run shares its run id, and a 'handoff' event names source and target."""
    events = []

    class Events:
        def zagent_event(self, event):
            events.append(event)

    kernel.add_plugin(Events())
    triage = _agent(kernel, "triage", [call("transfer_to_billing", reason="money")])
    billing = _agent(kernel, "billing", ["ok"])
    result = Handoffs(kernel, [triage, billing]).chat("refund")
    handoff = [e for e in events if e.type == "handoff"]
    assert handoff and handoff[0].data["source"] == "triage" and handoff[0].data["target"] == "billing"
    assert {e.run_id for e in events} == {result.run_id}


def test_unknown_route_is_a_config_error(kernel):
    """A route naming an agent that is not in the group is a ConfigError listing the agents."""
    triage = _agent(kernel, "triage", [])
    with pytest.raises(ConfigError, match="unknown agent 'nobody'"):
        Handoffs(kernel, [triage], routes={"triage": ["nobody"]})


def test_react_file_handoffs_answer_a_chat(kernel, tmp_path):
    """A react agent file's "handoffs" list loads the agent files named, and chat answers through them."""
    (tmp_path / "billing.json").write_text(json.dumps({"type": "react", "name": "billing"}))
    path = tmp_path / "triage.json"
    path.write_text(json.dumps({"type": "react", "name": "triage", "handoffs": ["billing.json"]}))
    triage = kernel.agent(str(path), trust=Trust.for_file(path))
    triage.llm = kernel.llm("scripted:triage-file", replies=[call("transfer_to_billing", reason="money")])
    triage.handoffs[0].llm = kernel.llm("scripted:billing-file", replies=["billing here"])
    reply = triage.chat("refund", use_react=True)
    assert reply.content == "billing here"
    assert reply.metadata["answered_by"] == "billing"


def test_cli_runs_a_react_file_with_handoffs(tmp_path):
    """`zagent run` on a react file with "handoffs" offers the transfer tools, so the chat is handed over."""
    import os
    import subprocess
    import sys

    (tmp_path / "billing.json").write_text(json.dumps({"type": "react", "name": "billing"}))
    path = tmp_path / "triage.json"
    path.write_text(json.dumps({"type": "react", "name": "triage", "handoffs": ["billing.json"]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZAGENT_")}
    env["ZAGENT_LOG"] = "0"
    proc = subprocess.run([sys.executable, "-m", "zagent.plugins.cli", "run", str(path), "--input", "task=refund"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the offline test model calls every tool offered once: the transfer, then billing takes the turn
    assert "transfer_to_billing -> success" in proc.stderr and "[billing]" in proc.stderr


def test_declared_agent_takes_part_through_the_react_type(kernel):
    """A declared (customize) agent in a handoff group answers through a ReAct loop with its own model."""
    triage = _agent(kernel, "triage", [call("transfer_to_QA", reason="a question")])
    qa = kernel.agent({"name": "QA", "description": "answers", "prompt": "{question}",
                       "inputs": [{"name": "question", "type": "string"}],
                       "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"})
    qa.llm = kernel.llm("scripted:qa-handoff", replies=["forty-two"])
    result = Handoffs(kernel, [triage, qa]).chat("the answer?")
    assert (result.answered_by, result.content) == ("QA", "forty-two")
    assert "transfer_to_triage" in [t.name for t in qa.llm.requests[0].tools]


def test_two_transfers_in_one_reply_go_to_the_first(kernel):
    """A reply calling ``transfer_to_billing`` then ``transfer_to_sales``: the conversation goes to billing (the
    first), and the second call fails saying one handoff is made per reply, never a race between the two."""
    class Yields:  # a rail that awaits: both calls are past the loop's abort check before either handler runs
        async def zagent_before_tool_call(self, call, ctx):
            await asyncio.sleep(0)

    kernel.add_plugin(Yields())
    triage = _agent(kernel, "triage", [{"tool_calls": [
        {"name": "transfer_to_billing", "arguments": {"reason": "refund"}},
        {"name": "transfer_to_sales", "arguments": {"reason": "upsell"}}]}], max_tool_call_concurrency=4)
    billing = _agent(kernel, "billing", ["Billing here."])
    sales = _agent(kernel, "sales", ["Sales here."])
    result = Handoffs(kernel, [triage, billing, sales]).chat("help")
    assert (result.answered_by, result.content) == ("billing", "Billing here.")
    assert [h.agent for h in result.trace] == ["triage", "billing"]
    assert sales.llm.requests == []
