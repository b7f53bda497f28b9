"""Round thirteen, secrets and leaks: the paths next to the ones defended (one attack per test).

Tried (each test's docstring says whether it got through before): a rail (tool or model, before or after)
raising with a message quoting an environment key, or a credential an earlier rail injected: its failure became
the blocked call's result the model reads (sent to the server, kept in trajectories) and a ``ToolBlocked`` whose
cause chain held the raw text; that failure, an observer's and a ``zagent_run_end``'s logged with tracebacks to
the app's own handlers; a tool returning the key, written to trajectories (whole-run, live,
``TrajectoryRecorder``), batch results files and eval reports, and read by the skill curator, while the run log
masked it; a strict kernel's plugin failure whose cause chain kept what ``kernel.problems`` masked; credential
names the rule missed (``DB_PASS``, ``GITHUB_PAT``, ``OPENAI_API_KEYS``, ``APP_SECRETS``, ``SESSION_JWT``); a
secret option given to one call (``llm.complete(text, extra_body=...)``) echoed in an error, a stream's error
event or a recorded reply; a group chat's inline speakers' keys in ``chat.agents`` and ``attrs.asdict(chat)``.
Open (strict xfail): a workflow graph's inline agents in generic dumps. Held: the hook trace
(``ZAGENT_TRACE_HOOKS=1``) of a rail injecting a credential.
"""

import json
import logging

import pytest

from zagent import Kernel, Rewrite, ToolBlocked
from tests.servers.loopback import LoopbackServer
from tests.servers.openai_server import completion

from .conftest import error_chain

ENV_KEY = "sk-r13-ENVKEY-abcdef0123456789"
VAULT = "vault-r13-TOKEN-5566778899"


def leaked(text, *secrets):
    return [s for s in (secrets or (ENV_KEY,)) if s in text or s[:16] in text]


@pytest.fixture
def env_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    return ENV_KEY


def echo(text: str) -> str:
    """Echo a text."""
    return text


def _kernel(*plugins, **kw):
    k = Kernel(plugins=list(plugins), entry_points=False, **kw)
    k.add_tool(echo)
    return k


# -- a rail that raises ---------------------------------------------------------------------------------------------


class RaisingToolRail:
    """A moderation rail whose HTTP client fails quoting the key it sent."""

    def zagent_before_tool_call(self, call, ctx):
        raise RuntimeError(f"moderation API refused key {ENV_KEY} for https://mod.example")


class RaisingAfterRail:
    """An audit rail whose sink fails quoting the key it sent."""

    def zagent_after_tool_call(self, call, result, ctx):
        raise RuntimeError(f"audit sink refused key {ENV_KEY}")


class RaisingModelRail:
    def zagent_before_llm_call(self, request, ctx):
        raise RuntimeError(f"prompt filter refused key {ENV_KEY}")


class RaisingReplyRail:
    def zagent_after_llm_call(self, request, response, ctx):
        raise RuntimeError(f"reply filter refused key {ENV_KEY}")


@pytest.mark.parametrize("rail", [RaisingToolRail, RaisingAfterRail], ids=["before", "after"])
def test_a_tool_rail_that_raises_quoting_an_environment_key_is_masked_in_the_result(env_key, rail):
    """Attack: a tool rail fails with a library message quoting ``OPENAI_API_KEY``; the failure is the blocked
    call's result, the text the model reads next. A tool's own exception was masked (``describe``), a rail's was
    not. Defence: a rail's failure is described as a tool's (got through before)."""
    k = _kernel(rail())
    try:
        result = k.run_tool({"name": "echo", "arguments": {"text": "hi"}})
    finally:
        k.close()
    assert result.state == "blocked" and "refused key" in str(result.content)
    assert leaked(f"{result.content} {result.error}") == []


class AuditRail:
    """An audit rail that fails quoting the call it was given (``str(call.arguments)``)."""

    def zagent_before_tool_call(self, call, ctx):
        raise RuntimeError(f"audit store refused {call.arguments}")

    def zagent_after_tool_call(self, call, result, ctx):
        raise RuntimeError(f"audit store refused {call.arguments}")


class VaultRail:
    """Puts a credential from a vault into the call (the model never sees it)."""

    def zagent_before_tool_call(self, call, ctx):
        return Rewrite({**call.arguments, "api_token": VAULT})


