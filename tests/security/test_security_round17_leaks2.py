"""Round seventeen, leaks (second file): the app's settings (``Kernel(config=...)``, the run's ``agent_config`` and
``deps``) next to the paths round sixteen fixed, and a signed URL's parameter. One attack per test.

Attacks tried (31 cases in 20 tests, against the code of the round's start; all 31 GOT THROUGH, all fixed; plus two
guards: a plain deps field stays shown, a lazy proxy in the deps is never evaluated). The hex case was shown to get through by the masker itself (this file's first check of it
could not fail; it now checks the hex form):

- a tool failing quoting a deps token kept in ``__slots__`` (a class, ``@dataclass(slots=True)``), on an object
  inside the deps, as bytes, in a ``MappingProxyType``, as a pydantic ``SecretStr`` under a plain name, in the run's
  ``agent_config``, or as the tool's own secret-named default; quoted upper-cased, hex-dumped or cut short
- a tool whose result cannot be rendered (its ``repr`` fails quoting the config token)
- a tool rail (before, after) and a model rail (before, after) failing quoting the config or deps token: the text
  the model reads, ``ToolBlocked`` and its cause, the logged traceback
- a guardrail (the agent's own, a kernel hook) failing quoting the config token
- a provider plugin's model failing quoting the config key: events, the run log, the ReAct error (and, without
  event observers, the ``ProviderError`` whole and streamed)
- a workflow node's agent (config, deps), a group chat speaker, a batch item, an eval scorer failing quoting it
- a store, a model and a skills embedder failing (on close, on use) quoting it: the log line and traceback
- a wrong ``rails.approver`` object's ``repr`` (``bot_token=...``) in the ``ConfigError``
- an Azure Functions key (``?code=``) in a model's ``base_url``: ``repr``, ``llm_start``, the ``ProviderError``

MCP command lines (``docker -e NAME=TOKEN``, ``--header "Authorization: ..."``) are in
``contrib/zagent-mcp/tests/test_mcp_round17_leaks.py``.
"""

import dataclasses
import json
import types

import pytest

from zagent import Kernel, RunContext, ZagentError, hookimpl

pytestmark = pytest.mark.timeout(60)

TOKEN = "vt-r17-CONFIGTOKEN-7320508075"
DEPS = "gh-r17-DEPSTOKEN-2236067977"


def leaked(text, *secrets):
    """The secrets (or their first 16 characters, any case, or hex-encoded) that ``text`` shows."""
    low = text.lower()
    return [s for s in (secrets or (TOKEN, DEPS)) if s.lower() in low or s[:16].lower() in low
            or s[:16].encode().hex() in low]


class _VaultKeys:
    """The app's plugin declaring ``config["vault"]`` (the app's own setting)."""

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]


def _push_failing(k, how):
    """Register ``push``, failing with a 401 that quotes the deps token as ``how`` shows it."""
    def push(ctx: RunContext, branch: str) -> str:
        """Push ``branch`` with the run's token."""
        token = ctx.deps.token_of()
        shown = {"plain": token, "upper": token.upper(), "hex": token.encode().hex(), "head": token[:18] + "...",
                 "bytes": repr(token.encode())}[how]
        raise PermissionError(f"github answered 401 for {shown}")

    k.add_tool(push)


class _SlotDeps:
    """The app's deps object keeping its fields in ``__slots__`` (no ``__dict__``)."""

    __slots__ = ("repository", "github_token")

    def __init__(self):
        self.repository, self.github_token = "acme/app", DEPS

    def token_of(self):
        return self.github_token


@dataclasses.dataclass(slots=True)
class _SlotDataDeps:
    """``@dataclass(slots=True)`` deps, as type-checked apps write them."""

    repository: str = "acme/app"
    github_token: str = DEPS

    def token_of(self):
        return self.github_token


class _GitHub:
    def __init__(self):
        self.api_token = DEPS


class _NestedDeps:
    """The app's deps holding its clients (``deps.github.api_token``)."""

    def __init__(self):
        self.github = _GitHub()

    def token_of(self):
        return self.github.api_token


