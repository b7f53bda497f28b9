"""Round twelve: tool scope, rails, guardrails and limits (the model calls only what it was offered; the app's rails,
guardrails and limits hold on every path).

Tried (84 attack cases; 16 got through on the code before the fixes, marked "got through" in their docstrings: 15
fixed, 1 open as a strict xfail, fixed in wave two). Got through: a model rail (``zagent_before_llm_call``) whose awaited value was another awaitable (a missing
``await``, a ``Deny`` inside) or an ``after_llm`` rail returning a string was ignored and the call went on (now
``ToolBlocked``: fail closed); a streamed answer the output validator rejected, or one that failed to parse before a
repair, reached the stream with the clean answer though no guardrail judged it (its held pieces are dropped); an
agent's or a spec's ``rails.tool_rpm_wait: true`` turned the kernel's rate deny into a wait of minutes (false wins
now); a declared agent ignored ``rails.max_tool_calls_per_reply`` (the kernel's and its own); a server reporting
zero tokens, or only output tokens, defeated ``usage_limits`` token limits (a zero count is estimated now); an
untrusted spec's ``llm_config.profile`` raised the app's per-model ``max_tool_calls_per_reply`` (2 -> 1,000,000)
and set an unbounded ``max_tokens``/``max_context_tokens`` (refused / bounded now). Held: new near-misses of a tool
not offered (zero-width, no-break space, Cyrillic, combining marks, ``functions.``/``mcp__`` prefixes, NUL, dotted)
natively and in every text format; pycall nesting, unpacking or computing a name; an agent offered as a tool
elsewhere; a handoff target calling the tool of the agent handing over; a tool unavailable or removed mid-run;
parallel mixed calls; wrong argument types and a key given twice; a 2 MB text-format argument under
``max_argument_bytes``; rails and guardrails that raise or return nested awaitables; an agent-as-tool's and a handoff
target's input guardrails; a group chat member's blocked answer; a selector naming an agent outside the chat; request
and token limits across group-chat rounds and agents called as tools; the per-run limits of an agent handing over
(budget, calls per reply, rate). Wave two: text around a streamed JSON answer's object (also prose around
``title``/``xml`` fields, an extra key, another object) was released unjudged: now only the judged fields are.
"""

import json

import pytest

from zagent import Completion, Deny, Message, ToolCall, Usage, run_sync
from zagent.errors import GuardrailTripped, ToolBlocked, UsageLimitExceeded
from zagent.hookspecs import hookimpl

from .conftest import calls, declared, drain, make_kernel

WORD = {"name": "word_count", "arguments": {"text": "a b"}}
STEAL = {"name": "steal", "arguments": {"path": "/etc/shadow"}}
SECRET = "SECRET-R12-7731"
FORMATS = ["tool_call", "hermes", "mistral", "llama3", "fenced", "pycall", "pipe"]
# new near-misses of ``steal`` (round eleven tried full-width, soft hyphen, tab, case and prefixes)
VARIANTS = ["st\u200beal", "steal\u2060", "steal\u00a0", "\u0455teal", "stea\u04cf", "steal\u0301", "functions.steal",
            "mcp__srv__steal", " steal ", "steal\x00", "word_count.steal", "word_count\u200b"]


def _streamed_text(items):
    return "".join(i.text or "" for i in items if i.type in ("text", "reasoning"))


class _SecretGuard:
    """A kernel output guardrail: an answer holding ``SECRET`` may not leave."""

    def zagent_check_output(self, agent, output, ctx):
        return "the answer holds a secret" if SECRET in json.dumps(output, default=str) else None


