"""Round eleven: rails, guardrails, budgets and streaming (the app's policy is a floor nothing lowers).

Tried (36 attacks; got through on the code before the fixes: marked *, 12, all fixed):
- streaming: an answer's pieces reaching the stream before the output guardrails judged it, for a declared agent*
  (real OpenAI-compatible loopback stream), a ReAct agent under a kernel guardrail*, ``astream_chat`` direct* and
  ReAct mode*, a ReAct loop's ``on_text``*, a workflow node*, a group-chat member*, an agent called as a tool inside
  a guarded agent*, a reply streamed in ``json`` mode (its ``partial`` objects)*. Also checked: a passing guardrail
  still streams every piece before the result (and the whole partial object), and without one the stream is live;
- guardrails on a repaired answer (``ModelRetry``), a fallback model's answer, a structured output;
- ``deny_tools`` against near-miss names from the model (case, spaces, zero-width, look-alikes, full-width,
  ``functions.``, a newline), an agent offered as a tool reaching a denied tool, a spec agent's rails removing a
  kernel deny, a handoff target of an agent that denies the tool*;
- budgets: parallel calls in one reply, an agent called as a tool, group-chat members, a provider reporting
  negative or huge usage, a depth and fan-out bomb of agents calling each other as tools (request limit, depth
  limit), rate windows of two kernels, a caller's ``tool_rpm`` spread over the agents it calls as tools*;
- three layers of rails (kernel, caller, callee): the kernel's approval rule* (read as no rule: the call ran
  unasked), three ``tool_budget``s and three allow-lists (both failed closed, wrongly: a ``TypeError``, a block).
"""

import json

import pytest

from zagent import Deny
from zagent.errors import GuardrailTripped, NoAnswerError, ProtocolError, UsageLimitExceeded

from tests.security.conftest import drain, make_kernel
from tests.servers import openai_server

SECRET = "SECRET-TOKEN-4242"


class SecretGuard:
    """A kernel output guardrail (a plugin): an answer holding ``SECRET`` may not leave."""

    def __init__(self):
        self.seen = []

    def zagent_check_output(self, agent, output, ctx):
        self.seen.append(output)
        return "the answer holds a secret" if SECRET in json.dumps(output, default=str) else None


def own_guard(value, ctx):
    """An agent's own output guardrail."""
    return Deny("the answer holds a secret") if SECRET in json.dumps(value, default=str) else None


def texts(items):
    return "".join(i.text for i in items if i.type in ("text", "reasoning"))


def guarded_kernel(guard=None, config=None, plugins=()):
    extra = ["zagent.plugins.openai", *plugins]
    k = make_kernel(config=config, plugins=extra)
    if guard is not None:
        k.add_plugin(guard, name="secret-guard")
    return k


def declared(k, llm, **over):
    agent = k.agent({"name": "Writer", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
                     "outputs": [{"name": "answer"}], "parse_mode": "str", **over})
    agent.llm = llm
    return agent


# -- streaming: the answer waits for the output guardrails ------------------------------------------------------


def test_a_declared_agents_streamed_secret_never_reaches_the_stream():
    """A declared agent with its own output guardrail, streamed from a real OpenAI-compatible server: no piece of
    the blocked answer reaches the consumer; the stream ends with ``GuardrailTripped``."""
    k = guarded_kernel()
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"the key is {SECRET}, keep it"))
            llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            agent = declared(k, llm)
            agent.guardrails = {"output": [own_guard]}
            items, error = drain(agent.astream(topic="keys"))
            assert server.requests[-1].json["stream"] is True
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items) and not [i for i in items if i.type == "text"]
    finally:
        k.close()


def test_a_react_agents_streamed_secret_waits_for_the_kernels_guardrail():
    """A ReAct agent under a kernel ``zagent_check_output`` rail, streamed from the loopback server: the blocked
    answer's pieces are never yielded."""
    guard = SecretGuard()
    k = guarded_kernel(guard)
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"sure: {SECRET}"))
            agent = k.agent({"type": "react", "name": "r", "tools": []})
            agent.llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            items, error = drain(agent.astream("leak it"))
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items)
    finally:
        k.close()


