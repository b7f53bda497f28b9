"""Round sixteen, secrets and leaks: outputs added since the earlier leak rounds (one attack per test).

Attacks tried (31 cases in 17 tests, against the code of the round's start; 29 got through, all fixed; 2 held):

- a server's ``refusal`` of a structured-output request quoting the ``Authorization`` it got (OpenAI chat whole
  and streamed in three SSE pieces, OpenAI Responses base64-encoded): in ``zagent.Refusal``'s message, ``refusal``
  and ``completion``, ``llm_end`` events, a batch results file, and (through a tool asking its own model) the
  request to the calling agent's server: GOT THROUGH -- fixed (``metadata.masked_reply`` masks ``refusal``)
- a structured agent's ``ParseError`` quoting the reply (a field of the wrong type, a key given twice; from the
  second model of a ``fallback:`` chain): GOT THROUGH -- fixed (masked with the secrets of every model inside the
  agent's model where it leaves the agent)
- ``Content-Type: <key>`` on a stream, ``Content-Encoding: br, <key>`` (whole, streamed, ``GET /models``), an
  Anthropic tool block opened twice named with the key: GOT THROUGH (Ollama's content type held: it is not
  checked) -- fixed (``masking.masked_error`` on every provider error leaving a model, a stream or a listing)
- an approval question (workflow node; stored in the checkpoint, events and the run log) and the console prompt
  showing a tool's secret default, a rail's injected credential, a password the model sent: GOT THROUGH -- fixed
  (``approvals.shown_secrets``: secret-named values as ``***`` by key)
- a failing guardrail (the agent's own, a kernel hook) quoting ``OPENAI_API_KEY``: GOT THROUGH -- fixed
- ``made_by`` moving with the API key and secret headers: held
"""

import base64
import json

import pytest

from zagent import Kernel, ZagentError

pytestmark = pytest.mark.timeout(60)

KEY = "sk-r16-REFUSALKEY-31415926535"
INNER = "sk-r16-INNERKEY-27182818284"
TOKEN = "vt-r16-VAULTTOKEN-1618033988"


def leaked(text, *secrets):
    return [s for s in (secrets or (KEY,)) if s in text or s[:16] in text]


def _auth(request):
    return request.headers.get("authorization") or request.headers.get("x-api-key") or ""


def _chat_refusal(text):
    from tests.servers.loopback import Reply

    return Reply.json({"id": "r1", "object": "chat.completion", "model": "gpt-x", "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None, "refusal": text}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _sse(*events):
    return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]


def _streamed_refusal(request):
    """The key echoed in a refusal split over three SSE chunks (each piece alone is not the key)."""
    from tests.servers.loopback import Reply

    said = f"I refuse; you sent {_auth(request)}"
    cuts = [said[:25], said[25:33], said[33:]]
    deltas = [{"id": "r1", "object": "chat.completion.chunk", "model": "gpt-x",
               "choices": [{"index": 0, "delta": {"refusal": piece}, "finish_reason": None}]} for piece in cuts]
    deltas.append({"id": "r1", "object": "chat.completion.chunk", "model": "gpt-x",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return Reply(chunks=_sse(*deltas), content_type="text/event-stream")


def _responses_refusal(request):
    """OpenAI Responses: the key echoed base64-encoded in a refusal content part."""
    from tests.servers.loopback import Reply

    coded = base64.b64encode(_auth(request).encode()).decode()
    return Reply.json({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-x", "output": [
        {"type": "message", "id": "m1", "role": "assistant", "status": "completed",
         "content": [{"type": "refusal", "refusal": f"no. debug={coded}"}]}],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}})


SCHEMA = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}


class _Events:
    """Every event's type and data, as an app's handler, the run log or OTel see them."""

    def __init__(self, seen):
        self.seen = seen

    def zagent_event(self, event):
        self.seen.append({"type": event.type, **dict(event.data)})


