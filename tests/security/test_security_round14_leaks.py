"""Round fourteen, secrets and leaks: the paths next to the ones defended (one attack per test).

Tried (each test's docstring says whether it got through before): a tool argument named like a secret
(``password``, ``api_token``, a nested ``Authorization`` header) that the run log and OTel mask by name, kept as
written in ReAct trajectories (the ``function_call`` turn and the step's ``parameters``, whole-run and live), in
``TrajectoryRecorder`` lines and in the skill curator's transcript of an older trajectory; an eval scorer spec
quoted whole in its ``ConfigError`` and a scorer's nested secret option in its label (the saved report); a secret
header given as bytes (echoed by a server, and in ``attrs.asdict`` of the provider); a user's own ``client=`` or
``client_factory=`` adding credential ``params``, cookies or a token header, echoed by a server; a model rail's
clean failure chained from an exception, with a note, or as an exception group holding the key; a strict kernel's
plugin failure with the key in a group, a note or a clean-message chain; a failed workflow's ``causes`` and
traceback; OTel content of a ``headers`` argument named by the header rule only (``X-Authentication``). Fixed in
round fifteen: a successful result echoing a credential a rail injected. Held: a tool's exception with the key in
its cause, note or group; a tool's URL defaults with credentials; per-call secret options in model events. The MCP
side is ``contrib/zagent-mcp/tests/test_mcp_round14_leaks.py``.
"""

import json
import sys

import pytest

from zagent import Kernel

PW = "pw-r14-ARGPASSWORD-27182818"
TOKEN = "tk-r14-ARGTOKEN-9988776655"
HDR = "hd-r14-BEARER-5544332211xyz"
KEY = "sk-r14-SCORERKEY-00112233445566"


def leaked(text, *secrets):
    return [s for s in (secrets or (PW, TOKEN, HDR)) if s in text or s[:16] in text]


def login(user: str, password: str, max_tokens: int = 0, page_token: str = "") -> str:
    """Log in."""
    return f"welcome {user}"


def call_api(url: str, options: dict) -> str:
    """Call an HTTP API with options (headers, auth)."""
    return "called"


LOGIN = {"id": "c1", "name": "login", "arguments": {"user": "ann", "password": PW, "max_tokens": 64,
                                                     "page_token": "cursor-r14-page-2"}}
NESTED = {"id": "c2", "name": "call_api", "arguments": {"url": "https://api.example/v1", "options": {
    "headers": {"Authorization": f"Bearer {HDR}", "X-Region": "eu"}, "auth": {"api_token": TOKEN, "user": "ann"}}}}


def _react(tmp_path, calls, **paths):
    from zagent.plugins.react import ReActLoop

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react"],
               entry_points=False)
    k.add_tool(login)
    k.add_tool(call_api)
    llm = k.llm("scripted:m", replies=[{"tool_calls": calls}, "done"])
    try:
        loop = ReActLoop(kernel=k, llm=llm, tools=["login", "call_api"],
                         **{key: str(tmp_path / name) for key, name in paths.items()})
        assert loop.run("go").status == "completed"
    finally:
        k.close()


# -- tool arguments named like secrets, in trajectories ------------------------------------------------------------


@pytest.mark.parametrize("key, name", [("trajectory_path", "t.jsonl"), ("live_trajectory_path", "live.jsonl")])
def test_a_trajectory_masks_a_secret_named_tool_argument(tmp_path, key, name):
    """Attack: the model calls ``login(user, password=...)``; the run log and OTel write ``"password": "***"``,
    but the trajectory (kept as training data, shared) held the password in the ``function_call`` turn and in
    the step's ``parameters``, whole-run and live. Defence: trajectory lines mask secret-named arguments by name,
    as the run log does (got through before)."""
    _react(tmp_path, [LOGIN], **{key: name})
    written = (tmp_path / name).read_text()
    assert "welcome ann" in written and leaked(written) == []
    assert all(json.loads(line) for line in written.splitlines())


@pytest.mark.parametrize("key, name", [("trajectory_path", "t.jsonl"), ("live_trajectory_path", "live.jsonl")])
def test_a_trajectory_masks_a_nested_secret_argument(tmp_path, key, name):
    """Attack: an HTTP tool's ``options`` argument holds ``headers.Authorization`` and ``auth.api_token``: the
    trajectory kept both, one level below the argument the model named. Defence: masked at any depth (got
    through before)."""
    _react(tmp_path, [NESTED], **{key: name})
    written = (tmp_path / name).read_text()
    assert "called" in written and leaked(written) == []