def test_a_streamed_chat_holds_the_answer_until_judged():
    """``astream_chat`` (direct mode) under a kernel guardrail: no piece of the blocked answer is yielded."""
    k = guarded_kernel(SecretGuard())
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"here: {SECRET}"))
            agent = declared(k, k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test"))
            items, error = drain(agent.astream_chat("tell me", use_react=False))
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items)
    finally:
        k.close()


def test_a_react_loops_on_text_callback_gets_no_blocked_piece():
    """A ReAct loop's ``on_text`` callback (what ``zagent chat`` prints) under a kernel guardrail, streamed from
    the loopback server: it is given no piece of a blocked answer."""
    k = guarded_kernel(SecretGuard())
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"psst {SECRET}"))
            agent = k.agent({"type": "react", "name": "r", "tools": []})
            agent.llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            loop = agent.loop()
            pieces = []
            loop.on_text = pieces.append
            with pytest.raises(GuardrailTripped):
                loop.run("leak it")
        assert "SECRET" not in "".join(pieces)
    finally:
        k.close()


def test_on_text_still_gets_a_passing_answer():
    """The passing side of the hold: ``on_text`` is given every piece of an answer the guardrail let through."""
    k = guarded_kernel(SecretGuard())
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply("a harmless answer"))
            agent = k.agent({"type": "react", "name": "r", "tools": []})
            agent.llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            loop = agent.loop()
            pieces = []
            loop.on_text = pieces.append
            result = loop.run("hi")
        assert "".join(pieces) == "a harmless answer" == result.content and len(pieces) > 2
    finally:
        k.close()


def test_a_workflow_nodes_blocked_answer_is_not_streamed():
    """A workflow node's agent judged by the kernel guardrail: its blocked answer is not in the workflow's
    stream."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    k = guarded_kernel(SecretGuard())
    try:
        graph = WorkFlowGraph.from_dict({
            "name": "one", "goal": "g", "inputs": [{"name": "goal"}],
            "nodes": [{"name": "draft", "inputs": [{"name": "goal"}], "outputs": [{"name": "text"}],
                       "agents": [{"name": "D", "prompt": "{goal}", "inputs": [{"name": "goal"}],
                                   "outputs": [{"name": "text"}], "parse_mode": "str"}]}],
            "edges": []})
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"draft with {SECRET}"))
            llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test", max_retries=0)
            items, error = drain(WorkFlowExecutor(kernel=k, llm=llm).astream(graph, {"goal": "g"}))
        assert error is not None
        assert "SECRET" not in texts(items)
    finally:
        k.close()


def test_a_group_chat_members_blocked_turn_is_not_streamed():
    """A group-chat member whose turn the kernel guardrail blocks: the turn's text is not in the chat's stream."""
    from zagent.plugins.groupchat import GroupChat

    k = guarded_kernel(SecretGuard())
    try:
        member = {"prompt": "{task} {transcript}", "inputs": [{"name": "task"}, {"name": "transcript"}],
                  "outputs": [{"name": "reply"}], "parse_mode": "str"}
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(f"I say {SECRET}"))
            llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            chat = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", **member}, {"name": "B", **member}],
                                        "termination": {"max_rounds": 2}}, k, llm=llm)
            items, error = drain(chat.astream("greet"))
        assert error is not None
        assert "SECRET" not in texts(items)
    finally:
        k.close()


def test_an_agent_called_as_a_tool_streams_nothing_its_guarded_caller_blocks():
    """An inner agent (no guardrail of its own) called as a tool by a ReAct agent whose own output guardrail
    blocks the answer: the inner agent's streamed text is held with its caller's."""
    k = guarded_kernel()
    try:
        inner = declared(k, k.llm("scripted:inner", replies=[f"found {SECRET}"]), name="Finder")
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "boss", "tools": ["Finder"]})
        outer.guardrails = {"output": [own_guard]}
        outer.llm = k.llm("scripted:outer", replies=[
            {"content": None, "tool_calls": [{"name": "Finder", "arguments": {"topic": "keys"}}]},
            f"the finder said {SECRET}"])
        items, error = drain(outer.astream("find the key"))
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items)
    finally:
        k.close()


def test_a_passing_guardrail_still_streams_every_piece_and_the_whole_partial():
    """The right behaviour when the guardrail passes: every piece reaches the stream, in order, before the
    result, and ``json`` mode's last partial object is the whole one (real loopback stream)."""
    guard = SecretGuard()
    k = guarded_kernel(guard)
    try:
        reply = '{"title": "Tides of the north", "answer": "The moon pulls the sea"}'
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(reply))
            llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            agent = declared(k, llm, parse_mode="json", outputs=[{"name": "title"}, {"name": "answer"}])
            items, error = drain(agent.astream(topic="tides"))
        assert error is None
        pieces = [i for i in items if i.type == "text"]
        assert len(pieces) > 2 and "".join(p.text for p in pieces) == reply
        kinds = [i.type for i in items]
        assert kinds[-1] == "result" and max(i for i, t in enumerate(kinds) if t == "text") < len(kinds) - 1
        partials = [i.partial for i in items if i.type == "partial"]
        assert partials and partials[-1] == {"title": "Tides of the north", "answer": "The moon pulls the sea"}
        assert guard.seen  # it was judged
    finally:
        k.close()