def _refused(model, reply, *, stream=False, events=None):
    from tests.servers.loopback import LoopbackServer

    k = Kernel(["zagent.plugins.openai"], entry_points=False)
    if events is not None:
        k.add_plugin(_Events(events))
    try:
        with LoopbackServer(reply) as server:
            llm = k.llm(model, base_url=server.url, api_key=KEY, max_retries=0)
            with pytest.raises(ZagentError) as err:
                if stream:
                    for _ in llm.stream("hi", response_format=SCHEMA):
                        pass
                else:
                    llm.complete("hi", response_format=SCHEMA)
        assert KEY in _auth(server.requests[0])  # the server had it
    finally:
        k.close()
    return err.value


def _shown(err):
    from .conftest import error_chain

    return error_chain(err) + repr(err.args) + repr(getattr(err, "refusal", "")) + repr(getattr(err, "completion", ""))


def test_a_refusal_echoing_the_key_is_masked_in_the_error():
    """Attack (got through): a server answers a structured-output request with ``refusal: "I refuse. You sent
    Bearer sk-..."``; ``zagent.Refusal`` quoted it in its message (printed by the CLI, written in batch records),
    its ``refusal`` and its ``completion``. Defence: a reply's refusal is masked with the client's secrets as its
    model and ids are (``providerkit.metadata.masked_reply``)."""
    from zagent.errors import Refusal

    err = _refused("openai:gpt-x", lambda r: _chat_refusal(f"I refuse. You sent {_auth(r)}"))
    assert isinstance(err, Refusal) and "I refuse" in str(err)
    assert leaked(_shown(err)) == []


def test_a_streamed_refusal_split_over_chunks_is_masked():
    """Attack (got through): the same refusal streamed as three ``delta.refusal`` pieces, the key cut between
    them. Defence: the assembled reply's refusal is masked before ``Refusal`` is raised."""
    err = _refused("openai:gpt-x", _streamed_refusal, stream=True)
    assert "I refuse" in str(err) and leaked(_shown(err)) == []


def test_a_responses_refusal_with_the_key_in_base64_is_masked():
    """Attack (got through): OpenAI Responses, the refusal quoting the ``Authorization`` value base64-encoded.
    Defence: masked with its encoded forms."""
    err = _refused("openai-responses:gpt-x", _responses_refusal)
    assert "no. debug=" in str(err) and leaked(_shown(err)) == []
    assert base64.b64encode(f"Bearer {KEY}".encode()).decode()[:16] not in _shown(err)


def test_a_refusal_echoing_the_key_is_masked_in_llm_end_events():
    """Attack (got through): the refused call's ``llm_end`` event (run log, OTel, an app's event handler) carried
    the error text with the key (events mask environment secrets, not a key given in code). Defence: the refusal
    is masked at the source."""
    events = []
    _refused("openai:gpt-x", lambda r: _chat_refusal(f"I refuse. You sent {_auth(r)}"), events=events)
    shown = json.dumps(events, default=repr)
    assert events and "I refuse" in shown and leaked(shown) == []


# -- a tool's secret default and a rail's injected credential in approval questions --------------------------------

VAULT_DEFAULT = "vd-r16-DEFAULTTOKEN-5772156649"


def _deploy_kernel(ran, *plugins):
    from .test_security_round14b_forged import PLUGINS, _LaterPerson

    k = Kernel(plugins=[*PLUGINS, *plugins], entry_points=False, config={"rails": {"approver": _LaterPerson()}})

    def deploy(target: str, api_token: str = VAULT_DEFAULT) -> str:
        """Deploy to ``target`` (the token comes from the app's vault)."""
        ran.append(target)
        return "deployed"

    k.add_tool(deploy, sensitive=True)
    return k


DEPLOYER = {"type": "customize", "name": "ops", "description": "deploys", "prompt": "Do this: {goal}",
            "inputs": [{"name": "goal"}], "outputs": [{"name": "answer"}], "tools": ["deploy"], "parse_mode": "str"}