def deploy(target: str, api_token: str = "") -> str:
    """Deploy."""
    return f"deployed {target}"


@pytest.mark.parametrize("hook", ["zagent_before_tool_call", "zagent_after_tool_call"])
def test_a_rail_failing_after_another_injected_a_credential_does_not_show_it(hook):
    """Attack: a vault rail injects ``api_token``; a later rail fails quoting the call's arguments. A tool's own
    error masked the call's secret-named arguments (round eleven); a rail's failure, which the model reads, did
    not. Defence: a rail's failure is described with the call's secret arguments masked (got through before)."""
    class Audit:
        pass

    setattr(Audit, hook, getattr(AuditRail, hook))
    k = Kernel(plugins=[Audit(), VaultRail()], entry_points=False)  # the vault rail registered last runs first
    k.add_tool(deploy)
    try:
        result = k.run_tool({"name": "deploy", "arguments": {"target": "prod"}})
    finally:
        k.close()
    assert result.state == "blocked" and "'target': 'prod'" in str(result.content)
    assert leaked(f"{result.content} {result.error}", VAULT) == []


def test_a_rail_failure_does_not_reach_the_model_server(env_key, tmp_path):
    """Attack: the same rail in a ReAct run against a real server: the next request's body carried the key to
    the model's server, and the trajectory kept it. Defence: masked before the model reads it (got through
    before)."""
    bodies = []

    def answer(request):
        bodies.append(request.body.decode())
        if len(bodies) == 1:
            return completion(None, tool_calls=[{"id": "c1", "name": "echo", "arguments": '{"text": "hi"}'}])
        return completion("done")

    k = _kernel("zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
                RaisingToolRail())
    try:
        with LoopbackServer(answer) as server:
            from zagent.plugins.react import ReActLoop

            llm = k.llm("openai:gpt-x", base_url=server.url, api_key="sk-other-0000000000", max_retries=0)
            ReActLoop(kernel=k, llm=llm, tools=["echo"], trajectory_path=str(tmp_path / "t.jsonl")).run("go")
    finally:
        k.close()
    assert len(bodies) == 2 and "refused key" in bodies[1]
    assert leaked(bodies[1] + (tmp_path / "t.jsonl").read_text()) == []


@pytest.mark.parametrize("rail", [RaisingModelRail, RaisingReplyRail], ids=["before", "after"])
def test_a_model_rail_that_raises_quoting_an_environment_key_is_masked_in_tool_blocked(env_key, rail):
    """Attack: a model rail fails quoting ``OPENAI_API_KEY``: the ``ToolBlocked`` an app logs or shows quoted it,
    and an after-LLM rail's kept the raw exception as its ``__cause__``. Defence: the failure is described
    masked, and a cause holding a secret is not chained (got through before)."""
    k = _kernel("zagent.plugins.offline", rail())
    try:
        with pytest.raises(ToolBlocked) as err:
            k.llm("scripted:m", replies=["hi"]).complete("hi")
    finally:
        k.close()
    assert "filter refused key" in str(err.value)
    assert leaked(error_chain(err.value)) == []


def test_a_model_rail_failure_without_a_secret_keeps_its_cause():
    """Guard: a model rail failing with a message that holds no secret is still the ``ToolBlocked``'s cause (a
    developer debugging the rail sees its exception)."""
    class Plain:
        def zagent_before_llm_call(self, request, ctx):
            raise RuntimeError("prompt filter unreachable")

    k = _kernel("zagent.plugins.offline", Plain())
    try:
        with pytest.raises(ToolBlocked) as err:
            k.llm("scripted:m", replies=["hi"]).complete("hi")
    finally:
        k.close()
    assert isinstance(err.value.__cause__, RuntimeError) and "prompt filter unreachable" in str(err.value)


# -- the app's own logging -------------------------------------------------------------------------------------------


@pytest.fixture
def app_log():
    """What an app's own logging handler (the root logger, a standard ``Formatter``) writes."""
    import io

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    yield out
    root.removeHandler(handler)


class RaisingObserver:
    def zagent_event(self, event):
        raise RuntimeError(f"exporter got 401 for key {ENV_KEY}")


class RaisingRunEnd:
    def zagent_run_end(self, result, ctx):
        raise RuntimeError(f"billing hook refused key {ENV_KEY}")


