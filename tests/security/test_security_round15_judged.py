"""Round fifteen: what the model reads is judged or masked, also where round fourteen left it open.

A. Input guardrails judged only the new user turn; a caller-given ``history=`` (a stateless chat API forwarding its
client's conversation) could carry an earlier user turn, a text part or a text file with the banned content.
Defence (``guardrails.check_history``): the user turns of a caller-given history are judged before the first model
request, each distinct text once per run; the agent's own memory (judged when each turn was new) is not.

B. A rail's ``Rewrite`` added a credential (``api_token``) the model never saw; the tool's successful result
echoed it to the model. Defence (``_tools.results.injected``): only when a rewrite added secret-named values, the
result's text and value have them masked before the model, events or after-tool rails see them.
"""

import json
from typing import Optional

import pytest

from zagent import Kernel, Message, Part, Rewrite
from zagent.errors import GuardrailTripped

from .conftest import make_kernel

pytestmark = pytest.mark.timeout(60)

BANNED = "BANNED-R15-4412"
TOKEN = "tk-r15-VAULTTOKEN-5566778899"


class _R15InputGuard:
    """A kernel input guardrail: an input holding ``BANNED`` may not reach a model; it remembers what it read."""

    def __init__(self):
        self.seen = []

    def zagent_check_input(self, agent, inputs, ctx):
        self.seen.append(inputs)
        return "the input holds a banned word" if BANNED in json.dumps(inputs, default=str) else None


def _agent(k, replies):
    agent = k.agent({"type": "react", "name": "h", "tools": ["word_count"]})
    agent.llm = k.llm("scripted:h", replies=replies)
    return agent


# -- A: a caller-given history ---------------------------------------------------------------------------------

HIDDEN_TURNS = {
    "text-part": Message(role="user", content="see the note", parts=[Part(type="text", text=f"note: {BANNED}")]),
    "text-file": Message(role="user", content="see the file", parts=[Part(type="file", data=BANNED.encode(),
                                                                          media_type="text/plain", name="a.txt")]),
    "dict-parts": {"role": "user", "content": "see the note", "parts": [{"type": "text", "text": BANNED}]},
}


@pytest.mark.parametrize("how", ["direct", "react", "loop"])
@pytest.mark.parametrize("turn", list(HIDDEN_TURNS), ids=list(HIDDEN_TURNS))
def test_a_banned_history_turns_text_part_or_file_is_judged(turn, how):
    """Attack: the banned word rides an earlier user turn of ``history=`` in a text part, a plain-text file, or a
    dict message's ``parts`` list (its content clean), through a direct chat, a chat routed to the ReAct loop, or
    ``ReActLoop.arun`` itself. Defence: history turns are judged as the new turn is; nothing is sent."""
    k = make_kernel(plugins=[_R15InputGuard()])
    try:
        agent = _agent(k, ["ok"])
        history = [HIDDEN_TURNS[turn], Message(role="assistant", content="noted")]
        with pytest.raises(GuardrailTripped, match="banned"):
            if how == "loop":
                loop = agent.loop()
                loop.llm = agent.llm
                loop.run("and now?", history=history)
            else:
                agent.chat("and now?", history=history, use_react=how == "react")
        assert agent.llm.requests == []
    finally:
        k.close()


def test_a_banned_turn_deep_in_a_long_history_is_judged():
    """Attack: the banned turn is the first of fifty clean ones, hoping only the last few are judged. Defence:
    every user turn is; the chat trips before any request."""
    k = make_kernel(plugins=[_R15InputGuard()])
    try:
        agent = _agent(k, ["ok"])
        history = [Message(role="user", content=f"first: {BANNED}")]
        history += [Message(role=r, content=f"turn {i}") for i in range(50) for r in ("assistant", "user")]
        with pytest.raises(GuardrailTripped):
            agent.chat("and now?", history=history, use_react=False)
        assert agent.llm.requests == []
    finally:
        k.close()