# -- tool scope: names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_a_new_near_miss_of_a_tool_name_never_runs_it_natively(kernel, name):
    """Attack: a native call of ``steal`` (registered, not offered) spelt with a zero-width space or joiner, a
    no-break space, Cyrillic look-alikes, a combining accent, a ``functions.``/``mcp__srv__`` prefix, spaces, a NUL,
    or dotted under the offered tool. Defence (held): names match exactly; blocked or unknown, nothing runs."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:near", replies=[calls({**STEAL, "name": name}), "done"])
    result = agent(text="x")
    assert kernel.spy.ran == []
    assert [r.state for r in result.tool_results] in (["blocked"], ["error"])


@pytest.mark.parametrize("name", ["st\u200beal", "\u0455teal", "functions.steal", "steal\u00a0"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_near_miss_in_every_text_format_never_runs_it(kernel, fmt, name):
    """Attack: the same near-misses written in each text tool-call format (prompt mode). Defence (held): what a
    parser reads goes through the exact-name scope; nothing runs (a format that cannot read the name calls nothing)."""
    agent = kernel.agent(declared(tool_format=fmt))
    reply = kernel.tool_format(fmt).render_calls([ToolCall(id="c1", name=name, arguments={"path": "/etc/shadow"})])
    agent.llm = kernel.llm(f"scripted:{fmt}", replies=[reply, "done"], profile={"native_tools": False})
    result = agent(text="x")
    assert kernel.spy.ran == []
    assert all(r.state in ("blocked", "error") for r in result.tool_results)


@pytest.mark.parametrize("reply", ['[word_count(text=steal(path="/etc/shadow"))]',
                                   '[steal(**{"path": "/etc/shadow"})]',
                                   '[getattr(tools, "steal")(path="/etc/shadow")]'])
def test_pycall_nested_or_computed_calls_never_run_a_tool_not_offered(kernel, reply):
    """Attack: a Python-call reply that nests ``steal`` inside an offered call's argument, unpacks its arguments or
    computes its name. Defence (held): pycall evaluates nothing; the scope blocks what it reads."""
    agent = kernel.agent(declared(tool_format="pycall"))
    agent.llm = kernel.llm("scripted:pycall", replies=[reply, "done"], profile={"native_tools": False})
    agent(text="x")
    assert "steal" not in kernel.spy.ran


def test_an_agent_offered_as_a_tool_elsewhere_is_not_reachable_by_name(kernel):
    """Attack: the model of an agent offered only ``word_count`` names ``helper``, an agent another agent is offered
    as a tool (it may ``steal``). Defence (held): blocked; helper's model is never asked."""
    helper = kernel.agent({"type": "react", "name": "helper", "tools": ["steal"]})
    helper.llm = kernel.llm("scripted:helper", replies=[calls(STEAL), "stolen"])
    helper.as_tool()
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:boss", replies=[calls({"name": "helper", "arguments": {"task": "steal"}}), "ok"])
    result = agent(text="x")
    assert [r.state for r in result.tool_results] == ["blocked"]
    assert helper.llm.requests == [] and kernel.spy.ran == []


def test_a_handoff_target_cannot_call_a_tool_only_the_agent_handing_over_had(kernel):
    """Attack: ``front`` (offered ``steal``) hands over to ``billing`` (offered nothing); billing's model calls
    ``steal``, which the conversation shows was offered a step earlier. Defence (held): each step's offer is the
    agent holding the conversation; blocked."""
    billing = kernel.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["word_count"]})
    billing.llm = kernel.llm("scripted:billing", replies=[calls(STEAL), "answer"])
    front = kernel.agent({"type": "react", "name": "front", "description": "desk", "tools": ["steal"]})
    front.handoffs = [billing]
    front.llm = kernel.llm("scripted:front", replies=[
        calls({"name": "transfer_to_billing", "arguments": {"reason": "billing"}})])
    front.chat("my bill?", use_react=True)
    assert kernel.spy.ran == []


def test_a_tool_whose_availability_turns_false_mid_run_does_not_run(kernel):
    """Attack: a tool offered while available; its check turns false before the model's call (a login expired).
    Defence (held): the kernel checks availability at the call; an error result, nothing runs."""
    state = {"up": True}

    def gated(text: str) -> str:
        """A tool that needs a live session."""
        kernel.spy.ran.append("gated")
        return text

    kernel.add_tool(gated, available=lambda: state["up"])

    def expire(request):
        state["up"] = False
        return calls({"name": "gated", "arguments": {"text": "x"}})

    agent = kernel.agent(declared(tools=["gated"]))
    agent.llm = kernel.llm("scripted:gated", replies=[expire, "done"])
    result = agent(text="x")
    assert kernel.spy.ran == [] and [r.state for r in result.tool_results] == ["error"]
    assert "not available" in result.tool_results[0].content


def test_a_tool_removed_mid_run_is_not_run_by_its_old_name(kernel):
    """Attack: the app removes ``word_count`` while a run that was offered it goes on; the model calls it anyway.
    Defence (held): an unknown tool, nothing runs."""
    def remove_then_call(request):
        kernel.remove_tool("word_count")
        return calls(WORD)

    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:removed", replies=[remove_then_call, "done"])
    result = agent(text="x")
    assert kernel.spy.ran == [] and [r.state for r in result.tool_results] == ["error"]