@pytest.mark.parametrize("plugin", [RaisingToolRail, RaisingAfterRail, RaisingObserver],
                         ids=["rail", "after-rail", "observer"])
def test_a_failing_plugins_logged_traceback_hides_an_environment_key(env_key, app_log, plugin):
    """Attack: the kernel logs a rail's or an observer's failure with ``log.exception``; the app's handler writes
    the message and the traceback, whose last line quotes ``OPENAI_API_KEY``. The CLI masked its own stderr; an
    app's log file kept it. Defence: the ``zagent`` logger's records are masked, the traceback too (got through
    before)."""
    k = _kernel(plugin())
    try:
        k.run_tool({"name": "echo", "arguments": {"text": "hi"}})
    finally:
        k.close()
    written = app_log.getvalue()
    assert "Traceback" in written and "RuntimeError" in written
    assert leaked(written) == []


def test_a_failing_run_end_hooks_logged_traceback_hides_an_environment_key(env_key, app_log):
    """Attack: a ``zagent_run_end`` plugin fails quoting the key; logged with its traceback. Defence: as above
    (got through before)."""
    from zagent.plugins.react import ReActLoop

    k = _kernel("zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
                RaisingRunEnd())
    try:
        ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=["done"]), tools=[]).run("go")
    finally:
        k.close()
    written = app_log.getvalue()
    assert "zagent_run_end" in written and "Traceback" in written
    assert leaked(written) == []


def test_log_masking_keeps_records_without_secrets(env_key, app_log):
    """Over-masking guard: a failure quoting no secret is logged as it was, traceback and all."""
    class Plain:
        def zagent_event(self, event):
            raise RuntimeError("exporter unreachable at https://otel.example:4318 (code 7f3a9c2b)")

    k = _kernel(Plain())
    try:
        k.run_tool({"name": "echo", "arguments": {"text": "hi"}})
    finally:
        k.close()
    assert "exporter unreachable at https://otel.example:4318 (code 7f3a9c2b)" in app_log.getvalue()


# -- trajectories --------------------------------------------------------------------------------------------------


def show_env(name: str) -> str:
    """Show an environment variable (a shell tool running ``env``, ``cat .env``)."""
    import os

    return f"{name}={os.environ.get(name)}; https://app:{VAULT}@db.example/x"


def _react_run(tmp_path, **paths):
    from zagent.plugins.react import ReActLoop

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"],
               entry_points=False)
    k.add_tool(show_env)
    llm = k.llm("scripted:m", replies=[
        {"tool_calls": [{"id": "c1", "name": "show_env", "arguments": {"name": "OPENAI_API_KEY"}}]}, "done"])
    try:
        ReActLoop(kernel=k, llm=llm, tools=["show_env"], **{k_: str(tmp_path / v) for k_, v in paths.items()}).run("go")
    finally:
        k.close()


@pytest.mark.parametrize("key, name", [("trajectory_path", "t.jsonl"), ("live_trajectory_path", "live.jsonl")])
def test_a_trajectory_masks_an_environment_key_a_tool_returned(env_key, tmp_path, key, name):
    """Attack: a tool returns ``OPENAI_API_KEY``'s value (and a URL password); the run log and OTel content mask
    environment secrets, but the trajectory JSONL (kept for training data, shared) held both, whole-run and live.
    Defence: trajectory lines are masked as the run log's content is; the file stays valid JSONL (got through
    before)."""
    _react_run(tmp_path, **{key: name})
    written = (tmp_path / name).read_text()
    assert "OPENAI_API_KEY=" in written and "db.example/x" in written
    assert leaked(written, ENV_KEY, VAULT) == []
    assert all(json.loads(line) for line in written.splitlines())


def test_the_trajectory_recorder_api_masks_an_environment_key(env_key, tmp_path):
    """Attack: an app records its own agent with ``TrajectoryRecorder`` (Agent-Z's API); a tool response and a
    call's arguments quote the key. Defence: the recorder masks each line (got through before)."""
    from zagent.plugins.react import TrajectoryRecorder, read_live

    rec = TrajectoryRecorder(str(tmp_path / "r.jsonl"), agent="app")
    rec.initialize(task="deploy")
    rec.add_tool_call("deploy", {"target": "prod", "note": f"key {ENV_KEY}"})
    rec.add_tool_response("deploy", f"deployed with {ENV_KEY}")
    rec.save_trajectory("completed", final="ok")
    written = (tmp_path / "r.jsonl").read_text()
    assert "deployed with ***" in written and leaked(written) == []
    [run] = read_live(str(tmp_path / "r.jsonl"))
    assert run["final"] == "ok" and len(run["conversations"]) == 2