class _BytesDeps:
    """The token kept as bytes (as an HTTP client takes it)."""

    def __init__(self):
        self.github_token = DEPS.encode()

    def token_of(self):
        return self.github_token.decode()


class _PlainDeps:
    def __init__(self):
        self.github_token = DEPS

    def token_of(self):
        return self.github_token


def _tool_error(deps, how="plain"):
    k = Kernel(entry_points=False)
    _push_failing(k, how)
    try:
        result = k.run_tool({"name": "push", "arguments": {"branch": "main"}}, k.context(deps=deps))
    finally:
        k.close()
    assert result.state == "error" and "github answered 401 for" in result.content
    return result.content + (result.error or "")


class _ProxyDeps:
    """The settings behind a read-only ``MappingProxyType`` view (not a ``dict``)."""

    def __init__(self):
        self.settings = types.MappingProxyType({"github_token": DEPS})

    def token_of(self):
        return self.settings["github_token"]


@pytest.mark.parametrize("deps", [_SlotDeps, _SlotDataDeps, _NestedDeps, _BytesDeps, _ProxyDeps],
                         ids=lambda d: d.__name__)
def test_a_deps_token_in_another_shape_of_deps_is_masked_in_a_tool_error(deps):
    """Attack: the app's deps keep the GitHub token in ``__slots__`` (a plain class, ``@dataclass(slots=True)``),
    on a client object inside the deps object (``deps.github.api_token``), as bytes, or in a read-only
    ``MappingProxyType``; the tool fails quoting it. Round sixteen masked a deps mapping's (a ``dict``) and a deps
    object's ``__dict__`` fields only. Defence: the deps walk reads slots, the fields of objects inside the deps,
    bytes values and mapping proxies."""
    assert leaked(_tool_error(deps()), DEPS) == []


@pytest.mark.parametrize("how", ["upper", "hex", "head"])
def test_a_deps_token_quoted_in_another_form_is_masked_in_a_tool_error(how):
    """Attack: the tool's client quotes the deps token upper-cased, hex-dumped (a request dump) or cut short
    (``gh-r17-DEPSTOKEN-2...``); the config and deps masker masked only the value and its JSON/percent/base64 forms
    (environment secrets get ``mask_pieces`` too). Defence: a tool's error is masked for config and deps secrets as
    for the environment's (runs of 16 characters in any case, hex and other encodings decoded)."""
    assert leaked(_tool_error(_PlainDeps(), how), DEPS) == []


def test_a_tool_error_quoting_a_plain_deps_value_keeps_it():
    """Over-masking guard: an object inside the deps whose field is not secret-named (the repository) stays shown."""
    class Repo:
        def __init__(self):
            self.full_name = "acme-corp/zagent-mainline"

    class Deps:
        def __init__(self):
            self.repo, self.github_token = Repo(), DEPS

    k = Kernel(entry_points=False)

    def push(ctx: RunContext, branch: str) -> str:
        """Push ``branch``."""
        raise PermissionError(f"no access to {ctx.deps.repo.full_name}")

    k.add_tool(push)
    try:
        result = k.run_tool({"name": "push", "arguments": {"branch": "main"}}, k.context(deps=Deps()))
    finally:
        k.close()
    assert "no access to acme-corp/zagent-mainline" in result.content


def test_a_tool_result_whose_rendering_fails_quoting_the_config_token_is_masked():
    """Attack: a tool returns the vault's response object, whose ``repr`` fails quoting the token the app keeps in
    ``Kernel(config=...)``; the "returned ... rendering it raised" error the model reads described it with the
    environment's secrets masked only. Defence: described with the config's and deps' secrets too."""
    class Response:
        def __repr__(self):
            raise ValueError(f"session closed for token {TOKEN}")

    k = Kernel([_VaultKeys()], entry_points=False, config={"vault": {"token": TOKEN}})

    def read(path: str) -> object:
        """Read ``path`` from the vault."""
        return Response()

    k.add_tool(read)
    try:
        result = k.run_tool({"name": "read", "arguments": {"path": "a"}})
    finally:
        k.close()
    assert result.state == "error" and "session closed for token" in result.content
    assert leaked(result.content + (result.error or "")) == []