def test_a_streamed_json_answer_with_a_secret_gives_no_partial():
    """``json`` mode: a blocked structured answer gives neither text nor a ``partial`` object holding it."""
    k = guarded_kernel(SecretGuard())
    try:
        reply = json.dumps({"title": "keys", "answer": SECRET})
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.stream_reply(reply))
            llm = k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test")
            agent = declared(k, llm, parse_mode="json", outputs=[{"name": "title"}, {"name": "answer"}])
            items, error = drain(agent.astream(topic="keys"))
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items)
        assert not any(SECRET in json.dumps(i.partial) for i in items if i.type == "partial")
    finally:
        k.close()


def test_without_a_guardrail_the_stream_is_live():
    """No output guardrail: pieces are not held (the text comes before the run's ``llm_end``)."""
    k = guarded_kernel()
    try:
        items, error = drain(declared(k, k.llm("scripted:live", replies=["three little words"])).astream(topic="x"))
        assert error is None
        kinds = [i.event.type if i.type == "event" else i.type for i in items]
        assert kinds.index("text") < kinds.index("llm_end")
    finally:
        k.close()


# -- guardrails are not skipped ---------------------------------------------------------------------------------


def test_a_repaired_answer_is_judged_by_the_guardrail():
    """An output validator's ``ModelRetry`` makes the model answer again: the repaired answer is what the
    guardrail judges (a secret in it is blocked)."""
    from zagent.plugins.actions.validators import ModelRetry

    def no_short(value, ctx=None):
        if len(value.answer) < 10:
            raise ModelRetry("say more")

    k = guarded_kernel(SecretGuard())
    try:
        agent = declared(k, k.llm("scripted:retry", replies=["short", f"longer answer {SECRET}"]))
        agent.output_validators = [no_short]
        with pytest.raises(GuardrailTripped):
            agent(topic="x")
    finally:
        k.close()


def test_a_fallback_models_answer_is_judged():
    """The first model of a ``fallback:`` chain is down (503 from the loopback server); the second one's answer
    still goes through the output guardrail."""
    from tests.servers.loopback import Reply

    k = guarded_kernel(SecretGuard(), plugins=["zagent.plugins.fallback"])
    try:
        with openai_server.OpenAIServer() as down, openai_server.OpenAIServer() as up:
            down.then(*[Reply.json({"error": {"message": "overloaded"}}, 503)] * 4)
            up.then(openai_server.completion(f"backup says {SECRET}"))
            llm = k.llm("fallback:", models=[
                {"model": "openai:gpt-test", "base_url": down.url, "api_key": "sk-test", "max_retries": 0},
                {"model": "openai:gpt-test", "base_url": up.url, "api_key": "sk-test", "max_retries": 0}])
            agent = declared(k, llm)
            with pytest.raises(GuardrailTripped):
                agent(topic="x")
            assert up.requests
    finally:
        k.close()