def test_a_trajectory_keeps_public_arguments_and_the_secret_ones_names(tmp_path):
    """Over-masking guard: ``user``, ``max_tokens``, a ``page_token`` cursor and a header's public neighbour stay
    as written; a secret argument keeps its name with ``***`` (the training data still shows the call's shape)."""
    from zagent.plugins.react import read_trajectories

    _react(tmp_path, [LOGIN, NESTED], trajectory_path="t.jsonl")
    [run] = list(read_trajectories(str(tmp_path / "t.jsonl")))
    calls = [json.loads(t["value"]) for t in run["conversations"] if t["from"] == "function_call"]
    assert calls[0]["arguments"] == {"user": "ann", "password": "***", "max_tokens": 64,
                                     "page_token": "cursor-r14-page-2"}
    assert calls[1]["arguments"]["options"]["headers"] == {"Authorization": "***", "X-Region": "eu"}
    [step] = [s for s in run["steps"] if s.get("tool") == "login"]
    assert step["parameters"]["password"] == "***" and step["parameters"]["user"] == "ann"


def test_the_trajectory_recorder_api_masks_a_secret_named_argument(tmp_path):
    """Attack: an app records its own agent with ``TrajectoryRecorder`` (Agent-Z's API): ``add_tool_call`` of a
    call with ``api_token`` and ``add_step`` of a step whose ``parameters`` hold ``password``. Round thirteen masked
    environment values in these lines, not arguments by name. Defence: both masked (got through before)."""
    from zagent.plugins.react import TrajectoryRecorder, read_live

    rec = TrajectoryRecorder(str(tmp_path / "r.jsonl"), agent="app")
    rec.initialize(task="deploy")
    rec.add_tool_call("deploy", {"target": "prod", "api_token": TOKEN})
    rec.add_step({"step": 1, "tool": "login", "parameters": {"user": "ann", "password": PW}})
    rec.save_trajectory("completed", final="ok")
    written = (tmp_path / "r.jsonl").read_text()
    assert "prod" in written and leaked(written) == []
    [run] = read_live(str(tmp_path / "r.jsonl"))
    assert run["final"] == "ok"


def test_the_skill_curators_transcript_masks_a_secret_named_argument():
    """Attack: ``zagent skills curate`` over a trajectory written before this round (its ``function_call`` turn
    holds ``password`` as the model sent it): the curator's model read the password and may copy it into a skill
    file. Defence: the transcript masks secret-named arguments of ``function_call`` turns (got through before)."""
    from zagent.plugins.skills.curator import render_trajectory

    record = {"id": "r1", "status": "completed", "steps": [], "conversations": [
        {"from": "human", "value": "log in"},
        {"from": "function_call", "value": json.dumps({"name": "login", "arguments": {"user": "ann", "password": PW},
                                                       "id": "c1"})},
        {"from": "function_call", "value": json.dumps({"name": "call_api", "arguments": NESTED["arguments"]})},
        {"from": "observation", "value": "welcome ann"}]}
    text = render_trajectory(record)
    assert "login" in text and "ann" in text and "X-Region" in text
    assert leaked(text) == []


# -- eval scorers ----------------------------------------------------------------------------------------------


def test_a_scorer_spec_without_a_name_does_not_quote_its_key():
    """Attack: a scorer spec with a typo (``{"nmae": "llm_judge", "api_key": ...}``, from ``evaluate(...,
    scorers=[...])`` or a cases file): its ``ConfigError`` quoted the whole spec, key and all, into the CLI's
    stderr and the app's logs. Defence: the error shows the spec with secret-named options masked (got through
    before)."""
    from zagent import ConfigError
    from zagent.plugins.evals.scorers import scorer_of

    k = Kernel(["zagent.plugins.evals"], entry_points=False)
    try:
        with pytest.raises(ConfigError) as err:
            scorer_of(k, {"nmae": "llm_judge", "api_key": KEY, "headers": {"Authorization": f"Bearer {KEY}"}})
    finally:
        k.close()
    assert "nmae" in str(err.value) and leaked(str(err.value), KEY) == []


def _webhook(options, kernel):
    def score(output, expected, case):
        return True
    return score


class WebhookScorer:
    """A plugin scorer posting each case to a grading service (its options hold the service's credentials)."""

    def zagent_register_scorers(self, register, kernel):
        register("webhook", _webhook)


