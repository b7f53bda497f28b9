"""Round nine: hostile provider output reaching agents, events, run logs and checkpoints (session round9,
redteam leaks and untrusted servers). Each test is one attack, with a real HTTP server on 127.0.0.1 where a
provider is involved.

Got through before this round's fixes: the key echoed as a reply's ``model``, ``finish_reason`` or a tool call's
``id`` reached events and the run log (now masked by ``providerkit.metadata``); a workflow node's or a ReAct
run's library error quoting ``OPENAI_API_KEY``'s value reached events and the run log (every event's ``error``
is masked, ``spans.tag``); an ``llm_end`` error cut at 300 characters inside the key (masked first now,
``error_excerpt``). Held: 10,000 tool calls in one reply, a 50 MB arguments string, a secret-named tool argument,
a call marker JSON-escaped in a string, invalid UTF-8 and a 1 MB ``id:``, checkpoint rows, secret request
options in events, an 8 MiB response header.
"""

import json
import sqlite3

import pytest

from zagent import Kernel
from zagent.errors import ProtocolError
from tests.servers.loopback import LoopbackServer, Reply
from tests.servers.openai_server import completion, sse

from .conftest import agent_spec, make_kernel

KEY = "sk-r9-SECRETKEY-0123456789abcdef"
PASSWORD = "pw-r9-hunter2-SECRET-77"


def counter(url, **over):
    """A declared agent offered ``word_count``, on the OpenAI server at ``url``."""
    return agent_spec(tools=["word_count"], llm_config={"model": "openai:gpt-x", "base_url": url, "api_key": KEY,
                                                        "max_retries": 0}, **over)


class Events:
    def __init__(self):
        self.seen = []

    def zagent_event(self, event):
        self.seen.append(json.dumps({"type": event.type, **dict(event.data)}, default=repr))


@pytest.fixture
def kernel():
    k = make_kernel(plugins=("zagent.plugins.openai",))
    yield k
    k.close()


def calls(n, arguments='{"text": "a b"}', name="word_count"):
    return [{"id": f"call_{i}", "name": name, "arguments": arguments} for i in range(n)]


def test_ten_thousand_tool_calls_in_one_reply_run_at_most_the_cap(kernel):
    """Attack: the provider answers one turn with 10,000 native tool calls. Defence: at most
    ``max_tool_calls_per_reply`` (64) run; the rest are refused, and the next request stays bounded (it does not
    carry 10,000 results of a megabyte of text back)."""
    with LoopbackServer(lambda r: completion("done")) as server:
        server.then(completion(tool_calls=calls(10_000)))
        agent = kernel.agent(counter(server.url + "/v1"))
        agent(question="count")
        follow_up = server.requests[1].body
    assert kernel.spy.ran.count("word_count") <= 64
    assert len(follow_up) < 2 * 2**20


def test_a_fifty_megabyte_tool_call_is_refused_by_the_size_limit(kernel):
    """Attack: a tool call whose ``arguments`` string is 50 MB. Defence: the reply is over ``max_response_bytes``
    (32 MiB): ``ResponseTooLarge``, and the tool never runs."""
    from zagent.errors import ResponseTooLarge

    huge = json.dumps({"text": "a " * (25 * 2**20)})
    with LoopbackServer(lambda r: completion(tool_calls=calls(1, huge))) as server:
        agent = kernel.agent(counter(server.url + "/v1"))
        with pytest.raises(ResponseTooLarge):
            agent(question="count")
    assert kernel.spy.ran == []


def test_a_secret_named_tool_argument_is_masked_in_the_run_log_and_events(tmp_path):
    """Attack: the model passes ``password=...`` to a tool (a login tool the app offers). Defence: the run log's
    rows mask the value under the secret-named argument (the tool itself gets it)."""
    db = str(tmp_path / "logs.db")
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.react", "zagent.plugins.runlog"], entry_points=False,
               config={"log": {"path": db}})
    got = []

    def login(user: str, password: str) -> str:
        """Log in."""
        got.append(password)
        return "ok"

    k.add_tool(login)
    args = json.dumps({"user": "alice", "password": PASSWORD})
    try:
        with LoopbackServer(lambda r: completion("done")) as server:
            server.then(completion(tool_calls=calls(1, args, "login")))
            k.agent(agent_spec(tools=["login"], llm_config={"model": "openai:gpt-x", "base_url": server.url,
                                                            "api_key": KEY, "max_retries": 0}))(question="in")
    finally:
        k.close()
    rows = " ".join(str(r) for r in sqlite3.connect(db).execute("SELECT * FROM run_spans").fetchall())
    assert got == [PASSWORD] and "alice" in rows
    assert PASSWORD not in rows and KEY not in rows