def _paused_deploy(tmp_path, *plugins):
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    ran, events = [], []
    k = _deploy_kernel(ran, *plugins)
    k.add_plugin(_Events(events))
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "ship", "inputs": [{"name": "goal"}], "edges": [],
                                     "nodes": [{"name": "ship", "description": "ship", "inputs": [{"name": "goal"}],
                                                "outputs": [{"name": "answer"}], "agents": [DEPLOYER]}]})
    db = tmp_path / "wf.db"
    try:
        reply = {"content": None, "tool_calls": [{"id": "c1", "name": "deploy", "arguments": {"target": "prod"}}]}
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[reply]), checkpoints=str(db))
        paused = ex.run(graph, {"goal": "ship it"}, run_id="wf")
    finally:
        k.close()
    assert paused.status == "paused" and ran == []
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("wf.db"))
    return paused.interrupts[0].question, json.dumps(events, default=repr), stored


def test_a_workflow_question_does_not_show_a_tools_secret_default(tmp_path):
    """Attack (got through): a sensitive ``deploy(target, api_token=<vault token>)`` (the schema the model sees
    leaves the secret default out, round eleven) called by a workflow node's model: the node's question shows the
    arguments as the call will run, defaults filled in, so the vault's token was in the question the app shows,
    in the interrupt event and in the checkpoint. Defence: a secret-named argument's value is shown as ``***``
    in a question (the digest the answer binds is unchanged)."""
    question, events, stored = _paused_deploy(tmp_path)
    assert '"target":"prod"' in question.replace(" ", "") and "api_token" in question
    assert leaked(question, VAULT_DEFAULT) == [] and leaked(events, VAULT_DEFAULT) == []
    assert VAULT_DEFAULT.encode() not in stored


def test_the_console_prompt_does_not_show_a_tools_secret_default(monkeypatch):
    """Attack (got through): the same ``deploy`` call under the console approver (``zagent chat``, ``zagent run``):
    the prompt printed the arguments the rail sees, defaults filled in, so the vault's token went to the screen
    (and a recorded terminal, a CI log). Defence: a secret-named value equal to the tool's own default is shown as
    ``***``; the person's yes still runs the call with it."""
    import io
    import sys

    from zagent.plugins.rails import console_approver_now

    ran = []
    k = _deploy_kernel(ran)
    k.config["rails"]["approver"] = console_approver_now
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    try:
        reply = {"content": None, "tool_calls": [{"id": "c1", "name": "deploy", "arguments": {"target": "prod"}}]}
        agent = k.agent({"type": "react", "name": "ops", "description": "ops", "tools": ["deploy"]})
        agent.llm = k.llm("scripted:ops", replies=[reply, "done"])
        agent.chat("ship it", use_react=True)
    finally:
        k.close()
    shown = err.getvalue()
    assert ran == ["prod"] and "deploy(" in shown and "api_token" in shown
    assert leaked(shown, VAULT_DEFAULT) == []


class _Vault:
    """A rail that puts the vault's token into every ``deploy`` call (the model never sees it)."""

    def zagent_before_tool_call(self, call, ctx):
        from zagent import Rewrite

        if call.name == "deploy":
            return Rewrite({**call.arguments, "api_token": TOKEN})
        return None


def test_a_workflow_question_does_not_show_a_credential_a_rail_injected(tmp_path):
    """Attack (got through): a vault rail adds ``api_token`` to each ``deploy`` call; the approval rail then holds
    the call and the node asks the person about it, showing the call as it will run: the vault's token was in the
    question, the interrupt event and the checkpoint. Defence: a question shows secret-named values as ``***``."""
    question, events, stored = _paused_deploy(tmp_path, _Vault())
    assert '"target":"prod"' in question.replace(" ", "")
    assert leaked(question, TOKEN, VAULT_DEFAULT) == [] and leaked(events, TOKEN, VAULT_DEFAULT) == []
    assert TOKEN.encode() not in stored and VAULT_DEFAULT.encode() not in stored


# -- a refusal quoting the key, carried on: batch records, another model's request --------------------------------