def test_a_scorers_nested_secret_option_is_not_in_its_label_or_the_saved_report(tmp_path):
    """Attack: a plugin scorer given ``{"name": "webhook", "service": {"url": ..., "headers": {"Authorization":
    ...}}}``; a top-level ``api_key`` option showed as ``***`` in the label (round twelve), one nested in a mapping
    was printed whole, into the report, its saved file and ``--compare`` tables. Defence: the label masks
    secret-named options at any depth (got through before)."""
    from zagent.plugins.evals import evaluate

    class Echo:
        name = "echo"

        async def aexecute(self, *, inputs, ctx=None):
            return {"answer": "x"}

    k = Kernel(["zagent.plugins.evals", "zagent.plugins.batch", WebhookScorer()], entry_points=False)
    spec = {"name": "webhook", "service": {"url": "https://grader.example/v1", "headers": {
        "Authorization": f"Bearer {KEY}", "X-Team": "qa"}, "token": KEY}}
    try:
        report = evaluate(k, Echo(), [{"id": "c", "inputs": {"question": "q"}, "expected": "x"}], scorers=[spec])
    finally:
        k.close()
    report.save(str(tmp_path / "report.json"))
    written = (tmp_path / "report.json").read_text()
    [label] = report.cases[0].scores
    assert "grader.example" in label and "X-Team" in label
    assert leaked(label + written, KEY) == []


# -- secrets a provider sends that its masker did not know -------------------------------------------------------

BYTES_KEY = "hb-r14-BYTESHEADER-99001122"
CLIENT_SECRET = "cs-r14-CLIENTSECRET-11335577"
NETWORK = ["openai:gpt-x", "anthropic:claude-x", "ollama:llama"]


def _echoes_request(request):
    """A server whose 400 quotes the request's path and headers (a debugging proxy, a hostile server)."""
    from tests.servers.loopback import Reply

    return Reply.json({"error": {"message": f"bad request to {request.path} with headers "
                                            f"{json.dumps(dict(request.headers))}", "type": "invalid_request_error"}}, 400)


def _failed_call(model, **options):
    from zagent import ZagentError
    from tests.servers.loopback import LoopbackServer

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"], entry_points=False)
    try:
        with LoopbackServer(_echoes_request) as server:
            llm = k.llm(model, base_url=server.url, api_key="sk-other-0000000000", max_retries=0, **options)
            with pytest.raises(ZagentError) as err:
                llm.complete("hi")
    finally:
        k.close()
    return err.value, server.requests[0]


@pytest.mark.parametrize("model", NETWORK)
def test_a_secret_header_given_as_bytes_echoed_is_masked(model):
    """Attack: ``headers={"X-Upstream-Token": b"..."}`` (httpx takes bytes header values, an app reading a key
    file in binary): the same header given as text was masked when a server echoed it, as bytes it was not.
    Defence: a bytes value is a secret header's value like a text one (got through before)."""
    from .conftest import error_chain

    err, request = _failed_call(model, headers={"X-Upstream-Token": BYTES_KEY.encode(), "X-Region": b"eu"})
    assert request.headers["x-upstream-token"] == BYTES_KEY  # sent as given
    assert "bad request" in str(err) and leaked(error_chain(err), BYTES_KEY) == []


@pytest.mark.parametrize("model", NETWORK)
def test_a_provider_object_dumped_shows_no_bytes_header(model):
    """Attack: ``attrs.asdict(llm.llm)`` of a model given a secret header as bytes: text values were held as
    ``Secret`` (round twelve), bytes were kept as given. Defence: held as ``Secret`` too (got through before)."""
    import attrs

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.anthropic", "zagent.plugins.ollama"], entry_points=False)
    try:
        llm = k.llm(model, base_url="http://127.0.0.1:9/v1", api_key="sk-other-0000000000",
                    headers={"X-Upstream-Token": BYTES_KEY.encode(), "X-Region": "eu"})
        text = repr(attrs.asdict(llm.llm))
    finally:
        k.close()
    assert leaked(text, BYTES_KEY) == [] and "X-Region" in text


def _client(kind):
    import httpx

    return {"params": lambda: httpx.AsyncClient(params={"api_key": CLIENT_SECRET, "region": "eu"}),
            "cookies": lambda: httpx.AsyncClient(cookies={"session": CLIENT_SECRET}),
            "headers": lambda: httpx.AsyncClient(headers={"X-Gateway-Token": CLIENT_SECRET})}[kind]()