def test_parallel_calls_mixing_offered_and_not_offered_run_only_the_offered(kernel):
    """Attack: one reply with eight calls alternating ``word_count`` and near-misses of ``steal``. Defence (held):
    each call is judged alone; only the offered ones run."""
    mixed = [WORD if i % 2 == 0 else {**STEAL, "name": VARIANTS[i]} for i in range(8)]
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:mixed", replies=[calls(*mixed), "done"])
    agent(text="x")
    assert kernel.spy.ran == ["word_count"] * 4


# -- tool scope: arguments --------------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", [{"text": ["rm", "-rf", "/"]}, {"text": {"__class__": "os.system"}},
                                       {"text": None}, '{"text": "a", "text": ["x"]}'])
def test_arguments_of_a_wrong_type_never_reach_the_tool(kernel, arguments):
    """Attack: ``word_count`` (takes a string) called with a list, a dict, null, or a JSON string giving the key
    twice (the last a list). Defence (held): an error result the model can act on; the tool does not run."""
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:types", replies=[calls({"name": "word_count", "arguments": arguments}), "done"])
    result = agent(text="x")
    assert kernel.spy.ran == [] and [r.state for r in result.tool_results] == ["error"]


def test_a_huge_argument_string_in_a_text_format_meets_the_size_rail():
    """Attack: a prompt-mode call carrying a 2 MB argument, over the kernel's ``max_argument_bytes``. Defence (held):
    the size rail reads the parsed call; blocked, nothing runs."""
    k = make_kernel(config={"rails": {"max_argument_bytes": 10_000}})
    try:
        agent = k.agent(declared(tool_format="hermes"))
        reply = k.tool_format("hermes").render_calls([ToolCall(id="c1", name="word_count",
                                                               arguments={"text": "a " * 1_000_000})])
        agent.llm = k.llm("scripted:huge", replies=[reply, "done"], profile={"native_tools": False})
        result = agent(text="x")
        assert k.spy.ran == [] and [r.state for r in result.tool_results] == ["blocked"]
    finally:
        k.close()


# -- rails fail closed ------------------------------------------------------------------------------------------


class _LazyDenyLLM:
    """A model rail whose async hook returns its (un-awaited) check: the awaited value is a coroutine holding Deny."""

    async def _check(self):
        return Deny("no model calls today")

    @hookimpl
    def zagent_before_llm_call(self, request, ctx):
        async def outer():
            return self._check()  # forgot the await

        return outer()


class _WrongReplyRail:
    """A reply rail returning text (meant as a verdict) instead of ``None`` or a ``Completion``."""

    @hookimpl
    def zagent_after_llm_call(self, request, response, ctx):
        return f"withheld: {response.message.content}"


class _RaisingLLMRail:
    def __init__(self, where):
        self.where = where

    @hookimpl
    def zagent_before_llm_call(self, request, ctx):
        async def broken():
            if self.where == "before":
                raise RuntimeError("policy service down")

        return broken()

    @hookimpl
    def zagent_after_llm_call(self, request, response, ctx):
        async def broken():
            if self.where == "after":
                raise RuntimeError("policy service down")

        return broken()


def _ask(k, reply):
    """One model call of a run, as every loop makes it (the rails run around it)."""
    llm = k.llm("scripted:one", replies=[reply])
    return llm, lambda: run_sync(llm.acomplete("go", ctx=k.context(agent="a")))


def _react(k, replies, tools=("word_count",)):
    from zagent.plugins.react import ReActLoop

    return ReActLoop(kernel=k, llm=k.llm("scripted:rails", replies=replies), tools=list(tools))


def test_a_model_rail_returning_an_unawaited_deny_fails_closed(kernel):
    """Attack (got through): a ``zagent_before_llm_call`` rail whose awaited value is another awaitable (a missing
    ``await``, its ``Deny`` inside): the value was ignored and the request sent. Defence: a value that is not
    ``None``, an ``LLMRequest`` or ``Deny`` blocks the request (``ToolBlocked`` naming the rail and the type)."""
    kernel.add_plugin(_LazyDenyLLM(), name="lazy")
    llm, ask = _ask(kernel, "hello")
    with pytest.raises(ToolBlocked, match="lazy.*coroutine"):
        ask()
    assert llm.requests == []