class _ToolRail:
    """The app's tool rail asking a policy service with the config token; the service refuses quoting it."""

    def __init__(self, when):
        self.when = when

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_before_tool_call(self, call, ctx):
        if self.when == "before":
            raise PermissionError(f"policy service refused token {ctx.kernel.config['vault']['token']}")
        return None

    @hookimpl
    def zagent_after_tool_call(self, call, result, ctx):
        if self.when == "after":
            raise PermissionError(f"audit service refused token {ctx.deps['audit_token']}")
        return None


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_tool_rail_failing_with_the_apps_token_is_masked(records, when):
    """Attack: the app's tool rail (before the call: config token; after it: deps token) fails quoting the token;
    the reason the model reads (``rail ... failed (...)``) and the logged traceback kept it: a rail's failure was
    masked with environment secrets and the call's arguments only. Defence: masked with the kernel config's and the
    run deps' secrets too, and the logged exception as well."""
    k = Kernel([_ToolRail(when)], entry_points=False, config={"vault": {"token": TOKEN}})

    def word_count(text: str) -> int:
        """Count words."""
        return len(text.split())

    k.add_tool(word_count)
    try:
        result = k.run_tool({"name": "word_count", "arguments": {"text": "a b"}},
                            k.context(deps={"audit_token": DEPS}))
    finally:
        k.close()
    shown = result.content + (result.error or "")
    assert result.state == "blocked" and "refused token ***" in shown
    assert leaked(shown) == [] and leaked(records.getvalue()) == []


class _ModelRail:
    """The app's model rail asking a policy service with the config token; the service refuses quoting it."""

    def __init__(self, when):
        self.when = when

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_before_llm_call(self, request, ctx):
        if self.when == "before":
            raise PermissionError(f"policy service refused token {ctx.kernel.config['vault']['token']}")
        return None

    @hookimpl
    def zagent_after_llm_call(self, request, response, ctx):
        if self.when == "after":
            raise PermissionError(f"audit service refused token {ctx.deps['audit_token']}")
        return None


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_model_rail_failing_with_the_apps_token_is_masked(records, when):
    """Attack: the app's model rail (before the call: config token; after it: deps token) fails quoting it; the
    ``ToolBlocked`` the app gets (its message, its chained cause) and the logged traceback kept it. Defence: masked
    with the kernel config's and run deps' secrets, the cause chained only when it shows none."""
    from .conftest import error_chain

    k = Kernel(["zagent.plugins.offline", _ModelRail(when)], entry_points=False, config={"vault": {"token": TOKEN}})
    try:
        llm = k.llm("scripted:m", replies=["hello"])
        with pytest.raises(ZagentError) as err:
            llm.complete("hi", ctx=k.context(deps={"audit_token": DEPS}))
    finally:
        k.close()
    assert "refused token ***" in str(err.value)
    assert leaked(error_chain(err.value)) == [] and leaked(records.getvalue()) == []


QA = {"type": "customize", "name": "QA", "description": "answers", "prompt": "Answer: {question}",
      "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "string"}],
      "parse_mode": "str"}


class _ModerationHook:
    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_check_input(self, agent, inputs, ctx):
        raise PermissionError(f"moderation refused token {ctx.kernel.config['vault']['token']}")