def test_a_trajectory_without_environment_secrets_keeps_its_text(tmp_path, monkeypatch):
    """Over-masking guard: with no secret in the environment, the line keeps the tool's text and stays one valid
    JSON line; only the URL's password is masked (as the run log does)."""
    for name in [n for n in __import__("os").environ if "KEY" in n or "TOKEN" in n or "SECRET" in n]:
        monkeypatch.delenv(name)
    _react_run(tmp_path, trajectory_path="t.jsonl")
    [line] = (tmp_path / "t.jsonl").read_text().splitlines()
    assert "OPENAI_API_KEY=None" in line and "***@db.example/x" in line and VAULT not in line
    assert json.loads(line)["status"] == "completed"


class LeakyAgent:
    """An agent whose answer quotes ``OPENAI_API_KEY`` (a tool returned it and the model repeated it)."""

    name = "leaky"

    async def aexecute(self, *, inputs, ctx=None):
        import os

        return {"answer": f"the key is {os.environ['OPENAI_API_KEY']} (see https://app:{VAULT}@db.example/x)"}


def test_a_batch_results_file_masks_an_environment_key_in_an_output(env_key, tmp_path):
    """Attack: a batch item's output quotes ``OPENAI_API_KEY``; round eleven masked failures in the results file,
    not outputs. Defence: each results line is masked as trajectories are; the line stays valid JSON and the
    item is still seen as done on a second run (got through before)."""
    k = Kernel(["zagent.plugins.batch"], entry_points=False)
    try:
        k.batch(LeakyAgent(), [{"id": "a", "x": 1}], out=str(tmp_path / "out.jsonl"))
        again = k.batch(LeakyAgent(), [{"id": "a", "x": 1}], out=str(tmp_path / "out.jsonl"))
    finally:
        k.close()
    written = (tmp_path / "out.jsonl").read_text()
    assert "the key is ***" in written and "db.example/x" in written
    assert leaked(written, ENV_KEY, VAULT) == []
    assert [json.loads(line)["ok"] for line in written.splitlines()] == [True]
    assert again.summary.skipped == 1


def test_an_eval_report_masks_an_environment_key_in_an_output(env_key, tmp_path):
    """Attack: an eval case's output quotes ``OPENAI_API_KEY``; the results file and the saved report (shared,
    compared with ``--compare``) kept it. Defence: both are masked when written (got through before)."""
    from zagent.plugins.evals import EvalReport, evaluate

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch",
                "zagent.plugins.evals"], entry_points=False)
    try:
        report = evaluate(k, LeakyAgent(), [{"id": "c", "inputs": {"question": "q"}, "expected": "x"}],
                          out=str(tmp_path / "results.jsonl"))
    finally:
        k.close()
    report.save(str(tmp_path / "report.json"))
    for name in ("results.jsonl", "report.json"):
        written = (tmp_path / name).read_text()
        assert "the key is ***" in written and leaked(written, ENV_KEY, VAULT) == [], name
    assert EvalReport.load(str(tmp_path / "report.json")).cases[0].id == "c"


def test_the_skill_curators_transcript_masks_an_environment_key(env_key):
    """Attack: a run whose tool returned ``OPENAI_API_KEY`` is curated into a skill (``curate_after_run``, or
    ``zagent skills curate`` over trajectories written before this round); the curator's model read the key in
    the transcript and may copy it into the skill file (a shared folder). Defence: the transcript is masked
    (got through before)."""
    from zagent.plugins.skills.curator import render_trajectory

    record = {"id": "r1", "status": "completed", "steps": [], "conversations": [
        {"from": "human", "value": "show the env"},
        {"from": "observation", "value": f"OPENAI_API_KEY={ENV_KEY}; https://app:{VAULT}@db.example/x"}]}
    text = render_trajectory(record)
    assert "OPENAI_API_KEY=***" in text and "db.example/x" in text
    assert leaked(text, ENV_KEY, VAULT) == []