def test_a_reply_rail_returning_the_wrong_type_withholds_the_reply(kernel):
    """Attack (got through): a ``zagent_after_llm_call`` rail returning a string: ignored, the model's reply went on.
    Defence: a value that is not ``None`` or a ``Completion`` withholds the reply (``ToolBlocked``)."""
    kernel.add_plugin(_WrongReplyRail(), name="wrong")
    with pytest.raises(ToolBlocked, match="wrong.*str"):
        _ask(kernel, SECRET)[1]()


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_model_rail_whose_awaitable_raises_fails_closed(kernel, where):
    """Attack: a before/after model rail returning an awaitable that raises (its policy service is down).
    Defence (held): the request is blocked or the reply withheld, naming the rail."""
    kernel.add_plugin(_RaisingLLMRail(where), name="flaky")
    with pytest.raises(ToolBlocked, match="flaky"):
        _ask(kernel, SECRET)[1]()


def test_a_tool_rail_returning_an_awaitable_of_an_awaitable_blocks(kernel):
    """Attack: a ``zagent_before_tool_call`` rail returning a coroutine whose value is another coroutine (a Deny
    never awaited). Defence (held): the call is blocked, nothing runs."""
    class Lazy:
        async def _deny(self):
            return Deny("no")

        @hookimpl
        def zagent_before_tool_call(self, call, ctx):
            async def outer():
                return self._deny()

            return outer()

    kernel.add_plugin(Lazy(), name="lazy-tool")
    result = run_sync(kernel.arun_tool(ToolCall(id="c1", name="steal", arguments={"path": "p"}), kernel.context()))
    assert result.state == "blocked" and kernel.spy.ran == []


def test_an_after_tool_rail_raising_on_parallel_calls_withholds_every_result(kernel):
    """Attack: four parallel calls; the after-tool rail's awaitable raises for each. Defence (held): every result
    is withheld (``blocked``), none reaches the model."""
    class Broken:
        @hookimpl
        def zagent_after_tool_call(self, call, result, ctx):
            async def boom():
                raise RuntimeError("scanner down")

            return boom()

    kernel.add_plugin(Broken(), name="scanner")
    agent = kernel.agent(declared())
    agent.llm = kernel.llm("scripted:par", replies=[calls(*[WORD] * 4), "done"])
    result = agent(text="x")
    assert [r.state for r in result.tool_results] == ["blocked"] * 4


# -- guardrails -------------------------------------------------------------------------------------------------


def _streamed_writer(k, replies, parse_mode="str", outputs=None):
    agent = k.agent({"name": "Writer", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
                     "outputs": outputs or [{"name": "answer"}], "parse_mode": parse_mode})
    agent.llm = k.llm("scripted:writer", replies=replies)
    return agent


def test_a_streamed_answer_a_validator_rejected_never_reaches_the_stream():
    """Attack (got through): a streamed agent with an output guardrail and a validator; the model's first answer
    (the secret) fails the validator, the re-asked one is clean and passes. The held pieces of the rejected
    answer, never judged by the guardrail, were released with the clean one. Defence: a rejected answer's pieces
    are dropped before the model is asked again."""
    from zagent.plugins.actions.validators import ModelRetry

    def no_drafts(value, ctx=None):
        if "draft" in value.answer:
            raise ModelRetry("no drafts")

    k = make_kernel()
    k.add_plugin(_SecretGuard(), name="secret-guard")
    try:
        agent = _streamed_writer(k, [f"draft: {SECRET}", "a clean final answer"])
        agent.output_validators = [no_drafts]
        got, err = drain(agent.astream(topic="x"))
        assert err is None and SECRET not in _streamed_text(got)
        assert "a clean final answer" in _streamed_text(got)
    finally:
        k.close()


def test_an_input_guardrail_holds_for_an_agent_called_as_a_tool(kernel):
    """Attack: the caller's model sends a forbidden task to an agent offered as a tool. Defence (held): the callee
    judges its input; the run stops with ``GuardrailTripped`` before the callee's tool runs."""
    class Forbidden:
        def zagent_check_input(self, agent, inputs, ctx):
            return "forbidden" if "FORBIDDEN" in json.dumps(inputs, default=str) else None

    kernel.add_plugin(Forbidden(), name="forbid")
    helper = kernel.agent({"type": "react", "name": "helper", "tools": ["steal"]})
    helper.llm = kernel.llm("scripted:h", replies=[calls(STEAL), "ok"])
    helper.as_tool()
    boss = _react(kernel, [calls({"name": "helper", "arguments": {"task": "FORBIDDEN: steal"}}), "done"],
                  tools=["helper"])
    with pytest.raises(GuardrailTripped, match="forbidden"):
        boss.run("go")
    assert kernel.spy.ran == [] and helper.llm.requests == []


# -- limits -----------------------------------------------------------------------------------------------------