@pytest.mark.parametrize("model", NETWORK)
@pytest.mark.parametrize("kind", ["params", "cookies", "headers"])
def test_a_users_own_clients_credentials_echoed_are_masked(model, kind):
    """Attack: an app passes its own ``client=httpx.AsyncClient(params={"api_key": ...})`` (a gateway that
    takes its key in the query), or with a session cookie or a gateway token header; httpx sends them with every
    request, and the server's 400 quoted the request: the client's masker knew only ``api_key`` and ``headers=``.
    Defence: a user client's secret headers, credential-named params and cookies are masked too (got through
    before)."""
    from .conftest import error_chain

    err, request = _failed_call(model, client=_client(kind))
    assert CLIENT_SECRET in request.path + json.dumps(dict(request.headers))  # httpx sent it
    assert "bad request" in str(err) and leaked(error_chain(err), CLIENT_SECRET) == []


# -- what a traceback shows beyond the message: causes, notes, exception groups ------------------------------------

ENV_KEY = "sk-r14-ENVKEY-abcdef0123456789"


def _with_cause():
    try:
        raise ValueError(f"moderation API answered 401 for key {ENV_KEY}")
    except ValueError as exc:
        raise RuntimeError("prompt filter unreachable") from exc


def _with_context():
    try:
        raise ValueError(f"moderation API answered 401 for key {ENV_KEY}")
    except ValueError:
        raise RuntimeError("prompt filter unreachable")  # noqa: B904 -- the implicit context is the attack


def _with_note():
    exc = RuntimeError("prompt filter unreachable")
    exc.add_note(f"request: POST https://mod.example/v1 Authorization: Bearer {ENV_KEY}")
    raise exc


def _group():
    import builtins

    group = getattr(builtins, "ExceptionGroup", None) or pytest.skip("exception groups are Python 3.11's")
    raise group("prompt filters failed", [RuntimeError(f"moderation API refused key {ENV_KEY}")])


FAILURES = {"cause": _with_cause, "context": _with_context, "note": _with_note, "group": _group}


def _model_rail(hook, fail):
    class Before:
        def zagent_before_llm_call(self, request, ctx):
            fail()

    class After:
        def zagent_after_llm_call(self, request, response, ctx):
            fail()

    return {"before": Before, "after": After}[hook]()


def _everything_shown(err):
    import traceback

    from .conftest import error_chain

    return error_chain(err) + "".join(traceback.format_exception(err))


@pytest.mark.parametrize("hook", ["before", "after"])
@pytest.mark.parametrize("how", sorted(FAILURES))
def test_a_model_rails_failure_chains_no_secret_its_message_does_not_show(monkeypatch, hook, how):
    """Attack: a model rail fails with a clean message, but the secret is where only a traceback shows it: the
    exception it was raised ``from`` (or while handling), a note (``add_note``), or a member of an exception
    group (an ``asyncio.TaskGroup`` of filters). Round thirteen kept the cause unless its *message* held a secret,
    so the ``ToolBlocked`` an app logs with ``log.exception`` (or Sentry) showed the key. Defence: the cause is
    chained only when nothing its traceback shows holds a secret (got through before)."""
    from zagent import ToolBlocked

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    k = Kernel(["zagent.plugins.offline", _model_rail(hook, FAILURES[how])], entry_points=False)
    try:
        with pytest.raises(ToolBlocked) as err:
            k.llm("scripted:m", replies=["hi"]).complete("hi")
    finally:
        k.close()
    assert "failed" in str(err.value) and leaked(_everything_shown(err.value), ENV_KEY) == []


def test_a_model_rails_clean_failure_keeps_its_cause_chain(monkeypatch):
    """Over-masking guard: a rail failing ``from`` an exception that holds no secret keeps the whole chain (a
    developer debugging the rail sees both)."""
    from zagent import ToolBlocked

    def fail():
        try:
            raise ValueError("moderation API answered 503")
        except ValueError as exc:
            raise RuntimeError("prompt filter unreachable") from exc

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    k = Kernel(["zagent.plugins.offline", _model_rail("before", fail)], entry_points=False)
    try:
        with pytest.raises(ToolBlocked) as err:
            k.llm("scripted:m", replies=["hi"]).complete("hi")
    finally:
        k.close()
    assert isinstance(err.value.__cause__, RuntimeError)
    assert "moderation API answered 503" in str(err.value.__cause__.__cause__)


NEEDS_311 = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups and notes are Python 3.11+")