def test_a_caller_history_is_judged_once_per_run_not_per_step():
    """Cost bound: a ReAct run of three steps (two tool calls, then the answer) over a history of three user turns,
    two of them equal, and an assistant turn. Each distinct text is judged once: the turn and three history texts
    (round seventeen judges the caller's assistant turn too), not at every step."""
    guard = _R15InputGuard()
    k = make_kernel(plugins=[guard])
    try:
        call = {"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}
        agent = _agent(k, [call, call, "done"])
        history = [Message(role="user", content="hi"), Message(role="assistant", content="hello"),
                   Message(role="user", content="hi"), Message(role="user", content="count please")]
        assert agent.chat("go", history=history, use_react=True).content == "done"
        assert len(agent.llm.requests) == 3
        assert sorted(guard.seen) == ["count please", "go", "hello", "hi"]
    finally:
        k.close()


def test_the_agents_own_memory_is_not_judged_again():
    """Cost bound: three chats with no ``history=``: the agent's memory of the earlier turns, judged when each was
    new, is read by the model but not judged again (one judgement per chat)."""
    guard = _R15InputGuard()
    k = make_kernel(plugins=[guard])
    try:
        agent = _agent(k, ["one", "two", "three"])
        for text in ("first", "second", "third"):
            agent.chat(text, use_react=False)
        assert guard.seen == ["first", "second", "third"]
        assert "first" in json.dumps([m.content for m in agent.llm.requests[-1].messages])
    finally:
        k.close()


def test_the_agents_memory_is_not_judged_again_by_a_handoffs_next_agent():
    """Cost bound: the second chat of an agent with a handoff hands over to ``billing``; billing's run reads the
    front agent's memory, which is not judged again (the request, as each agent is handed it, is)."""
    guard = _R15InputGuard()
    k = make_kernel(plugins=[guard])
    try:
        billing = k.agent({"type": "react", "name": "billing", "description": "bills", "tools": ["word_count"]})
        billing.llm = k.llm("scripted:billing", replies=["billed"])
        front = _agent(k, ["hello", {"tool_calls": [{"name": "transfer_to_billing", "arguments": {"reason": "pay"}}]}])
        front.handoffs = [billing]
        front.chat("an earlier turn", use_react=True)
        assert front.chat("pay my bill", use_react=True).content == "billed"
        assert guard.seen.count("an earlier turn") == 1
    finally:
        k.close()


def test_a_group_chats_transcript_is_judged_once_per_run():
    """Cost bound: a group chat speaks to each chat agent with the transcript as ``history=``; over four rounds each
    message of it is judged once, not again at every later turn."""
    from zagent.plugins.groupchat import GroupChat

    guard = _R15InputGuard()
    k = make_kernel(plugins=[guard])
    try:
        chat = GroupChat(kernel=k, agents=[{"type": "react", "name": "Ann", "tools": ["word_count"]},
                                           {"type": "react", "name": "Bob", "tools": ["word_count"]}],
                         termination={"max_rounds": 4}, llm=k.llm("scripted:g", replies=["a1", "b1", "a2", "b2"]))
        chat.run("talk")
        said = [s for s in guard.seen if s.startswith(("user:", "Ann:", "Bob:"))]
        assert sorted(said) == ["Ann: a1", "Ann: a2", "Bob: b1", "user: talk"]
    finally:
        k.close()


def test_a_group_chat_speaker_reads_no_banned_message_of_another():
    """Attack: a speaker's model writes the banned word; the next speaker's model would read it as a user turn.
    Defence: the transcript is a history its chat is given: the next turn trips before its model is asked."""
    from zagent.plugins.groupchat import GroupChat

    k = make_kernel(plugins=[_R15InputGuard()])
    try:
        llm = k.llm("scripted:g2", replies=[f"psst {BANNED}", "b1", "a2"])
        chat = GroupChat(kernel=k, agents=[{"type": "react", "name": "Ann", "tools": ["word_count"]},
                                           {"type": "react", "name": "Bob", "tools": ["word_count"]}],
                         termination={"max_rounds": 3}, llm=llm)
        with pytest.raises(Exception, match="banned"):
            chat.run("talk")
        assert len(llm.requests) == 1
    finally:
        k.close()


def test_no_history_work_without_an_input_guardrail(monkeypatch):
    """Cost bound: with no input guardrail registered, a chat and a loop run with a history never call the
    history check (nothing to judge with)."""
    import zagent.plugins.actions.chat as chat_module
    import zagent.plugins.react.loop as loop_module

    called = []

    async def spy(*args, **kwargs):
        called.append(args)

    monkeypatch.setattr(chat_module, "check_history", spy)
    monkeypatch.setattr(loop_module, "check_history", spy)
    k = make_kernel()
    try:
        agent = _agent(k, ["ok", "ok"])
        history = [Message(role="user", content=f"remember: {BANNED}")]
        assert agent.chat("and now?", history=history, use_react=True).content == "ok"
        loop = agent.loop()
        loop.run("again", history=history)
        assert called == []
    finally:
        k.close()


# -- B: a result echoing a credential a rail injected -------------------------------------------------------------


class _Vault:
    """A before-tool-call rail adding ``extra`` to every call (a vault's credential, say)."""

    def __init__(self, extra):
        self.extra = extra

    def zagent_before_tool_call(self, call, ctx):
        return Rewrite({**call.arguments, **self.extra})


def _run(extra, tool, arguments):
    k = Kernel([_Vault(extra)], entry_points=False)
    k.add_tool(tool)
    try:
        return k.run_tool({"name": tool.__name__, "arguments": arguments})
    finally:
        k.close()


def _echo_json(url: str, api_token: str = "", auth: Optional[dict] = None) -> dict:
    """Return the request sent, as structured data."""
    token = api_token or (auth or {}).get("token", "")
    return {"sent": {"url": url, "headers": {"Authorization": f"Bearer {token}"}}, "status": 200}


@pytest.mark.parametrize("extra", [{"api_token": TOKEN}, {"auth": {"token": TOKEN}}], ids=["flat", "nested"])
def test_a_credential_a_rail_injected_is_masked_in_structured_content(extra):
    """Attack: the rail adds the credential (flat or nested under ``auth.token``); the tool returns it inside a
    dict (the model reads its JSON). Defence: masked in the content and in the value (the program's copy)."""
    result = _run(extra, _echo_json, {"url": "https://api.example/x"})
    assert result.state == "success" and '"status":200' in result.content.replace(" ", "")
    assert TOKEN not in result.content and TOKEN not in json.dumps(result.value)
    assert result.value["sent"]["url"] == "https://api.example/x"


def test_a_credential_a_rail_injected_is_masked_when_echoed_base64():
    """Attack: the tool echoes the credential base64-encoded (a debugging proxy's Basic header). Defence: the
    encoded forms ``Masker`` knows are masked too."""
    import base64

    def echo(url: str, api_token: str = "") -> str:
        """Echo a Basic header."""
        return "Authorization: Basic " + base64.b64encode(f"user:{api_token}".encode()).decode()

    result = _run({"api_token": TOKEN}, echo, {"url": "u"})
    assert base64.b64encode(f"user:{TOKEN}".encode()).decode()[8:30] not in result.content


def test_a_rewrite_adding_no_secret_leaves_the_result_as_it_is():
    """Control: a rail's rewrite adds a public argument (``region``), and the model's own ``api_token`` (one it
    was given) stays; the result, which echoes both, is the tool's, unmasked."""
    def echo(url: str, api_token: str = "", region: str = "") -> str:
        """Echo the call."""
        return f"sent {url} in {region} with {api_token}"

    result = _run({"region": "eu-west"}, echo, {"url": "https://api.example/x", "api_token": TOKEN})
    assert result.content == f"sent https://api.example/x in eu-west with {TOKEN}"


def test_an_ordinary_call_does_no_masking_work(monkeypatch):
    """Cost bound: a call no rail rewrote (the benchmarked path) never looks for injected secrets."""
    import zagent._tools.run as run_module

    looked = []
    monkeypatch.setattr(run_module, "injected", lambda *a: looked.append(a))
    k = Kernel(entry_points=False)
    k.add_tool(_echo_json)
    try:
        result = k.run_tool({"name": "_echo_json", "arguments": {"url": "u", "api_token": TOKEN}})
    finally:
        k.close()
    assert result.state == "success" and looked == []


def test_a_short_injected_value_is_not_masked():
    """Control: a value under ``Masker``'s minimum length (``api_token="abc"``) would mangle the result (every
    ``abc``); it is left as it is."""
    def echo(url: str, api_token: str = "") -> str:
        """Echo."""
        return f"abc {url} {api_token}"

    assert _run({"api_token": "abc"}, echo, {"url": "u"}).content == "abc u abc"


def test_the_model_events_and_after_rails_never_see_the_injected_credential():
    """Attack: through a ReAct run, the echoed credential would reach the next model request, the ``tool_end``
    event and an after-tool rail. Defence: the result is masked before any of them."""
    from zagent.plugins.react import ReActLoop

    seen = []

    class Watch:
        def zagent_event(self, event):
            seen.append(repr(dict(event.data)))

        def zagent_after_tool_call(self, call, result, ctx):
            seen.append(result.content)
            return result

    def post(url: str, api_token: str = "") -> str:
        """POST to a URL."""
        return f"200 OK; sent POST {url} with Authorization: Bearer {api_token}"

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
                _Vault({"api_token": TOKEN}), Watch()], entry_points=False)
    k.add_tool(post)
    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "post", "arguments": {"url": "https://a.example"}}]},
                                       "done"])
    try:
        assert ReActLoop(kernel=k, llm=llm, tools=["post"]).run("deploy").content == "done"
    finally:
        k.close()
    later = json.dumps([m.content for m in llm.requests[-1].messages])
    assert "200 OK" in later and TOKEN not in later and TOKEN not in " ".join(seen)