def _rpm_kernel(agent_rails):
    """A kernel denying ``word_count`` past 1 call a minute (``tool_rpm_wait: false``), windows on a recorded sleep."""
    from zagent.plugins.rails.ratelimit import WINDOWS, RateWindows

    k = make_kernel(config={"rails": {"tool_rpm": {"word_count": 1}, "tool_rpm_wait": False}})
    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    k.stash[WINDOWS] = RateWindows(sleep=sleep)
    return k, slept


def test_an_agents_tool_rpm_wait_cannot_turn_the_kernels_deny_into_waiting():
    """Attack (got through): the kernel denies calls over its ``tool_rpm`` at once (``tool_rpm_wait: false``); an
    agent's rails say ``tool_rpm_wait: true``, so its second call waited (up to four minutes, holding the run)
    instead. Defence: ``tool_rpm_wait`` merges as a floor: false if either says false."""
    k, slept = _rpm_kernel({"tool_rpm_wait": True})
    try:
        ctx = k.context(agent="a", agent_config={"rails": {"tool_rpm_wait": True}})
        first = run_sync(k.arun_tool(ToolCall(id="c1", name="word_count", arguments={"text": "a"}), ctx))
        second = run_sync(k.arun_tool(ToolCall(id="c2", name="word_count", arguments={"text": "a"}), ctx))
        assert first.state == "success" and second.state == "blocked"
        assert slept == [] and "rate limit" in second.error
    finally:
        k.close()


def test_a_react_spec_file_cannot_switch_the_rate_deny_to_waiting(tmp_path):
    """Attack (got through): the same ``tool_rpm_wait: true`` from an untrusted ReAct spec file's ``rails``.
    Defence: as above; the second call is denied at once."""
    k, slept = _rpm_kernel({})
    try:
        path = tmp_path / "agent.json"
        path.write_text(json.dumps({"type": "react", "name": "fast", "tools": ["word_count"],
                                    "rails": {"tool_rpm_wait": True}}))
        agent = k.agent(str(path))
        agent.llm = k.llm("scripted:rpm", replies=[calls(WORD), calls(WORD), "done"])
        agent.chat("count", use_react=True)
        assert slept == [] and k.spy.ran == ["word_count"]
    finally:
        k.close()


@pytest.mark.parametrize("where", ["kernel", "agent"])
def test_a_declared_agent_keeps_the_rails_cap_on_calls_per_reply(where):
    """Attack (got through): ``rails.max_tool_calls_per_reply: 1`` (the kernel's, or the agent's own); a declared
    agent's model replies with three calls and all three ran (its loop read only the profile's cap of 64).
    Defence: a declared agent's turns take the rails' cap too; one runs, the rest are refused."""
    rails = {"rails": {"max_tool_calls_per_reply": 1}}
    k = make_kernel(config=rails if where == "kernel" else None)
    try:
        agent = k.agent(declared(**({"agent_config": rails} if where == "agent" else {})))
        agent.llm = k.llm("scripted:cap", replies=[calls(WORD, WORD, WORD), "done"])
        result = agent(text="x")
        assert k.spy.ran == ["word_count"]
        assert [r.state for r in result.tool_results] == ["success", "blocked"]
    finally:
        k.close()


def _silent(content=None, tool_calls=(), usage=None):
    """A reply whose server reports no usage at all (zero tokens)."""
    return Completion(message=Message(role="assistant", content=content, tool_calls=list(tool_calls)),
                      finish_reason="stop", usage=usage or Usage())


@pytest.mark.parametrize("limit", ["total_tokens", "output_tokens"])
def test_a_server_reporting_no_usage_cannot_evade_token_limits(limit):
    """Attack (got through; a known leftover): ``usage_limits`` caps a run's tokens; the server (or a proxy) reports
    zero usage, so 40,000 characters out counted nothing. Defence: a reply reporting zero tokens for text that is
    there is counted by an estimate (four characters a token); the run ends with ``UsageLimitExceeded``."""
    k = make_kernel(config={"rails": {"usage_limits": {limit: 1000}}})
    try:
        with pytest.raises(UsageLimitExceeded, match=limit):
            _react(k, [_silent("x" * 40_000)]).run("go")
    finally:
        k.close()


def test_a_server_reporting_only_output_tokens_cannot_hide_a_huge_prompt():
    """Attack (got through): the server reports 1 output token and no input tokens for a 400,000-character request
    (tool results fed back). Defence: the missing input count is estimated; ``input_tokens`` stops the run."""
    k = make_kernel(config={"rails": {"usage_limits": {"input_tokens": 5000}}})
    try:
        with pytest.raises(UsageLimitExceeded, match="input_tokens"):
            _react(k, [_silent("ok", usage=Usage(output_tokens=1, calls=1))]).run("y" * 400_000)
    finally:
        k.close()