# -- a strict kernel's plugin failure -------------------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    "import os\nraise RuntimeError('license server refused key ' + os.environ['OPENAI_API_KEY'])\n",
    "import os\ndef zagent_register_tools(register):\n    raise ValueError('vault refused ' + os.environ['OPENAI_API_KEY'])\n",
], ids=["import", "registration"])
def test_a_strict_kernels_plugin_failure_chain_hides_an_environment_key(env_key, tmp_path, monkeypatch,
                                                                        forget_modules, source):
    """Attack: ``Kernel(plugins=[...], strict=True)`` with a plugin failing with a message quoting the key: the
    ``PluginError`` was masked (as ``kernel.problems``), but raised ``from`` the original exception, so an app's
    ``log.exception`` or Sentry showed the key in the cause. Defence: the chain is masked (got through
    before)."""
    import traceback

    (tmp_path / "r13_failing_plugin.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_modules.append("r13_failing_plugin")
    from zagent.errors import PluginError

    with pytest.raises(PluginError) as err:
        Kernel(plugins=["r13_failing_plugin"], entry_points=False, strict=True)
    shown = error_chain(err.value) + "".join(traceback.format_exception(err.value))
    assert "refused" in shown and leaked(shown) == []


# -- credential names the rule missed ----------------------------------------------------------------------------

MISSED_NAMES = ["DB_PASS", "SMTP_PASS", "GITHUB_PAT", "OPENAI_API_KEYS", "APP_SECRETS", "SESSION_JWT", "db_passwords",
                "access_tokens"]


@pytest.mark.parametrize("name", MISSED_NAMES)
def test_a_tool_error_quoting_a_credential_under_a_missed_name_is_masked(monkeypatch, name):
    """Attack: ``DB_PASS`` (the usual name in docker-compose files), ``GITHUB_PAT``, a rotation list
    ``OPENAI_API_KEYS``, ``APP_SECRETS``, ``SESSION_JWT`` were not secret by name, so a tool error quoting the
    value reached the model and events. Defence: these words are credential words (got through before)."""
    value = "cred-r13-" + name.lower().replace("_", "") + "-99887766"
    monkeypatch.setenv(name, value)

    def connect(host: str) -> str:
        """Connect."""
        raise RuntimeError(f"login to {host} failed with {value}")

    k = Kernel(entry_points=False)
    k.add_tool(connect)
    try:
        result = k.run_tool({"name": "connect", "arguments": {"host": "db"}})
    finally:
        k.close()
    assert "login to db failed" in str(result.content) and value not in str(result.content)


@pytest.mark.parametrize("name", ["db_pass", "github_pat", "api_keys", "client_secrets", "X-Session-JWT"])
def test_a_saved_spec_drops_a_credential_under_a_missed_name(name):
    """Attack: a spec's ``extra_body`` and ``headers`` carry ``db_pass`` / ``X-Session-JWT``: saved and shown
    specs kept them. Defence: ``public_data`` drops them as any secret name (got through before)."""
    from zagent.agentkit.secrets import public_data

    shown = json.dumps(public_data({"llm_config": {"extra_body": {name: "cred-r13-SAVED-1234567", "region": "eu"}}}))
    assert "cred-r13-SAVED-1234567" not in shown and "region" in shown


@pytest.mark.parametrize("name", ["max_tokens", "keys", "tokens", "bypass", "passenger", "compass", "patch",
                                  "max_output_tokens", "sort_keys", "secret_count", "pat", "pass", "primary_keys",
                                  "budget_tokens"])
def test_ordinary_names_near_the_new_words_stay(name):
    """Over-masking guard: counts, plain ``keys``/``tokens`` lists, words holding the new words, and ``pat`` (a
    pattern) or ``pass`` (a flag) alone stay public."""
    from zagent.agentkit.secrets import looks_secret

    assert not looks_secret(name)


# -- per-call request options ----------------------------------------------------------------------------------

CALL_KEY = "sk-r13-CALLKEY-0123456789abcdef"
NETWORK = ["openai:gpt-x", "openai-responses:gpt-x", "anthropic:claude-x", "ollama:llama"]


def _echoes_body(request):
    from tests.servers.loopback import Reply

    return Reply.json({"error": {"message": f"unrecognized request argument supplied: {request.body.decode()[:2000]}",
                                 "type": "invalid_request_error"}}, 400)


@pytest.mark.parametrize("provider", NETWORK)
@pytest.mark.parametrize("options", [{"extra_body": {"api_key": CALL_KEY}}, {"tenant_token": CALL_KEY},
                                     {"extra_body": {"metadata": {"user_secret": CALL_KEY.upper()}}}],
                         ids=["extra_body", "field", "nested-upper"])
def test_a_per_call_secret_option_echoed_in_an_error_is_masked(provider, options):
    """Attack: a multi-tenant app passes each user's credential per call (``llm.complete(text,
    extra_body={"api_key": ...})``); the server's 400 echoes the request body. The same option given when the
    model was made was masked (round seven); given per call, the client did not know it. Defence: on the error
    path the request's secret-named settings are masked too (got through before)."""
    from zagent import ZagentError

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"], entry_points=False)
    try:
        with LoopbackServer(_echoes_body) as server:
            llm = k.llm(provider, base_url=server.url, api_key="sk-other-0000000000", max_retries=0)
            with pytest.raises(ZagentError) as err:
                llm.complete("hi", **options)
    finally:
        k.close()
    assert "unrecognized request argument" in str(err.value)
    assert leaked(error_chain(err.value), CALL_KEY, CALL_KEY.upper()) == []


@pytest.mark.parametrize("provider", ["openai:gpt-x", "anthropic:claude-x"])
def test_a_per_call_secret_option_echoed_in_a_stream_error_event_is_masked(provider):
    """Attack: the same per-call option, the server answering 200 with an error event that quotes the request
    body, sent in 7-byte chunks. Defence: a streamed call's error is masked with its options too (got through
    before)."""
    from zagent import ZagentError
    from tests.servers.loopback import Reply
    from tests.servers.openai_server import sse

    def answer(request):
        quoted = f"bad field in {request.body.decode()[:1500]}"
        if provider.startswith("anthropic"):
            body = b"event: error\ndata: " + json.dumps({"type": "error", "error": {
                "type": "overloaded_error", "message": quoted}}).encode() + b"\n\n"
        else:
            body = sse({"error": {"message": quoted, "type": "server_error"}})
        return Reply(chunks=[body[i:i + 7] for i in range(0, len(body), 7)], content_type="text/event-stream")

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic"], entry_points=False)
    try:
        with LoopbackServer(answer) as server:
            llm = k.llm(provider, base_url=server.url, api_key="sk-other-0000000000", max_retries=0)
            with pytest.raises(ZagentError) as err:
                for _ in llm.stream("hi", extra_body={"api_key": CALL_KEY}):
                    pass
    finally:
        k.close()
    assert "bad field in" in str(err.value) and leaked(error_chain(err.value), CALL_KEY) == []


def test_a_recording_masks_a_per_call_secret_option_the_reply_echoes(tmp_path):
    """Attack: ``record:openai:...`` (a recording kept as a test fixture, committed) of a call given
    ``extra_body={"api_key": ...}``; the server's reply quotes the request body. The request's options were
    stripped, but the reply kept the value: the recorder masked only the client's own secrets. Defence: a call's
    own secret options are masked in its recorded line (got through before)."""
    from tests.servers.openai_server import completion as reply

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.offline"], entry_points=False)
    try:
        with LoopbackServer(lambda r: reply(f"you sent {r.body.decode()[-300:]}")) as server:
            llm = k.llm("record:openai:gpt-x", path=str(tmp_path / "rec.jsonl"), base_url=server.url,
                        api_key="sk-other-0000000000", max_retries=0)
            assert "you sent" in llm.complete("hi", extra_body={"api_key": CALL_KEY}).text
    finally:
        k.close()
    written = (tmp_path / "rec.jsonl").read_text()
    assert "you sent" in written and leaked(written, CALL_KEY) == []
    assert json.loads(written.splitlines()[0])["model"] == "openai:gpt-x"


def test_per_call_masking_leaves_the_conversation_and_tool_texts_alone():
    """Over-masking guard: a tool whose parameter is named ``password`` has a description; a 400 echoing the body
    keeps the description and the user's text (they are not settings)."""
    from zagent import ZagentError
    from zagent.types import ToolSpec

    tool = ToolSpec(name="login", description="Log in.", parameters={"type": "object", "properties": {
        "password": {"type": "string", "description": "the password the user typed in the form"}}})
    k = Kernel(["zagent.plugins.openai"], entry_points=False)
    try:
        with LoopbackServer(_echoes_body) as server:
            llm = k.llm("openai:gpt-x", base_url=server.url, api_key="sk-other-0000000000", max_retries=0)
            with pytest.raises(ZagentError) as err:
                llm.complete("please log me in as operator-r13-visible", tools=[tool], extra_body={"api_key": CALL_KEY})
    finally:
        k.close()
    text = str(err.value)
    assert "the password the user typed in the form" in text and "operator-r13-visible" in text
    assert CALL_KEY not in text


# -- composite specs kept by the objects built from them ----------------------------------------------------------

SPEC_KEY = "sk-r13-SPECKEY-0123456789abcdef"


def _speaker(name):
    return {"name": name, "description": "s", "prompt": "Answer: {task} {transcript}",
            "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}], "parse_mode": "str",
            "llm_config": {"model": "openai:gpt-x", "api_key": SPEC_KEY, "base_url": "http://127.0.0.1:9/v1",
                           "headers": {"X-Session-JWT": SPEC_KEY, "X-Region": "eu"}}}


@pytest.mark.parametrize("how", ["agents", "asdict", "selection"])
def test_a_group_chat_keeps_no_inline_speakers_key(how):
    """Attack: ``GroupChat.from_dict`` of a chat whose inline speakers (and LLM selector) hold their own
    ``api_key``; ``print(chat.agents)``, ``attrs.asdict(chat)`` (an app's debug dump) and ``chat.selection``
    showed it: the chat kept the spec dicts it was given after building its speakers. Defence: once built, it
    keeps their public form (got through before)."""
    import attrs

    from zagent.plugins.groupchat import GroupChat

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                "zagent.plugins.manager", "zagent.plugins.groupchat"], entry_points=False)
    try:
        chat = GroupChat.from_dict({"type": "groupchat", "name": "chat", "agents": [_speaker("S1"), _speaker("S2")],
                                    "selection": {"type": "llm", "llm_config": _speaker("x")["llm_config"]}}, k)
        shown = {"agents": repr(chat.agents), "asdict": repr(attrs.asdict(chat)),
                 "selection": repr(chat.selection)}[how]
        assert sorted(chat.speakers) == ["S1", "S2"]
    finally:
        k.close()
    assert leaked(shown, SPEC_KEY) == [] and "X-Region" in shown