QA = {"type": "customize", "name": "QA", "description": "answers", "prompt": "Answer: {question}",
      "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
      "parse_mode": "json"}


def test_a_batch_results_file_does_not_keep_a_refusal_quoting_the_specs_key(tmp_path):
    """Attack (got through): ``zagent batch`` of an agent file with its own ``llm_config.api_key`` (not an
    environment variable) whose server refuses quoting the ``Authorization`` header: the failed item's record
    (``error.message``, a file often shared) held the key; batch records mask environment secrets only. Defence:
    the refusal is masked at the source."""
    from tests.servers.loopback import LoopbackServer

    out = tmp_path / "runs.jsonl"
    k = Kernel(["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch"],
               entry_points=False)
    try:
        with LoopbackServer(lambda r: _chat_refusal(f"I refuse. You sent {_auth(r)}")) as server:
            spec = {**QA, "llm_config": {"model": "openai:gpt-4o", "base_url": server.url, "api_key": KEY,
                                         "max_retries": 0}}
            report = k.batch(spec, [{"id": "q1", "question": "2+2?"}], out=str(out), retries=0)
        assert KEY in _auth(server.requests[0])
    finally:
        k.close()
    written = out.read_text()
    assert report.summary.failed == 1 and "Refusal" in written and "I refuse" in written
    assert leaked(written) == []


def test_a_tool_asking_a_model_does_not_pass_its_refusal_key_to_the_calling_model():
    """Attack (got through): a tool asks its own model (key B, one server) for structured output; that server's
    refusal quotes key B; the tool's error result, describing the ``Refusal``, went to the calling agent's model
    on another server (key A) -- key B handed to a second party, and into events. Defence: the refusal is masked
    where the reply is decoded."""
    from tests.servers.loopback import LoopbackServer, Reply

    def outer_reply(request):
        body = json.loads(request.body)
        if any(m.get("role") == "tool" for m in body["messages"]):
            return Reply.json({"id": "o2", "object": "chat.completion", "model": "gpt-x", "choices": [{
                "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        return Reply.json({"id": "o1", "object": "chat.completion", "model": "gpt-x", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "classify", "arguments": "{\"text\": \"hi\"}"}}]}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                "zagent.plugins.react"],
               entry_points=False)
    try:
        with LoopbackServer(lambda r: _chat_refusal(f"I refuse. You sent {_auth(r)}")) as inner, \
                LoopbackServer(outer_reply) as outer:
            judge = k.llm("openai:gpt-x", base_url=inner.url, api_key=INNER, max_retries=0)

            def classify(text: str) -> str:
                """Classify a text."""
                return judge.complete(text, response_format=SCHEMA).text

            k.add_tool(classify)
            agent = k.agent({"type": "react", "name": "front", "description": "front", "tools": ["classify"]})
            agent.llm = k.llm("openai:gpt-x", base_url=outer.url, api_key=KEY, max_retries=0)
            agent.chat("classify hi", use_react=True)
        sent = b"".join(r.body for r in outer.requests).decode()
    finally:
        k.close()
    assert len(outer.requests) == 2 and "I refuse" in sent
    assert leaked(sent, INNER) == []


def _made_by(tmp_path, key, name):
    k = Kernel(["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch"],
               entry_points=False)
    try:
        spec = {**QA, "llm_config": {"model": "openai:gpt-4o", "base_url": "http://127.0.0.1:9/v1", "api_key": key,
                                     "headers": {"X-Api-Key": key}, "max_retries": 0, "timeout": 1}}
        by_spec = k.batch(spec, [], out=str(tmp_path / f"{name}-spec.jsonl")).summary.made_by
        agent = k.agent(spec)
        by_agent = k.batch(agent, [], out=str(tmp_path / f"{name}-agent.jsonl")).summary.made_by
    finally:
        k.close()
    return by_spec, by_agent