def test_a_structured_outputs_nested_field_is_judged():
    """A validated structured output (json mode, several fields): the guardrail sees the whole object."""
    guard = SecretGuard()
    k = guarded_kernel(guard)
    try:
        agent = declared(k, k.llm("scripted:json", replies=[json.dumps({"title": "t", "answer": SECRET})]),
                         parse_mode="json", outputs=[{"name": "title"}, {"name": "answer"}])
        with pytest.raises(GuardrailTripped):
            agent(topic="x")
        assert guard.seen and SECRET in str(guard.seen[-1])
    finally:
        k.close()


# -- deny_tools: no spelling of a denied tool runs ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["STEAL", "Steal", " steal", "steal ", "steal\u200b", "\u0455teal", "ｓｔｅａｌ",
                                  "functions.steal", "steal\n"])
def test_a_near_miss_name_of_a_denied_tool_never_runs_it(name):
    """The model names the denied tool ``steal`` with a near miss (case, spaces, zero-width, Cyrillic,
    full-width, a namespace prefix, a newline): ``steal`` never runs."""
    k = make_kernel(config={"rails": {"deny_tools": ["steal"]}})
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": ["word_count", "steal"]})
        agent.llm = k.llm("scripted:deny", replies=[
            {"content": None, "tool_calls": [{"name": name, "arguments": {"path": "/etc/shadow"}}]}, "done"])
        agent.loop().run("go")
        assert "steal" not in k.spy.ran
    finally:
        k.close()