@pytest.mark.xfail(strict=True, reason="open: a workflow graph keeps its inline agents' specs as given, since the "
                                       "executor builds them from the graph at every run (see the report)")
def test_a_workflow_graph_dumped_shows_no_inline_agents_key():
    """Open: ``msgspec.json.encode(graph)`` / ``msgspec.to_builtins(graph)`` / ``repr(graph.nodes[0].agents)`` of
    a graph whose inline agent holds its own ``api_key``. ``repr(graph)``, ``to_json`` and ``save`` are public;
    these generic dumps are not."""
    import msgspec

    from zagent.plugins.workflow import WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "task"}], "edges": [], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "task"}], "outputs": [{"name": "reply"}],
         "agents": [_speaker("A")]}]})
    shown = msgspec.json.encode(graph).decode() + repr(msgspec.to_builtins(graph)) + repr(graph.nodes[0].agents)
    assert leaked(shown, SPEC_KEY) == []


# -- held: the hook trace ------------------------------------------------------------------------------------------


def test_the_hook_trace_shows_no_credential_a_rail_injected(monkeypatch, capsys):
    """Held: ``ZAGENT_TRACE_HOOKS=1`` prints every hook call to stderr while a rail injects ``api_token`` from a
    vault and the tool returns; the trace names hooks, plugins and argument names only."""
    monkeypatch.setenv("ZAGENT_TRACE_HOOKS", "1")

    class Inject:
        def zagent_before_tool_call(self, call, ctx):
            return Rewrite({**call.arguments, "api_token": VAULT})

    def deploy(target: str, api_token: str = "") -> str:
        """Deploy."""
        return f"deployed {target}"

    k = Kernel(plugins=[Inject()], entry_points=False)
    k.add_tool(deploy)
    try:
        assert k.run_tool({"name": "deploy", "arguments": {"target": "prod"}}).content == "deployed prod"
    finally:
        k.close()
    err = capsys.readouterr().err
    assert "zagent_before_tool_call" in err and leaked(err, VAULT) == []