@pytest.mark.parametrize("source", [
    pytest.param("import os\nraise ExceptionGroup('setup failed', [RuntimeError('license server refused ' "
                 "+ os.environ['OPENAI_API_KEY'])])\n", marks=NEEDS_311),
    pytest.param("import os\ne = RuntimeError('license server unreachable')\n"
                 "e.add_note('key: ' + os.environ['OPENAI_API_KEY'])\nraise e\n", marks=NEEDS_311),
    "import os\ntry:\n    raise ValueError('license refused ' + os.environ['OPENAI_API_KEY'])\n"
    "except ValueError as exc:\n    raise RuntimeError('license server unreachable') from exc\n",
], ids=["group", "note", "cause"])
def test_a_strict_kernels_plugin_failure_hides_a_key_in_its_groups_notes_and_causes(monkeypatch, tmp_path,
                                                                                       forget_modules, source):
    """Attack: ``Kernel(plugins=[...], strict=True)`` with a plugin whose import fails with an exception group,
    a note, or a clean message raised from one quoting the key. Round thirteen masked the chain only when the
    ``PluginError``'s own message held a secret, and never notes or group members: the traceback showed the key.
    Defence: a strict kernel's raised chain is always masked, notes and groups included (got through before)."""
    import traceback

    from zagent.errors import PluginError

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    (tmp_path / "r14_failing_plugin.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_modules.append("r14_failing_plugin")
    with pytest.raises(PluginError) as err:
        Kernel(plugins=["r14_failing_plugin"], entry_points=False, strict=True)
    shown = _everything_shown(err.value) + "".join(traceback.format_exception(err.value))
    assert "license server" in shown or "setup failed" in shown
    assert leaked(shown, ENV_KEY) == []


class _VectorNode:
    """A workflow node agent whose vector store fails quoting the key (a library's error), or answers."""

    def __init__(self, name, fail):
        self.name, self.fail = name, fail

    async def aexecute(self, *, inputs, ctx=None):
        if self.fail:
            try:
                raise ConnectionError(f"vector DB refused key {ENV_KEY}")
            except ConnectionError as exc:
                raise RuntimeError(f"retrieval failed for key {ENV_KEY}") from exc
        return {"y": inputs["x"] + "!"}


def test_a_failed_workflows_causes_and_traceback_hide_an_environment_key(monkeypatch):
    """Attack: a workflow node fails with an exception quoting ``OPENAI_API_KEY`` (raised from another that does
    too); ``WorkFlowFailed``'s message was masked, but it was raised ``from`` the raw exception and kept every
    node's in ``causes``, so ``log.exception``, Sentry or ``print(err.causes)`` showed the key. Defence: the
    failures are masked before they are chained and kept, as a strict kernel's plugin failure is (got through
    before)."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed

    from .conftest import make_kernel, two_node_workflow

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    k = make_kernel()
    try:
        ex = WorkFlowExecutor(kernel=k)
        ex.manager.add_agent(_VectorNode("one", False))
        ex.manager.add_agent(_VectorNode("two", True))
        with pytest.raises(WorkFlowFailed) as err:
            ex.run(two_node_workflow(), {"x": "hi"})
    finally:
        k.close()
    shown = _everything_shown(err.value) + repr(err.value.causes)
    assert "retrieval failed for key ***" in shown and "vector DB refused key ***" in shown
    assert leaked(shown, ENV_KEY) == [] and isinstance(err.value.causes["b"], RuntimeError)


def test_otel_content_masks_a_header_secret_the_run_log_masks():
    """Attack: OTel content capture of a tool call whose ``headers`` argument holds ``X-Authentication`` and
    ``X-Gateway-Keyring`` (secret to the providers' header rule, ``looks_secret_header``, which the run log and
    trajectories use in a ``headers`` mapping; not to the plain name rule): the span kept them.
    Defence: OTel masks a ``headers`` mapping by the header rule too (got through before)."""
    content = pytest.importorskip("zagent_otel.content")

    shown = content.masked({"url": "https://api.example", "headers": {"X-Authentication": TOKEN,
                                                                       "X-Gateway-Keyring": HDR, "X-Region": "eu"}})
    assert shown["headers"]["X-Region"] == "eu" and leaked(json.dumps(shown), TOKEN, HDR) == []


@pytest.mark.parametrize("model", NETWORK)
@pytest.mark.parametrize("kind", ["params", "cookies", "headers"])
def test_a_client_factorys_credentials_echoed_are_masked(model, kind):
    """Attack: the same credentials added by the app's ``client_factory=`` (zagent passes the base URL, headers,
    timeouts; the factory adds a gateway's ``params``, a cookie or a header): the client is made on the first
    call, after the masker was made. Defence: the secrets of the client a factory returns are masked too (got
    through before)."""
    import httpx

    from .conftest import error_chain

    def factory(**kwargs):
        if kind == "headers":
            kwargs["headers"] = {**kwargs["headers"], "X-Gateway-Token": CLIENT_SECRET}
        extra = {"params": {"params": {"api_key": CLIENT_SECRET}}, "cookies": {"cookies": {"sid": CLIENT_SECRET}},
                 "headers": {}}[kind]
        return httpx.AsyncClient(**kwargs, **extra)

    err, request = _failed_call(model, client_factory=factory)
    assert CLIENT_SECRET in request.path + json.dumps(dict(request.headers))
    assert "bad request" in str(err) and leaked(error_chain(err), CLIENT_SECRET) == []


# -- held (regression guards for paths next to the ones fixed) ------------------------------------------------------


@pytest.mark.parametrize("how", sorted(FAILURES))
def test_a_tools_exception_with_the_key_in_its_cause_note_or_group_is_not_shown(monkeypatch, how):
    """Held: a tool raising with a clean message and the key in its cause, context, a note or an exception
    group's member: the result the model reads and the ``tool_end`` event's ``error`` describe the exception's
    own message only."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    events = []

    class Events:
        def zagent_event(self, event):
            if event.type == "tool_end":
                events.append(repr(dict(event.data)))

    def search(query: str) -> str:
        """Search."""
        FAILURES[how]()

    k = Kernel([Events()], entry_points=False)
    k.add_tool(search)
    try:
        result = k.run_tool({"name": "search", "arguments": {"query": "q"}})
    finally:
        k.close()
    assert result.state == "error" and "raised" in str(result.content)
    assert leaked(f"{result.content} {result.error} {events}", ENV_KEY) == []


def test_a_tools_url_default_with_credentials_is_not_offered():
    """Held: a tool whose (not secret-named) defaults are a database URL with a password and an endpoint with
    ``?api_key=``: the schema the model reads does not show them."""
    def query(sql: str, dsn: str = f"postgres://app:{PW}@db.example/prod",
              endpoint: str = f"https://api.example/v1?api_key={TOKEN}") -> str:
        """Run a query."""
        return "ok"

    k = Kernel(entry_points=False)
    k.add_tool(query)
    try:
        [tool] = [t for t in k.tools() if t.name == "query"]
    finally:
        k.close()
    assert "sql" in json.dumps(tool.parameters) and leaked(json.dumps(tool.parameters) + repr(tool)) == []


def test_per_call_secret_options_are_not_in_model_events():
    """Held: ``llm.complete(text, extra_body={"api_key": ...}, headers={"X-Api-Key": ...}, tenant_token=...)``:
    the ``llm_start``/``llm_end`` events (observers, the run log, OTel) carry none of them."""
    events = []

    class Events:
        def zagent_event(self, event):
            events.append(repr(dict(event.data)))

    k = Kernel(["zagent.plugins.offline", Events()], entry_points=False)
    try:
        k.llm("scripted:m", replies=["hi"]).complete("hi", extra_body={"api_key": TOKEN}, headers={"X-Api-Key": HDR},
                                                      tenant_token=PW)
    finally:
        k.close()
    assert len(events) == 2 and leaked(" ".join(events)) == []


def test_a_successful_result_echoing_a_credential_a_rail_injected_is_masked():
    """Attack (got through, round fifteen): a vault rail puts ``api_token`` into the call (the model never sees
    it); the HTTP tool succeeds and returns the request it sent, ``Authorization`` and all. A failed call's error
    masked the call's secret-named arguments (round thirteen); a successful result, which the model reads next, did
    not. Defence: a result of a call a rail's rewrite added secret-named values to has those values masked."""
    from zagent import Rewrite

    class Vault:
        def zagent_before_tool_call(self, call, ctx):
            return Rewrite({**call.arguments, "api_token": TOKEN})

    def post(url: str, api_token: str = "") -> str:
        """POST to a URL."""
        return f"200 OK; sent POST {url} with Authorization: Bearer {api_token}"

    k = Kernel([Vault()], entry_points=False)
    k.add_tool(post)
    try:
        result = k.run_tool({"name": "post", "arguments": {"url": "https://api.example/deploy"}})
    finally:
        k.close()
    assert result.state == "success" and "200 OK" in str(result.content)
    assert leaked(str(result.content), TOKEN) == []