def test_made_by_is_made_without_the_api_key(tmp_path):
    """Attack (held): ``made_by`` (written in every batch and eval record, round fifteen) is said to be made
    without secrets; if it digested the agent's ``api_key`` or secret headers, a shared results file would let a
    reader test guesses of a short key offline, and rotating the key would refuse the user's own results file.
    Defence: the same agent with another key has the same ``made_by`` (spec and agent object)."""
    assert _made_by(tmp_path, KEY, "a") == _made_by(tmp_path, "sk-r16-ROTATED-999999999999", "b")


def _answering(content):
    from tests.servers.loopback import Reply

    def reply(request):
        return Reply.json({"id": "r1", "object": "chat.completion", "model": "gpt-x", "choices": [{
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content(_auth(request))}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    return reply


@pytest.mark.parametrize("content", [
    lambda auth: json.dumps({"answer": auth}),
    lambda auth: '{"%s": 1, "%s": 2}' % (auth, auth),
], ids=["wrong-type", "duplicate-key"])
def test_a_parse_error_quoting_the_echoed_key_is_masked(tmp_path, content):
    """Attack (got through): a structured agent's server answers ``{"answer": "Bearer sk-..."}`` for an integer
    field (or names the key twice, as a JSON key): the ``ParseError`` quoted the value (``expected integer, got
    'Bearer sk-...``), and ``zagent batch`` wrote it into the results file, the CLI printed it. Defence: a
    ``ParseError`` leaving an agent is masked with its model's secrets (on that path only)."""
    from tests.servers.loopback import LoopbackServer

    out = tmp_path / "runs.jsonl"
    k = Kernel(["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch"],
               entry_points=False)
    try:
        with LoopbackServer(_answering(content)) as server:
            spec = {**QA, "outputs": [{"name": "answer", "type": "integer"}],
                    "llm_config": {"model": "openai:gpt-4o", "base_url": server.url, "api_key": KEY, "max_retries": 0}}
            k.batch(spec, [{"id": "q1", "question": "2+2?"}], out=str(out), retries=0)
            agent = k.agent(spec)
            with pytest.raises(ZagentError) as err:
                agent(question="2+2?")
    finally:
        k.close()
    written = out.read_text()
    assert "ParseError" in written and "Bearer ***" in written and leaked(written) == []
    assert leaked(_shown(err.value)) == []


# -- a guardrail that fails quoting a key ------------------------------------------------------------------------

ENV_KEY = "sk-r16-ENVKEY-0123456789abcdef"


class _ModerationHook:
    """A kernel guardrail calling a moderation API whose client fails quoting the key it sent."""

    def zagent_check_input(self, agent, inputs, ctx):
        raise PermissionError(f"moderation API answered 401 for key {ENV_KEY}")


def _moderated(monkeypatch, how):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    from zagent.errors import GuardrailTripped

    def moderate(inputs, ctx):
        raise PermissionError(f"moderation API answered 401 for key {ENV_KEY}")

    events = []
    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", _Events(events)],
               entry_points=False)
    try:
        agent = k.agent({**QA, "parse_mode": "str"})
        agent.llm = k.llm("scripted:m", replies=["4"])
        if how == "own":
            agent.guardrails = {"input": [moderate]}
        else:
            k.add_plugin(_ModerationHook(), name="moderation")
        with pytest.raises(GuardrailTripped) as err:
            agent(question="2+2?")
    finally:
        k.close()
    return err.value, json.dumps(events, default=repr)


@pytest.mark.parametrize("how", ["own", "hook"])
def test_a_failing_guardrail_does_not_show_an_environment_key(monkeypatch, how):
    """Attack (got through): an input guardrail (the agent's own, or a kernel hook) calls a moderation API whose
    client raises quoting ``OPENAI_API_KEY``'s value; the run stops fail-closed with ``GuardrailTripped`` whose
    message quoted the exception and which chained it as ``__cause__`` (a traceback, the CLI, an app's log). Rails
    failing that way were masked in round thirteen, guardrails not. Defence: described as a rail's failure is
    (environment secrets masked), the cause chained only when it shows no secret."""
    from .conftest import error_chain

    err, events = _moderated(monkeypatch, how)
    assert "PermissionError" in str(err) and "401 for key ***" in str(err)
    assert leaked(error_chain(err), ENV_KEY) == [] and leaked(events, ENV_KEY) == []


PW = "pw-r16-LOGINPASS-8675309"


def test_a_workflow_question_and_the_run_log_do_not_keep_a_password_the_model_sent(tmp_path):
    """Attack (got through): a node's model calls a sensitive ``login(user, password)``; the run log masks
    ``password`` in the model's reply (round eight), but the node's question quoted the arguments whole, and the
    run log kept it three times (the node's ``question``, the workflow's ``questions``, the ``Interrupted``
    error), so ``zagent logs show`` printed the password. Defence: a question shows secret-named values as
    ``***`` by key (a value the model also put under another name stays shown), as the run log does."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    from .test_security_round14b_forged import PLUGINS, _LaterPerson

    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.runlog"], entry_points=False,
               config={"rails": {"approver": _LaterPerson()}, "log": {"path": str(tmp_path / "runs.db")}})

    def login(user: str, password: str, note: str = "") -> str:
        """Log in."""
        return "ok"

    k.add_tool(login, sensitive=True)
    graph = WorkFlowGraph.from_dict({"name": "ops", "goal": "log in", "inputs": [{"name": "goal"}], "edges": [],
                                     "nodes": [{"name": "ship", "description": "ship", "inputs": [{"name": "goal"}],
                                                "outputs": [{"name": "answer"}],
                                                "agents": [{**DEPLOYER, "tools": ["login"]}]}]})
    reply = {"content": None, "tool_calls": [{"id": "c1", "name": "login", "arguments": {
        "user": "ann", "password": PW, "note": f"shown: {PW}"}}]}
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:ops", replies=[reply]), checkpoints=str(tmp_path / "wf.db"))
        paused = ex.run(graph, {"goal": "x"}, run_id="wf")
    finally:
        k.close()
    question = paused.interrupts[0].question
    assert paused.status == "paused" and '"password":"***"' in question.replace(" ", "")
    assert f'"note":"shown: {PW}"' in question.replace(" ", "").replace("shown:", "shown: ")  # by key only
    logged = (tmp_path / "runs.db").read_bytes()
    assert b"asks" in logged and logged.count(PW.encode()) == logged.count(f"shown: {PW}".encode())


# -- a server's headers and names quoted by the kit's own checks --------------------------------------------------

NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


def _bare(request):
    return _auth(request).replace("Bearer ", "")


def _content_type(request):
    from tests.servers.loopback import Reply

    return Reply(chunks=[b"data: {}\n\n"], content_type=_bare(request))


def _content_encoding(request):
    from tests.servers.loopback import Reply

    return Reply(body=b"{}", headers={"content-encoding": f"br, {_bare(request)}"})


def _streamed_encoding(request):
    from tests.servers.loopback import Reply

    return Reply(chunks=[b"data: {}\n\n"], headers={"content-encoding": f"br, {_bare(request)}"},
                 content_type="text/event-stream")


def _failed(model, reply, *, stream):
    from tests.servers.loopback import LoopbackServer

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"], entry_points=False)
    try:
        with LoopbackServer(reply) as server:
            llm = k.llm(model, base_url=server.url, api_key=KEY, max_retries=0)
            with pytest.raises(ZagentError) as err:
                if stream:
                    for _ in llm.stream("hi"):
                        pass
                else:
                    llm.complete("hi")
    finally:
        k.close()
    return err.value


@pytest.mark.parametrize("model", NETWORK)
@pytest.mark.parametrize("reply, stream", [(_content_type, True), (_content_encoding, False),
                                           (_streamed_encoding, True)],
                         ids=["content-type", "content-encoding", "streamed-content-encoding"])
def test_a_header_naming_the_key_is_masked_in_the_protocol_error(model, reply, stream):
    """Attack (got through for each provider the check reached): a server answers with ``Content-Type: <key>``
    to a streaming request, or ``Content-Encoding: br, <key>``; the kit's checks quoted the header as it was
    (lower-cased, so the client's redaction of server text, which sees only bodies, never ran on it): ``answered a
    streaming request with content type 'sk-r16-...'``. Defence: every ``ProviderError`` leaving a provider model
    is masked with the client's secrets (also in another case), on the error path only."""
    from .conftest import error_chain

    err = _failed(model, reply, stream=stream)
    shown = error_chain(err).lower()
    assert leaked(shown, KEY.lower()) == []


def test_an_anthropic_tool_block_started_twice_does_not_quote_the_key_as_its_name():
    """Attack (got through): an Anthropic stream opens a ``tool_use`` block named with the ``x-api-key`` it got,
    then opens another at the same index: the ``ProtocolError`` named the open call (``the call 'sk-...' there
    was still open``); call names are masked only in the reply that is given back. Defence: the error is masked
    like every provider error."""
    from tests.servers.loopback import Reply

    from .conftest import error_chain

    def twice(request):
        events = [
            {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c",
                                                  "content": [], "usage": {"input_tokens": 1, "output_tokens": 0}}},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "t1", "name": _bare(request), "input": {}}},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "t2", "name": "x", "input": {}}}]
        return Reply(chunks=[f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events],
                     content_type="text/event-stream")

    err = _failed("anthropic:claude-x", twice, stream=True)
    assert "still open" in str(err) and leaked(error_chain(err)) == []