def test_honest_usage_is_counted_as_reported():
    """The estimate is only for missing counts: a reply reporting its usage is counted as reported."""
    k = make_kernel(config={"rails": {"usage_limits": {"total_tokens": 100}}})
    try:
        reply = _silent("x" * 40_000, usage=Usage(input_tokens=10, output_tokens=20, calls=1))
        assert _react(k, [reply]).run("go").content == "x" * 40_000
    finally:
        k.close()


def test_group_chat_rounds_share_the_runs_request_limit():
    """Attack: a group chat of two members and ``max_rounds: 50``, under ``usage_limits.requests: 3``. Defence
    (held): every member's request counts against the one run; the fourth ends it."""
    from zagent.plugins.groupchat import GroupChat

    k = make_kernel(config={"rails": {"usage_limits": {"requests": 3}}})
    try:
        member = {"type": "react", "tools": ["word_count"]}
        llm = k.llm("scripted:gc", replies=[f"turn {i}" for i in range(100)])
        chat = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", **member}, {"name": "B", **member}],
                                    "termination": {"max_rounds": 50}}, k, llm=llm)
        with pytest.raises(UsageLimitExceeded, match="requests=3"):
            chat.run("talk")
        assert len(llm.requests) == 3
    finally:
        k.close()


def test_an_agent_called_as_a_tool_counts_against_its_callers_token_limit():
    """Attack: the caller is under ``usage_limits.output_tokens: 2000``; it calls an agent as a tool whose replies
    are 40,000 characters (the callee has no limit of its own). Defence (held): one run, one counter."""
    k = make_kernel(config={"rails": {"usage_limits": {"output_tokens": 2000}}})
    try:
        helper = k.agent({"type": "react", "name": "helper"})
        helper.llm = k.llm("scripted:h", replies=["z" * 40_000])
        helper.as_tool()
        boss = _react(k, [calls({"name": "helper", "arguments": {"task": "write"}}), "done"], tools=["helper"])
        with pytest.raises(UsageLimitExceeded, match="output_tokens"):
            boss.run("go")
    finally:
        k.close()


def test_a_streamed_answer_that_failed_to_parse_never_reaches_the_stream():
    """Attack: a streamed ``json`` agent under an output guardrail; the model's first reply is not JSON and holds
    the secret, the repaired one is clean JSON. The unparsed reply was never judged. Defence: only judged text
    streams; the unparsed reply's pieces are dropped."""
    k = make_kernel()
    k.add_plugin(_SecretGuard(), name="secret-guard")
    try:
        agent = _streamed_writer(k, [f"Sure! here: {SECRET} (no json, sorry)", '{"answer": "a clean answer"}'],
                                 parse_mode="json")
        got, err = drain(agent.astream(topic="x"))
        assert err is None and SECRET not in _streamed_text(got)
    finally:
        k.close()


def _spec_with_profile(profile, replies):
    return {"name": "C", "prompt": "Count: {text}", "inputs": [{"name": "text"}], "outputs": [{"name": "answer"}],
            "parse_mode": "str", "tools": ["word_count"],
            "llm_config": {"model": "scripted:x", "replies": replies, "profile": profile}}


def test_a_spec_profile_cannot_raise_the_apps_cap_on_calls_per_reply():
    """Attack (got through): the app's ``profiles`` cap replies at 2 tool calls; an untrusted agent file's
    ``llm_config.profile`` says ``max_tool_calls_per_reply: 1000000`` (it overrode the app's per-model profile) and
    its model's ten calls all ran. Defence: a spec's profile may not set that cap (``ConfigError`` naming the key
    and ``rails.max_tool_calls_per_reply``, which only lowers it)."""
    from zagent.errors import ConfigError

    k = make_kernel(config={"profiles": {"scripted:*": {"max_tool_calls_per_reply": 2}}})
    try:
        with pytest.raises(ConfigError, match="max_tool_calls_per_reply"):
            agent = k.agent(_spec_with_profile({"max_tool_calls_per_reply": 1_000_000}, [calls(*[WORD] * 10), "ok"]))
            agent(text="x")
        assert k.spy.ran == []
    finally:
        k.close()