def test_an_agent_offered_as_a_tool_cannot_reach_a_denied_tool():
    """A spec agent whose tools name the kernel-denied ``steal``, offered to another agent as a tool: the inner
    call is denied too."""
    k = make_kernel(config={"rails": {"deny_tools": ["steal"]}})
    try:
        inner = k.agent({"type": "react", "name": "Thief", "tools": ["steal"]})
        inner.llm = k.llm("scripted:thief", replies=[
            {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/etc/shadow"}}]}, "done"])
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "boss", "tools": ["Thief"]})
        outer.llm = k.llm("scripted:boss", replies=[
            {"content": None, "tool_calls": [{"name": "Thief", "arguments": {"task": "get it"}}]}, "ok"])
        outer.loop().run("go")
        assert "steal" not in k.spy.ran
    finally:
        k.close()


def test_a_spec_agents_rails_cannot_lift_a_kernel_deny():
    """An untrusted spec's ``rails`` with ``deny_tools: []`` and ``allow_tools: ["*"]`` does not lift the
    kernel's deny."""
    k = make_kernel(config={"rails": {"deny_tools": ["steal"]}})
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": ["steal"],
                         "rails": {"deny_tools": [], "allow_tools": ["*"]}})
        agent.llm = k.llm("scripted:lift", replies=[
            {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/x"}}]}, "done"])
        agent.loop().run("go")
        assert "steal" not in k.spy.ran
    finally:
        k.close()


# -- budgets ----------------------------------------------------------------------------------------------------------


def test_parallel_calls_in_one_reply_do_not_pass_the_tool_budget():
    """Ten calls of ``word_count`` in one reply under ``tool_budget: {word_count: 2}``: two run."""
    k = make_kernel(config={"rails": {"tool_budget": {"word_count": 2}}})
    try:
        agent = k.agent({"type": "react", "name": "r", "tools": ["word_count"], "max_tool_call_concurrency": 10})
        agent.llm = k.llm("scripted:par", replies=[
            {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}] * 10}, "done"])
        agent.loop().run("go")
        assert k.spy.ran.count("word_count") == 2
    finally:
        k.close()


def test_an_agent_called_as_a_tool_shares_its_callers_usage_limits():
    """``usage_limits.requests: 3`` of the kernel: an agent called as a tool counts its model requests in its
    caller's run, so the run stops at the limit."""
    k = make_kernel(config={"rails": {"usage_limits": {"requests": 3}}})
    try:
        inner = k.agent({"type": "react", "name": "Helper", "tools": ["word_count"]})
        inner.llm = k.llm("scripted:helper", replies=[
            {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a"}}]}] * 10)
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "boss", "tools": ["Helper"]})
        outer.llm = k.llm("scripted:boss2", replies=[
            {"content": None, "tool_calls": [{"name": "Helper", "arguments": {"task": "t"}}]}] * 5)
        with pytest.raises(UsageLimitExceeded):
            outer.loop().run("go")
    finally:
        k.close()


def test_group_chat_members_share_the_tool_budget():
    """Two members of a group chat each calling ``word_count``: the kernel's ``tool_budget`` of 1 counts both."""
    from zagent.plugins.groupchat import GroupChat

    k = make_kernel(config={"rails": {"tool_budget": {"word_count": 1}}})
    try:
        call = {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
        member = {"type": "react", "tools": ["word_count"]}
        chat = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", **member}, {"name": "B", **member}],
                                    "termination": {"max_rounds": 2}}, k,
                                   llm=k.llm("scripted:gc", replies=[call, "a done", call, "b done"]))
        chat.run("count")
        assert k.spy.ran.count("word_count") == 1
    finally:
        k.close()


@pytest.mark.parametrize("usage", [{"prompt_tokens": -5000, "completion_tokens": 1, "total_tokens": -4999},
                                   {"prompt_tokens": 10**15, "completion_tokens": 1, "total_tokens": 10**15 + 1}])
def test_a_provider_reporting_impossible_usage_is_refused(usage):
    """A loopback server reporting negative or huge token usage: the reply is a ``ProtocolError``, never summed
    into the run's counters (a negative count would give budget back)."""
    k = make_kernel(config={"rails": {"usage_limits": {"total_tokens": 100}}}, plugins=["zagent.plugins.openai"])
    try:
        with openai_server.OpenAIServer() as server:
            server.then(openai_server.completion("fine", usage=usage))
            agent = declared(k, k.llm("openai:gpt-test", base_url=server.url, api_key="sk-test", max_retries=0))
            with pytest.raises(ProtocolError):
                agent(topic="x")
    finally:
        k.close()


def test_agents_calling_each_other_as_tools_stay_under_the_run_s_request_limit():
    """Two agents offered to each other as tools, each always calling the other (a depth and fan-out bomb:
    ``max_iterations`` steps at each of the levels): the kernel's ``usage_limits.requests`` counts every level's
    model calls in the one run, so it stops there."""
    k = make_kernel(config={"rails": {"usage_limits": {"requests": 40}}})
    try:
        ping = k.agent({"type": "react", "name": "Ping", "tools": [], "max_iterations": 6})
        pong = k.agent({"type": "react", "name": "Pong", "tools": [], "max_iterations": 6})
        ping.llm = k.llm("scripted:ping", replies=[
            {"content": None, "tool_calls": [{"name": "Pong", "arguments": {"task": "go"}}]}] * 2000)
        pong.llm = k.llm("scripted:pong", replies=[
            {"content": None, "tool_calls": [{"name": "Ping", "arguments": {"task": "go"}}]}] * 2000)
        ping.as_tool()
        pong.as_tool()
        ping.tools = ["Pong"]
        pong.tools = ["Ping"]
        with pytest.raises(UsageLimitExceeded):
            ping.loop().run("start")
        assert len(ping.llm.requests) + len(pong.llm.requests) <= 41
    finally:
        k.close()


def test_agents_calling_each_other_as_tools_stop_at_the_depth_limit():
    """Without a request limit, the same recursion is cut at the agent depth limit (an error the model reads),
    never at Python's recursion limit."""
    from zagent.plugins.actions.astool import MAX_AGENT_DEPTH

    k = make_kernel()
    try:
        ping = k.agent({"type": "react", "name": "Ping", "tools": [], "max_iterations": 2})
        pong = k.agent({"type": "react", "name": "Pong", "tools": [], "max_iterations": 2})
        call = {"content": None, "tool_calls": [{"name": "Pong", "arguments": {"task": "go"}}]}
        ping.llm = k.llm("scripted:ping2", replies=[call] * 400)
        pong.llm = k.llm("scripted:pong2", replies=[
            {"content": None, "tool_calls": [{"name": "Ping", "arguments": {"task": "go"}}]}] * 400)
        ping.as_tool()
        pong.as_tool()
        ping.tools = ["Pong"]
        pong.tools = ["Ping"]
        try:
            ping.loop().run("start")
        except NoAnswerError:  # every reply is a call: no level ever answers
            pass
        depth_errors = [m for m in ping.llm.requests + pong.llm.requests
                        if f"at most {MAX_AGENT_DEPTH} deep" in json.dumps([x.content for x in m.messages])]
        assert depth_errors
    finally:
        k.close()


def test_rate_windows_are_not_shared_between_kernels():
    """Two kernels in one process, each with ``tool_rpm: {word_count: 1}`` and ``tool_rpm_wait: false``: each
    kernel's window is its own (one call each runs), and a second call on one is denied."""
    rails = {"tool_rpm": {"word_count": 1}, "tool_rpm_wait": False}
    k1, k2 = make_kernel(config={"rails": rails}), make_kernel(config={"rails": rails})
    try:
        from zagent import ToolCall

        r1 = k1.run_tool(ToolCall(id="a", name="word_count", arguments={"text": "a"}))
        r2 = k2.run_tool(ToolCall(id="b", name="word_count", arguments={"text": "a"}))
        r3 = k1.run_tool(ToolCall(id="c", name="word_count", arguments={"text": "a"}))
        assert (r1.state, r2.state, r3.state) == ("success", "success", "blocked")
    finally:
        k1.close()
        k2.close()


# -- the layers of rails: the kernel's, a caller's, the callee's ------------------------------------------------------


def _nested(k, inner_rails, outer_rails, call):
    """Agent ``boss`` (``outer_rails``) calls agent ``Inner`` (``inner_rails``) as a tool; Inner makes ``call``."""
    inner = k.agent({"type": "react", "name": "Inner", "tools": [call["name"]], "rails": inner_rails})
    inner.llm = k.llm("scripted:inner3", replies=[{"content": None, "tool_calls": [call]}, "inner done"])
    inner.as_tool()
    outer = k.agent({"type": "react", "name": "boss", "tools": ["Inner"], "rails": outer_rails})
    outer.llm = k.llm("scripted:boss3", replies=[
        {"content": None, "tool_calls": [{"name": "Inner", "arguments": {"task": "t"}}]}, "ok"])
    outer.loop().run("go")
    return inner


def test_a_kernel_approval_rule_holds_under_a_caller_and_a_callee_with_their_own_rules():
    """The kernel asks a person before ``word_count`` (its approver declines); a spec agent with approval rules
    of its own calls another such agent as a tool, which calls ``word_count``: the kernel's rule still asks (the
    three layers merged into a nested one, read as no rule, and the call ran unasked)."""
    asked = []

    def approver(call, ctx=None):
        asked.append(call.name)
        return False

    k = make_kernel(config={"rails": {"approval": {"tools": ["word_count"]}, "approver": approver}})
    try:
        _nested(k, {"approval": {"tools": ["zzz"]}}, {"approval": {"tools": ["yyy"]}},
                {"name": "word_count", "arguments": {"text": "a b"}})
        assert asked == ["word_count"] and "word_count" not in k.spy.ran
    finally:
        k.close()


def test_three_tool_budgets_apply_as_the_lowest():
    """Kernel, caller and callee each set a ``tool_budget`` for ``word_count`` (5, 1, 10): the callee's call runs
    under the lowest (it failed with a ``TypeError`` on the nested layers)."""
    k = make_kernel(config={"rails": {"tool_budget": {"word_count": 5}}})
    try:
        inner = _nested(k, {"tool_budget": {"word_count": 10}}, {"tool_budget": {"word_count": 1}},
                        {"name": "word_count", "arguments": {"text": "a b"}})
        assert k.spy.ran == ["word_count"], inner.llm.requests[-1].messages[-1].content
    finally:
        k.close()


def test_three_allow_lists_all_apply():
    """Kernel, caller and callee allow-lists all naming ``word_count``: the callee may call it (the nested layers
    read as no match and blocked it), and one list leaving it out still blocks it."""
    k = make_kernel(config={"rails": {"allow_tools": ["word_count", "Inner"]}})
    try:
        _nested(k, {"allow_tools": ["word_count"]}, {"allow_tools": ["Inner", "word_count"]},
                {"name": "word_count", "arguments": {"text": "a b"}})
        assert k.spy.ran == ["word_count"]
    finally:
        k.close()
    k = make_kernel(config={"rails": {"allow_tools": ["word_count", "Inner"]}})
    try:
        _nested(k, {"allow_tools": ["word_count"]}, {"allow_tools": ["Inner"]},
                {"name": "word_count", "arguments": {"text": "a b"}})
        assert k.spy.ran == []
    finally:
        k.close()


def test_a_handoff_target_keeps_the_denies_of_the_agent_handing_over():
    """Agent ``A`` denies ``steal`` and may hand over to ``B`` (whose tools name ``steal``); the model hands over
    and ``B`` calls ``steal``: it is denied, as for an agent ``A`` calls as a tool."""
    k = make_kernel()
    try:
        b = k.agent({"type": "react", "name": "B", "tools": ["steal"]})
        b.llm = k.llm("scripted:b", replies=[
            {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/x"}}]}, "b done"])
        a = k.agent({"type": "react", "name": "A", "tools": ["word_count"], "rails": {"deny_tools": ["steal"]}})
        a.handoffs = [b]
        a.llm = k.llm("scripted:a", replies=[
            {"content": None, "tool_calls": [{"name": "transfer_to_B", "arguments": {"reason": "r"}}]}, "a done"])
        result = a.chat("go", use_react=True)
        assert result.metadata.get("answered_by") == "B" and "steal" not in k.spy.ran
    finally:
        k.close()


def test_a_callers_tool_rpm_is_not_multiplied_by_the_agents_it_calls():
    """Agent ``boss`` may call ``word_count`` once a minute (``tool_rpm_wait: false``); in one reply it calls it
    itself and through two agents it calls as tools: one call runs (each agent counted the caller's limit in a
    window of its own name, so three ran)."""
    k = make_kernel()
    try:
        call = {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
        for name in ("I1", "I2"):
            helper = k.agent({"type": "react", "name": name, "tools": ["word_count"]})
            helper.llm = k.llm(f"scripted:{name}", replies=[call, "done"])
            helper.as_tool()
        boss = k.agent({"type": "react", "name": "boss", "tools": ["I1", "I2", "word_count"],
                        "rails": {"tool_rpm": {"word_count": 1}, "tool_rpm_wait": False}})
        boss.llm = k.llm("scripted:boss4", replies=[{"content": None, "tool_calls": [
            {"name": "word_count", "arguments": {"text": "x"}}, {"name": "I1", "arguments": {"task": "t"}},
            {"name": "I2", "arguments": {"task": "t"}}]}, "ok"])
        boss.loop().run("go")
        assert k.spy.ran == ["word_count"]
    finally:
        k.close()


def test_a_spec_cannot_name_the_callers_whose_rules_it_carries():
    """``outer_agents`` (whose ``outer_rails`` they are) is set by the caller only: an agent's own config naming
    it is dropped when it is called as a tool."""
    from zagent.plugins.actions.astool import outer_config

    k = make_kernel()
    try:
        caller = k.context(agent="boss", agent_config={"rails": {"tool_rpm": {"word_count": 1}}})
        config = outer_config({"outer_agents": ["fresh"], "outer_rails": []}, caller)
        assert config["outer_agents"] == ["boss"] and config["outer_rails"] == [caller.agent_config["rails"]]
    finally:
        k.close()


def test_a_declared_agents_react_chat_stream_waits_for_its_guardrail():
    """``astream_chat(use_react=True)`` of a declared agent with tools and its own output guardrail: the ReAct
    loop's pieces are held in the chat's hold, and nothing of the blocked answer is yielded."""
    k = guarded_kernel()
    try:
        agent = k.agent({"name": "W", "prompt": "Write about {topic}", "inputs": [{"name": "topic"}],
                         "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["word_count"]})
        agent.guardrails = {"output": [own_guard]}
        agent.llm = k.llm("scripted:w", replies=[
            {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}, f"final {SECRET}"])
        items, error = drain(agent.astream_chat("hi", use_react=True))
        assert isinstance(error, GuardrailTripped), error
        assert "SECRET" not in texts(items)
    finally:
        k.close()