@pytest.mark.parametrize("how", ["own", "hook"])
def test_a_failing_guardrail_does_not_show_the_config_token(how):
    """Attack: an input guardrail (the agent's own, or a kernel hook) calls a moderation service with the token
    the app keeps in ``Kernel(config=...)``; it fails quoting it; ``GuardrailTripped`` (message, chained cause)
    kept it: round sixteen masked environment secrets only. Defence: the config's and deps' secrets are masked too."""
    from zagent.errors import GuardrailTripped

    from .conftest import error_chain

    def moderate(inputs, ctx):
        raise PermissionError(f"moderation refused token {ctx.kernel.config['vault']['token']}")

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", _VaultKeys()],
               entry_points=False, config={"vault": {"token": TOKEN}})
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:m", replies=["4"])
        if how == "own":
            agent.guardrails = {"input": [moderate]}
        else:
            k.add_plugin(_ModerationHook(), name="moderation")
        with pytest.raises(GuardrailTripped) as err:
            agent(question="2+2?")
    finally:
        k.close()
    assert "moderation refused token ***" in str(err.value)
    assert leaked(error_chain(err.value)) == []


class _Events:
    """Every event's type and data, as an app's handler, the run log or OTel see them; declares ``vault``."""

    def __init__(self, seen):
        self.seen = seen

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_event(self, event):
        self.seen.append({"type": event.type, **dict(event.data)})


class _VaultAgent:
    """The app's Python agent (a workflow node's, a batch's): its vault client fails quoting the token it used."""

    def __init__(self, name, where, kernel=None):
        self.name, self.where, self.kernel = name, where, kernel

    async def aexecute(self, *, inputs, ctx=None):
        kernel = self.kernel or ctx.kernel
        token = ctx.deps["vault_token"] if self.where == "deps" else kernel.config["vault"]["token"]
        raise PermissionError(f"vault refused token {token}")