def test_a_call_marker_quoted_in_a_json_string_is_no_call(kernel):
    """Attack: a prompt-mode model's answer quotes zagent's call marker JSON-escaped inside a string
    (``"<tool_call>{\\"name\\": ...}</tool_call>"``), as a model echoing a document does. Defence: the escaped
    object is not read as a call; no tool runs. (Fullwidth or entity-encoded markers around a bare JSON call do
    make a call, by design: a bare ``{"name": ..., "arguments": ...}`` is one of the styles read, and only of
    offered tools.)"""
    fake = '"<tool_call>{\\"name\\": \\"word_count\\", \\"arguments\\": {}}</tool_call>"'
    agent = kernel.agent(agent_spec(tools=["word_count"]))
    agent.llm = kernel.llm("scripted:text", replies=[fake, "done"], profile={"native_tools": False})
    agent(question="x")
    assert kernel.spy.ran == []


def test_a_stream_with_invalid_utf8_and_a_huge_id_is_read_safely(kernel):
    """Attack: an event stream whose text has invalid UTF-8 bytes and whose events carry a 1 MB ``id:`` field.
    Defence: the id is ignored; the bad bytes are a ``ProtocolError`` saying so (round fourteen: they became
    U+FFFD, a guess that could reach tool arguments), not a crash or a hang."""
    from tests.servers.openai_server import chunk

    events = [b"id: " + b"9" * 2**20 + b"\n" + chunk({"role": "assistant", "content": "caf"}),
              b"data: " + json.dumps({"object": "chat.completion.chunk", "model": "m", "choices": [
                  {"index": 0, "delta": {"content": "X"}, "finish_reason": None}]}).encode().replace(b"X", b"\xff\xfe")
              + b"\n\n", chunk({}, "stop"), sse(b"[DONE]")]
    with LoopbackServer(lambda r: Reply(chunks=events, content_type="text/event-stream")) as server:
        llm = kernel.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProtocolError, match="not valid UTF-8"):
            list(llm.stream("hi"))


def test_a_react_checkpoint_holds_no_key_of_the_agents_spec(tmp_path):
    """Attack: a ReAct agent from a spec with ``llm_config.api_key`` runs with a checkpoint store; the store's
    rows are read by whoever can read the file. Defence: the rows hold no key (the spec is saved as public
    data, the model's settings not at all)."""
    db = str(tmp_path / "cp.db")
    k = make_kernel(plugins=("zagent.plugins.openai",))
    try:
        with LoopbackServer(lambda r: completion("done")) as server:
            server.then(completion(tool_calls=calls(1)))
            agent = k.agent({"type": "react", "name": "helper", "tools": ["word_count"], "checkpoints": db,
                             "llm_config": {"model": "openai:gpt-x", "base_url": f"{server.url}/v1?key={KEY}",
                                            "api_key": KEY, "max_retries": 0}}, trust=True)
            agent.chat("count", use_react=True)
    finally:
        k.close()
    con = sqlite3.connect(db)
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    dump = " ".join(str(row) for t in tables for row in con.execute(f"SELECT * FROM {t}"))
    assert dump and KEY not in dump


ENV_KEY = "sk-env-r9-SECRET-5566778899"