@pytest.mark.parametrize("profile", [{"max_tokens": 10**12}, {"max_context_tokens": 10**15}, {"max_tokens": -1}])
def test_a_spec_profile_number_is_bounded_like_the_option(profile):
    """Attack (got through): ``llm_config.max_tokens`` is bounded (1-1,000,000) but the same number under
    ``llm_config.profile`` (sent with every call that gives none) was not. Defence: the profile's numbers have the
    same bounds."""
    from zagent.errors import ConfigError

    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="max_"):
            agent = k.agent(_spec_with_profile(profile, ["ok"]))
            agent(text="x")
    finally:
        k.close()


def test_a_spec_profile_may_still_set_capabilities():
    """A spec's profile still sets capability fields (prompt-mode tools, a format) and a bounded ``max_tokens``."""
    k = make_kernel()
    try:
        agent = k.agent(_spec_with_profile({"native_tools": False, "tool_format": "hermes", "max_tokens": 512},
                                           [calls(WORD), "ok"]))
        assert agent(text="x").answer == "ok" and k.spy.ran == ["word_count"]
    finally:
        k.close()


def test_a_handoff_targets_own_input_guardrail_judges_the_handed_over_request(kernel):
    """Attack: ``front`` (no guardrails) hands a request holding an account number to ``billing``, whose own input
    guardrail forbids them. Defence (held): the target judges the request it is handed; nothing reaches its
    model."""
    billing = kernel.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["word_count"]})
    billing.llm = kernel.llm("scripted:billing", replies=[calls(WORD), "answer"])
    billing.guardrails = {"input": [lambda v, ctx: Deny("no account numbers") if "ACCOUNT" in str(v) else None]}
    front = kernel.agent({"type": "react", "name": "front", "description": "desk"})
    front.handoffs = [billing]
    front.llm = kernel.llm("scripted:front", replies=[
        calls({"name": "transfer_to_billing", "arguments": {"reason": "billing"}})])
    with pytest.raises(GuardrailTripped, match="account"):
        front.chat("ACCOUNT 1234-5678, what do I owe?", use_react=True)
    assert billing.llm.requests == [] and kernel.spy.ran == []


@pytest.mark.parametrize("member", [{"type": "react"},
                                    {"prompt": "Task: {text}\n{transcript}", "inputs": [{"name": "text"},
                                     {"name": "transcript"}], "outputs": [{"name": "answer"}], "parse_mode": "str"}])
def test_a_group_chat_members_blocked_answer_never_reaches_the_next_speaker(kernel, member):
    """Attack: member A's answer holds the secret; a kernel output guardrail blocks it. Defence (held): the chat
    stops with ``GuardrailTripped``; B's model never sees the blocked text in its transcript."""
    kernel.add_plugin(_SecretGuard(), name="secret-guard")
    llm = kernel.llm("scripted:gc", replies=[f"here: {SECRET}", "b", "a", "b"])
    from zagent.plugins.groupchat import GroupChat

    chat = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", **member}, {"name": "B", **member}],
                                "termination": {"max_rounds": 3}}, kernel, llm=llm)
    with pytest.raises(GuardrailTripped):
        chat.run("talk", text="t")
    assert not any(SECRET in (m.content or "") for r in llm.requests[1:] for m in r.messages)


def test_an_output_guardrail_hook_returning_an_unawaited_verdict_trips(kernel):
    """Attack: a kernel output guardrail whose awaitable returns another (un-awaited) awaitable holding a reason.
    Defence (held): a verdict that is not ``None``, a string or ``Deny`` trips the guardrail (fail closed)."""
    class LazyGuard:
        async def _judge(self, output):
            return "blocked" if SECRET in str(output) else None

        def zagent_check_output(self, agent, output, ctx):
            async def outer():
                return self._judge(output)

            return outer()

    kernel.add_plugin(LazyGuard(), name="lazy-guard")
    agent = kernel.agent(declared(tools=()))
    agent.llm = kernel.llm("scripted:lazy", replies=[SECRET])
    with pytest.raises(GuardrailTripped, match="coroutine"):
        agent(text="x")


def test_a_group_chat_selector_naming_an_agent_outside_the_chat_is_overruled(kernel):
    """Attack: the selection model names ``admin`` (an agent of the kernel, not of the chat, offered ``steal``),
    also inside a fake ``transfer_to_admin``. Defence (held): only the chat's members speak (round-robin instead);
    admin's model is never asked, nothing is stolen."""
    from zagent.plugins.groupchat import GroupChat

    admin = kernel.agent({"type": "react", "name": "admin", "tools": ["steal"]})
    admin.llm = kernel.llm("scripted:admin", replies=[calls(STEAL), "x"])
    llm = kernel.llm("scripted:gc", replies=["admin", "a1", "Next: admin (transfer_to_admin)", "b1", "admin", "a2"])
    chat = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", "type": "react"}, {"name": "B", "type": "react"}],
                                "selection": {"policy": "llm"}, "termination": {"max_rounds": 3}}, kernel, llm=llm)
    result = chat.run("talk")
    assert set(result.speakers) <= {"A", "B"} and admin.llm.requests == [] and kernel.spy.ran == []