@pytest.mark.parametrize("where", ["config", "deps"])
def test_a_workflow_node_failing_with_the_apps_token_is_masked(tmp_path, where):
    """Attack: a workflow node's agent (the app's Python agent) fails quoting the vault token from
    ``Kernel(config=...)`` or the run's ``deps``; the node's error went to the ``node_end`` and ``workflow_end``
    events, the trace, the checkpoint file (SQLite) and ``WorkFlowFailed`` (message and chained cause) with
    environment secrets masked only. Defence: a node's failure is masked with the config's and deps' secrets."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed, WorkFlowGraph

    from .conftest import PLUGINS, error_chain

    events = []
    db = tmp_path / "runs.db"
    k = Kernel([*PLUGINS, _Events(events)], entry_points=False, config={"vault": {"token": TOKEN}})
    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}], "agents": ["v"]}]})
    try:
        ex = WorkFlowExecutor(kernel=k, checkpoints=str(db))
        ex.manager.add_agent(_VaultAgent("v", where))
        with pytest.raises(WorkFlowFailed) as err:
            ex.run(graph, {"x": "hi"}, run_id="wf", deps={"vault_token": DEPS})
    finally:
        k.close()
    assert "vault refused token ***" in str(err.value)
    stored = db.read_bytes().decode("latin-1")
    assert leaked(error_chain(err.value)) == [] and leaked(json.dumps(events, default=repr)) == []
    assert leaked(stored) == []


def test_a_batch_item_failing_with_the_config_token_is_masked_in_the_results_file(tmp_path):
    """Attack: ``Kernel.batch`` of the app's Python agent, whose vault client fails quoting the token the app keeps
    in ``Kernel(config=...)``; the results file (kept and shared: ``zagent batch`` masks environment secrets in
    it) recorded the error message as it was. Defence: a failed item's message is masked with the kernel config's
    secrets too."""
    out = tmp_path / "results.jsonl"
    from .conftest import PLUGINS

    k = Kernel([*PLUGINS, "zagent.plugins.batch", _VaultKeys()], entry_points=False, config={"vault": {"token": TOKEN}})
    try:
        report = k.batch(_VaultAgent("v", "config", k), [{"x": "1"}], out=str(out))
    finally:
        k.close()
    written = out.read_text()
    assert report.summary.failed == 1 and "vault refused token ***" in written
    assert leaked(written) == []


def test_a_provider_plugins_error_quoting_its_config_key_is_masked_in_events_and_the_run_log(tmp_path):
    """Attack: a provider plugin reads its key from ``Kernel(config={"vault": {"token": ...}})``; its client fails
    quoting it (here the scripted model raising that ``ProviderError``, its ``body`` too); the ``llm_end`` and
    ``run_end`` events (the run log's rows, OTel spans) and the error the ReAct run raised kept it: event errors were masked with
    environment secrets only. Defence: a failed model call's and run's error are masked with the kernel config's
    and the run deps' secrets too."""
    from zagent.errors import ProviderError
    from zagent.plugins.react import ReActLoop

    from .conftest import PLUGINS, error_chain

    events = []
    k = Kernel([*PLUGINS, "zagent.plugins.runlog", _Events(events)], entry_points=False,
               config={"vault": {"token": TOKEN}, "log": {"path": str(tmp_path / "runs.db")}})
    try:
        llm = k.llm("scripted:m", replies=[ProviderError(f"acme answered 401 for key {TOKEN}", provider="acme",
                                                         body=f'{{"error": "bad key {TOKEN}"}}')])
        with pytest.raises(ProviderError) as err:
            ReActLoop(kernel=k, llm=llm, tools=[], deps={"vault_token": DEPS}).run("go")
    finally:
        k.close()
    shown = json.dumps(events, default=repr)
    assert "acme answered 401 for key" in shown
    assert leaked(shown) == [] and leaked(error_chain(err.value)) == []
    assert leaked((tmp_path / "runs.db").read_bytes().decode("latin-1")) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_provider_plugins_error_quoting_its_config_key_is_masked_without_events(stream):
    """Attack: the same provider plugin failing on a kernel with no event observer (no run log), called whole and
    streamed; the ``ProviderError`` the app gets (and the CLI prints, masking environment secrets only) kept the
    config key. Defence: masked in place where the call fails, whether or not events are sent."""
    from zagent.errors import ProviderError

    from .conftest import error_chain

    k = Kernel(["zagent.plugins.offline", _VaultKeys()], entry_points=False, config={"vault": {"token": TOKEN}})
    try:
        llm = k.llm("scripted:m", replies=[ProviderError(f"acme answered 401 for key {TOKEN}", provider="acme")])
        with pytest.raises(ProviderError) as err:
            if stream:
                for _ in llm.stream("hi"):
                    pass
            else:
                llm.complete("hi")
    finally:
        k.close()
    assert "acme answered 401 for key ***" in str(err.value) and leaked(error_chain(err.value)) == []


def test_a_group_chat_speaker_failing_with_the_config_token_is_masked(tmp_path):
    """Attack: a group chat speaker (the app's Python speaker) fails quoting the vault token from
    ``Kernel(config=...)``; the chat's error (``groupchat_end`` event, the checkpoint in SQLite, the error raised)
    was masked with environment secrets only. Defence: masked with the config's and deps' secrets too."""
    from zagent.plugins.groupchat import GroupChat

    from .conftest import PLUGINS, error_chain

    events = []
    k = Kernel([*PLUGINS, _Events(events)], entry_points=False, config={"vault": {"token": TOKEN}})

    class Speaker:
        name, description = "A", "the vault reader"

        def speak(self, turn):
            raise PermissionError(f"vault refused token {k.config['vault']['token']}")

    db = tmp_path / "chat.db"
    try:
        store = k.memory("checkpoints", path=str(db), keep_last=None)
        chat = GroupChat(kernel=k, agents=[Speaker()], termination={"max_rounds": 2}, checkpoints=store)
        with pytest.raises(Exception) as err:
            chat.run("go", run_id="c1")
    finally:
        k.close()
    shown = json.dumps(events, default=repr)
    assert "vault refused token ***" in shown
    assert leaked(shown) == [] and leaked(error_chain(err.value)) == []
    assert leaked(db.read_bytes().decode("latin-1")) == []


@dataclasses.dataclass
class _VaultStore:
    """A memory store of the app's plugin (its ``repr`` shows its fields): it logs out of the vault on close,
    which fails quoting the token."""

    session_token: str

    def close(self):
        raise ConnectionError(f"vault logout refused token {self.session_token}")


class _VaultStores:
    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_register_memory(self, register, kernel):
        register("vaultstore", lambda **options: _VaultStore(kernel.config["vault"]["token"]))


def test_a_store_failing_to_close_with_the_config_token_is_masked_in_the_log(records):
    """Attack: a memory store of the app's plugin (``k.memory("vaultstore")``, closed by the kernel) fails on
    close quoting the vault token from ``Kernel(config=...)``; the kernel logged the traceback and the store's
    ``repr`` as they were (round sixteen masked a failing ``zagent_kernel_close`` hook, not a store). Defence:
    both masked with the kernel config's secrets, like that hook."""
    k = Kernel([_VaultStores()], entry_points=False, config={"vault": {"token": TOKEN}})
    store = k.memory("vaultstore")  # the app keeps it (the kernel closes the stores still alive)
    k.close()
    assert isinstance(store, _VaultStore)
    assert "vault logout refused token ***" in records.getvalue() and leaked(records.getvalue()) == []


@dataclasses.dataclass
class _VaultEmbedder:
    """The app's embedder plugin (a dataclass: its ``repr`` shows its fields): its service refuses the token the
    app keeps in ``Kernel(config=...)``."""

    api_token: str

    async def aembed(self, texts):
        raise PermissionError(f"embedding service refused token {self.api_token}")


class _VaultEmbedders:
    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_register_embedders(self, register, kernel):
        register("vault", lambda **options: _VaultEmbedder(kernel.config["vault"]["token"]))


def test_a_failing_embedder_quoting_the_config_token_is_masked_in_the_skills_log(tmp_path, records):
    """Attack: skills are matched with the app's embedder plugin, whose service fails quoting the token from
    ``Kernel(config=...)``; matching falls back to keywords and logs the embedder's traceback (a warning, on every
    run), and the embedder's ``repr`` (``_VaultEmbedder(api_token='...')``), as they were. Defence: both are
    masked with the kernel config's secrets before they are logged."""
    from zagent.plugins.skills import skills_for

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.skills", _VaultEmbedders()], entry_points=False,
               config={"vault": {"token": TOKEN}, "skills": {"folder": str(tmp_path / "skills")}})
    try:
        skills = skills_for(k)
        skills.registry.register({"name": "greet-guests", "description": "Welcome a guest by name",
                                  "when_to_use": "the user wants a greeting", "instructions": "Say hello."})
        found = skills.match("please greet the guest")
    finally:
        k.close()
    assert found is not None and found.method == "keyword"
    assert "embedding service refused token ***" in records.getvalue() and leaked(records.getvalue()) == []