@pytest.mark.parametrize("model", ["openai:gpt-x", "ollama:llama"])
def test_a_model_listing_with_the_key_as_its_content_encoding_is_masked(model):
    """Attack (got through): ``zagent models`` (``alist_models``, ``GET /models``) answered with
    ``Content-Encoding: br, <key>``: the ``ProtocolError`` quoted it. Defence: a listing's error is masked with
    the client's secrets."""
    import asyncio

    from tests.servers.loopback import LoopbackServer

    from .conftest import error_chain

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"], entry_points=False)
    try:
        with LoopbackServer(_content_encoding) as server:
            llm = k.llm(model, base_url=server.url, api_key=KEY, max_retries=0)
            with pytest.raises(ZagentError) as err:
                asyncio.run(llm.llm.alist_models())
    finally:
        k.close()
    assert "Content-Encoding" in str(err.value) and leaked(error_chain(err.value).lower(), KEY.lower()) == []


def test_a_parse_error_through_a_fallback_chain_is_masked_with_the_answering_models_key():
    """Attack (got through): the same wrong-typed answer quoting the key, from the second model of a ``fallback:`` chain (the
    first refuses the connection), each model with its own key: the agent's model is the chain, whose own client
    holds no key. Defence: the ``ParseError`` is masked with the secrets of every model inside the chain
    (``metadata.models_mask``)."""
    from tests.servers.loopback import LoopbackServer

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.openai", "zagent.plugins.fallback",
                "zagent.plugins.parsers", "zagent.plugins.actions"], entry_points=False)
    try:
        with LoopbackServer(_answering(lambda auth: json.dumps({"answer": auth}))) as server:
            agent = k.agent({**QA, "outputs": [{"name": "answer", "type": "integer"}]})
            agent.llm = k.llm("fallback:openai:gpt-4o,openai:gpt-4o", models=[
                {"model": "openai:gpt-4o", "base_url": "http://127.0.0.1:9/v1", "api_key": INNER, "max_retries": 0},
                {"model": "openai:gpt-4o", "base_url": server.url, "api_key": KEY, "max_retries": 0}])
            with pytest.raises(ZagentError) as err:
                agent(question="2+2?")
        assert KEY in _auth(server.requests[0])
    finally:
        k.close()
    assert "expected integer" in str(err.value) and leaked(_shown(err.value), KEY, INNER) == []