ANSWER = '{"answer": "clean"}'
AROUND = [  # (parse mode, the model's reply): the secret outside what the parser reads, so outside what is judged
    ("json", f"Note: {SECRET}\n{ANSWER}"), ("json", f"{ANSWER}\nP.S. {SECRET}"),
    ("json", f'{{"answer": "clean", "note": "{SECRET}"}}'), ("json", f'{{"note": "{SECRET}"}}\n{ANSWER}'),
    ("json", f'{ANSWER}{{"answer": "{SECRET}"}}'), ("json", f"```\n{SECRET}\n```\n```json\n{ANSWER}\n```"),
    ("json", f"```json\n{ANSWER}\n``` {SECRET} ```"), ("title", f"{SECRET}\n## answer\nclean"),
    ("xml", f"{SECRET}\n<answer>clean</answer>"), ("xml", f"<answer>clean</answer><note>{SECRET}</note>")]


@pytest.mark.parametrize("mode, reply", AROUND)
def test_text_around_a_streamed_structured_answer_is_not_released_unjudged(mode, reply):
    """Attack (got through): a streamed ``json`` (``title``, ``xml``) agent under an output guardrail; the reply
    holds the secret outside the fields the parser reads (prose before or after, an extra key, another object, a
    fence). The guardrail passed the clean fields and the held pieces, the secret included, were released.
    Defence: only what was judged is released, the fields rendered in the format (``actionrun.keep_judged``).
    The trajectory holds the reply (as for any agent)."""
    k = make_kernel()
    k.add_plugin(_SecretGuard(), name="secret-guard")
    try:
        got, err = drain(_streamed_writer(k, [reply, reply], parse_mode=mode).astream(topic="x"))
        assert err is None and SECRET not in _streamed_text(got) and "clean" in _streamed_text(got)
        assert got[-1].result.output.answer == "clean"
    finally:
        k.close()


@pytest.mark.parametrize("mode, reply", [("json", ANSWER), ("json", f"```json\n{ANSWER}\n```"),
                                         ("json", '{"answer": "cl\\u0065an"}'), ("title", "## answer\nclean")])
def test_a_streamed_structured_answer_that_is_only_its_fields_is_released_as_sent(mode, reply):
    """Control: a reply that is just the judged fields (the format's rendering, or the same JSON object, fenced or
    not, escapes and all) reaches the stream as the model sent it."""
    k = make_kernel()
    k.add_plugin(_SecretGuard(), name="secret-guard")
    try:
        got, err = drain(_streamed_writer(k, [reply], parse_mode=mode).astream(topic="x"))
        assert err is None and _streamed_text(got) == reply
    finally:
        k.close()


@pytest.mark.parametrize("rails, replies", [
    ({"tool_budget": {"word_count": 1}}, [calls(WORD), calls(WORD), "answer"]),
    ({"max_tool_calls_per_reply": 1}, [calls(WORD, WORD, WORD), "answer"]),
    ({"tool_rpm": {"word_count": 1}, "tool_rpm_wait": False}, [calls(WORD), calls(WORD), "answer"])])
def test_a_handoff_does_not_reset_the_per_run_limits_of_the_agent_handing_over(kernel, rails, replies):
    """Attack: ``front``'s own rails (a budget of one call, one call per reply, one call a minute and no waiting)
    hand the run to ``billing`` (no rails), whose model calls ``word_count`` again and again. Defence (held): the
    limits of the agent handing over stay a floor for the target; one call runs."""
    from zagent.plugins.rails.ratelimit import WINDOWS, RateWindows

    async def no_sleep(seconds):
        raise AssertionError("a denied call waited")

    kernel.stash[WINDOWS] = RateWindows(sleep=no_sleep)
    billing = kernel.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["word_count"]})
    billing.llm = kernel.llm("scripted:billing", replies=replies)
    front = kernel.agent({"type": "react", "name": "front", "description": "desk", "rails": rails})
    front.handoffs = [billing]
    front.llm = kernel.llm("scripted:front", replies=[
        calls({"name": "transfer_to_billing", "arguments": {"reason": "billing"}})])
    front.chat("count", use_react=True)
    assert kernel.spy.ran == ["word_count"]