def _vault_model():
    from zagent.plugins.offline.scripted import ScriptedLLM

    class VaultLLM(ScriptedLLM):
        """A provider plugin's model: it revokes its session on close, which fails quoting the config token."""

        async def aclose(self):
            raise ConnectionError(f"session revoke refused token {self.token}")

    return VaultLLM


class _VaultModels:
    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_register_providers(self, register, kernel):
        def build(model, **options):
            llm = _vault_model().build(model, **options)
            object.__setattr__(llm, "token", kernel.config["vault"]["token"])
            return llm

        register("vaultllm", build)


def test_a_model_failing_to_close_with_the_config_token_is_masked_in_the_log(records):
    """Attack: a provider plugin's model (made by ``k.llm("vaultllm:m")``, closed by the kernel) fails on close
    quoting the token the plugin read from ``Kernel(config=...)``; the kernel logged the traceback as it was.
    Defence: masked with the kernel config's secrets, as a failing store or ``zagent_kernel_close`` is."""
    k = Kernel(["zagent.plugins.offline", _VaultModels()], entry_points=False, config={"vault": {"token": TOKEN}})
    k.llm("vaultllm:m", replies=["hi"]).complete("hello")
    k.close()
    assert "session revoke refused token ***" in records.getvalue() and leaked(records.getvalue()) == []


@dataclasses.dataclass
class _Slack:
    """The app's Slack approver, missing its ``__call__``."""

    channel: str
    bot_token: str