def test_a_failing_workflow_nodes_secret_is_not_in_the_run_log(tmp_path, monkeypatch):
    """Attack: a workflow node's agent fails with a library error quoting ``OPENAI_API_KEY``'s value and a
    database URL's password. Defence: the run log's rows (error texts of the node and the workflow) mask both,
    as a tool's exception is masked (``describe``)."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed

    from .conftest import NodeAgent, two_node_workflow

    class Leaky(NodeAgent):
        async def aexecute(self, *, inputs, ctx=None):
            raise RuntimeError(f"auth {ENV_KEY} refused by postgres://app:dbpass-r9-SECRET@db/app")

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    db = str(tmp_path / "logs.db")
    k = make_kernel(config={"log": {"path": db}}, plugins=("zagent.plugins.runlog",))
    try:
        ex = WorkFlowExecutor(kernel=k)
        ex.manager.add_agent(NodeAgent("one", False))
        ex.manager.add_agent(Leaky("two", True))
        with pytest.raises(WorkFlowFailed) as err:
            ex.run(two_node_workflow(), {"x": "hi"}, run_id="wf")
    finally:
        k.close()
    rows = " ".join(str(r) for r in sqlite3.connect(db).execute("SELECT * FROM run_spans").fetchall())
    assert "refused" in rows
    assert ENV_KEY not in rows and "dbpass-r9-SECRET" not in rows
    assert ENV_KEY not in str(err.value)


def test_secret_request_options_are_not_in_events_or_the_run_log(tmp_path):
    """Attack: a spec's ``llm_config`` carries a key inside ``extra_body`` (``{"provider": {"api_key": ...}}``)
    and a ``headers`` token; one run is observed by an event spy and the run log. Defence: no event and no row
    holds either value (the request went out with them)."""
    db = str(tmp_path / "logs.db")
    k = make_kernel(config={"log": {"path": db}}, plugins=("zagent.plugins.openai", "zagent.plugins.runlog"))
    spy = Events()
    k.add_plugin(spy, name="spy")
    try:
        with LoopbackServer(lambda r: completion("done")) as server:
            k.agent(agent_spec(llm_config={"model": "openai:gpt-x", "base_url": server.url, "api_key": KEY,
                                           "max_retries": 0, "headers": {"X-Upstream-Token": PASSWORD},
                                           "extra_body": {"provider": {"api_key": ENV_KEY}}}))(question="q")
            sent = server.requests[0]
    finally:
        k.close()
    assert sent.headers["x-upstream-token"] == PASSWORD and ENV_KEY in sent.body.decode()
    rows = " ".join(str(r) for r in sqlite3.connect(db).execute("SELECT * FROM run_spans").fetchall())
    for text in (*spy.seen, rows):
        assert PASSWORD not in text and ENV_KEY not in text and KEY not in text


@pytest.mark.parametrize("field", ["model", "call_id", "finish_reason"])
def test_a_key_echoed_in_a_replys_metadata_is_not_in_events_or_the_run_log(tmp_path, field):
    """Attack: the server (which got the key) puts it in a reply's metadata -- the ``model`` name, a tool call's
    ``id``, the ``finish_reason`` -- which zagent copies into events and the run log (files others may read, a
    tracing backend). Defence: the client's secrets are masked in what a reply's metadata puts there."""
    db = str(tmp_path / "logs.db")
    k = make_kernel(config={"log": {"path": db}}, plugins=("zagent.plugins.openai", "zagent.plugins.runlog"))
    spy = Events()
    k.add_plugin(spy, name="spy")

    def first(request):
        reply = completion(tool_calls=[{"id": KEY if field == "call_id" else "call_1", "name": "word_count",
                                        "arguments": '{"text": "a b"}'}], model=KEY if field == "model" else "m")
        if field == "finish_reason":
            data = json.loads(reply.body)
            data["choices"][0]["finish_reason"] = KEY
            reply = Reply.json(data)
        return reply

    try:
        with LoopbackServer(lambda r: completion("done")) as server:
            server.then(first)
            k.agent(counter(server.url))(question="count")
    finally:
        k.close()
    rows = " ".join(str(r) for r in sqlite3.connect(db).execute("SELECT * FROM run_spans").fetchall())
    assert "word_count" in rows
    for text in (*spy.seen, rows):
        assert KEY not in text


def test_a_reply_header_of_megabytes_is_refused(kernel):
    """Attack: the server answers with one 8 MiB header line (``x-pad: aaaa...``) before any body, which no size
    limit on the body counts. Defence (held): the HTTP module refuses an over-long header: a ``ProviderError``,
    with no part of the header in it."""
    from zagent import ProviderError

    with LoopbackServer(lambda r: Reply.json({"ok": 1}, headers={"x-pad": "a" * (8 * 2**20)})) as server:
        llm = kernel.llm("openai:gpt-x", base_url=server.url, api_key=KEY, max_retries=0)
        with pytest.raises(ProviderError) as err:
            llm.complete("hi")
    assert "a" * 100 not in str(err.value)


def test_a_failing_react_runs_secret_is_not_in_its_events(monkeypatch):
    """Attack: a ReAct run's model fails with a library error (not zagent's) quoting ``OPENAI_API_KEY``'s value.
    Defence: the run's end event (run log, traces, ``zagent chat``) shows it masked."""
    from zagent.plugins.react import ReActLoop

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    k = make_kernel()
    spy = Events()
    k.add_plugin(spy, name="spy")
    try:
        llm = k.llm("scripted:first", replies=[RuntimeError(f"proxy said: bad key {ENV_KEY}")])
        with pytest.raises(RuntimeError):
            ReActLoop(kernel=k, llm=llm, tools=["word_count"]).run("count")
    finally:
        k.close()
    assert any("proxy said" in e for e in spy.seen)
    assert not any(ENV_KEY in e for e in spy.seen)


def test_a_secret_where_an_events_error_text_is_cut_is_not_shown_in_part(monkeypatch):
    """Attack: a model call fails with a library error whose 300-character excerpt (``llm_end``'s ``error``)
    ends inside ``OPENAI_API_KEY``'s value, so masking after the cut no longer sees the whole key. Defence: error
    texts are masked before they are cut (as provider errors are since round eight)."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    k = make_kernel()
    spy = Events()
    k.add_plugin(spy, name="spy")
    try:
        pad = "x" * (300 - len("RuntimeError: ") - 8)
        llm = k.llm("scripted:first", replies=[RuntimeError(pad + ENV_KEY)])
        with pytest.raises(RuntimeError):
            llm.complete("hi")
    finally:
        k.close()
    ends = [e for e in spy.seen if '"llm_end"' in e]
    assert ends and "xxxx" in ends[0] and ENV_KEY[:8] not in ends[0]