def test_a_wrong_approver_objects_token_is_masked_in_the_config_error():
    """Attack: the app gives ``Kernel(config={"rails": {"approver": SlackApprover(channel, bot_token)}})`` an
    approver object that is not callable (a dataclass without ``__call__``); the ``ConfigError`` naming the wrong
    setting quoted its ``repr`` (``bot_token='xoxb-...'``, cut at 60 characters: the head of the token). Defence:
    the value's secret-named fields are masked in the quoted ``repr`` before it is cut."""
    with pytest.raises(ZagentError) as err:
        Kernel(["zagent.plugins.rails"], entry_points=False, config={"rails": {"approver": _Slack("#", TOKEN)}}).close()
    assert "approver must be" in str(err.value) and "bot_token='***'" in str(err.value)
    assert leaked(str(err.value)) == []


def test_a_pydantic_secret_in_the_deps_is_masked_in_a_tool_error():
    """Attack: the app's deps are pydantic settings (``pydantic-settings``) declaring the token as ``SecretStr``
    under a name that does not say it is one (``vault: SecretStr``); the tool fails quoting
    ``deps.vault.get_secret_value()``. A ``zagent.Secret`` is masked whatever its name; pydantic's was not.
    Defence: a ``SecretStr``/``SecretBytes`` in the config or deps is read as a secret, whatever its name."""
    pydantic = pytest.importorskip("pydantic")

    class Settings(pydantic.BaseModel):
        vault: pydantic.SecretStr
        region: str = "eu-west-1"

    k = Kernel(entry_points=False)

    def read(ctx: RunContext, path: str) -> str:
        """Read ``path`` from the vault."""
        raise PermissionError(f"vault in {ctx.deps.region} refused {ctx.deps.vault.get_secret_value()}")

    k.add_tool(read)
    try:
        result = k.run_tool({"name": "read", "arguments": {"path": "a"}}, k.context(deps=Settings(vault=DEPS)))
    finally:
        k.close()
    assert "vault in eu-west-1 refused ***" in result.content and leaked(result.content) == []


def test_a_scorer_failing_with_the_config_token_is_masked_in_the_eval_report(tmp_path):
    """Attack: an eval's scorer (the app's function, grading through a service with the token the app keeps in
    ``Kernel(config=...)``) fails quoting it; the case's score ``reason`` ("the scorer failed: ...", shown by
    ``EvalReport.render`` and saved by ``EvalReport.save``, a file kept and shared) masked environment secrets
    only. Defence: a scorer's failure is masked with the kernel config's secrets too."""
    from zagent.plugins.evals import evaluate

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.batch",
                "zagent.plugins.evals", _VaultKeys()], entry_points=False, config={"vault": {"token": TOKEN}})

    def graded(output, expected, case):
        raise PermissionError(f"grading service refused token {k.config['vault']['token']}")

    try:
        agent = k.agent({**QA, "name": "QA"})
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        report = evaluate(k, agent, [{"id": "paris", "inputs": {"question": "capital?"}, "expected": "Paris"}],
                          scorers=[graded], concurrency=1)
        report.save(tmp_path / "report.json")
    finally:
        k.close()
    saved = (tmp_path / "report.json").read_text()
    assert "grading service refused token ***" in saved
    assert leaked(saved + report.render()) == []


FUNCTION_KEY = "AzFn-r17-FUNCTIONKEY-0123456789"


def test_an_azure_function_key_in_the_base_urls_query_is_masked():
    """Attack: the model is served behind Azure Functions, whose key goes in the query as ``?code=<key>``
    (``base_url="https://fn.azurewebsites.net/api?code=..."``); ``?key=``, ``?api-key=``, ``?sig=`` were masked,
    ``?code=`` not: the model's ``repr``, the ``llm_start`` event's ``server``, and the ``ProviderError`` (also a
    server echoing the request path) showed the key. Defence: a parameter named ``code`` (alone: not
    ``country-code``) is a credential, as an OAuth authorization code is too."""
    from tests.servers.loopback import LoopbackServer, Reply

    events = []
    k = Kernel(["zagent.plugins.openai", _Events(events)], entry_points=False)
    try:
        with LoopbackServer(lambda r: Reply.json({"error": {"message": f"bad request to {r.path}"}}, status=400)) \
                as server:
            llm = k.llm("openai:gpt-x", base_url=f"{server.url}/api?code={FUNCTION_KEY}&region=eu",
                        api_key="dummy-key-1234", max_retries=0)
            shown = repr(llm)
            with pytest.raises(ZagentError) as err:
                llm.complete("hi")
        assert FUNCTION_KEY in server.requests[0].path  # the server got it
    finally:
        k.close()
    from .conftest import error_chain

    shown += error_chain(err.value) + json.dumps(events, default=repr)
    assert "code=***" in shown and "region=eu" in shown and leaked(shown, FUNCTION_KEY) == []


def test_a_tool_failing_with_an_agent_config_token_is_masked():
    """Attack: a plugin's per-agent setting (``agent_config={"vault": {"token": ...}}``, read by the app's
    plugin like a ``Kernel(config=...)`` key) holds the token its tool uses; the tool fails quoting it. Round
    sixteen masked the kernel's config and the run's deps, not the run's ``agent_config``. Defence: the run's
    ``agent_config`` is read for secrets too."""
    k = Kernel([_VaultKeys()], entry_points=False)

    def read(ctx: RunContext, path: str) -> str:
        """Read ``path`` from the vault."""
        raise PermissionError(f"vault refused token {ctx.agent_config['vault']['token']}")

    k.add_tool(read)
    try:
        ctx = k.context(agent="reader", agent_config={"vault": {"token": TOKEN}})
        result = k.run_tool({"name": "read", "arguments": {"path": "a"}}, ctx)
    finally:
        k.close()
    assert "vault refused token ***" in result.content and leaked(result.content + (result.error or "")) == []


DEFAULT = "vt-r17-DEFAULTTOKEN-99887766"


def test_a_tool_failing_with_its_secret_default_is_masked():
    """Attack: a tool takes its credential as a secret-named parameter with a default (``api_token: str =
    VAULT_TOKEN``, which round sixteen hid from approval questions); the model leaves it out, the tool fails
    quoting it, and the error the model reads kept it: only the arguments the call carried were masked.
    Defence: the arguments the tool ran with (defaults filled in) are masked too."""
    k = Kernel(entry_points=False)

    def fetch(url: str, api_token: str = DEFAULT) -> str:
        """Fetch ``url``."""
        raise PermissionError(f"401 from {url} for {api_token}")

    k.add_tool(fetch)
    try:
        result = k.run_tool({"name": "fetch", "arguments": {"url": "https://example.com"}})
    finally:
        k.close()
    assert "401 from https://example.com for ***" in result.content and leaked(result.content, DEFAULT) == []


class _Lazy:
    """A lazy proxy (as Django's ``SimpleLazyObject`` is): any attribute read evaluates it, here failing."""

    def __getattribute__(self, name):
        raise RuntimeError("the lazy object was evaluated")


def test_a_lazy_proxy_in_the_deps_is_not_evaluated_while_a_tool_error_is_masked():
    """Guard for the deps walk above: deps holding a lazy proxy beside the token; the walk must neither run the
    proxy (no ``__getattribute__``/``__class__`` read) nor give up: the tool's error still names what failed,
    the token masked."""
    k = Kernel(entry_points=False)

    def push(ctx: RunContext, branch: str) -> str:
        """Push ``branch``."""
        raise PermissionError(f"401 for {ctx.deps['github_token']}")

    k.add_tool(push)
    try:
        result = k.run_tool({"name": "push", "arguments": {"branch": "main"}},
                            k.context(deps={"user": _Lazy(), "github_token": DEPS}))
    finally:
        k.close()
    assert "PermissionError: 401 for ***" in result.content and leaked(result.content) == []
