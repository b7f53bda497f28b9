"""Round sixteen, wave two, secrets and leaks: outputs next to the ones wave one fixed (one attack per test).

Attacks tried (15, against the code of wave two's start; 11 got through, all fixed; 4 held; 1 over-masking guard):

- a plugin whose registration hook fails quoting the token the app gave it in ``Kernel(config=...)``: in
  ``Kernel.problems`` (``zagent plugins``), the kernel's warning log record and the ``ConfigError`` naming the
  plugins that failed: GOT THROUGH -- fixed (``_hooks.loading`` masks the kernel config's secrets too)
- the same on a strict kernel (the ``PluginError``'s chained cause), and in the ``ConfigError`` for the config key
  only the failed plugin read: GOT THROUGH -- fixed
- the app's plugin failing at run time quoting that token (an event observer, ``zagent_run_end``,
  ``zagent_kernel_close``), logged with its traceback: GOT THROUGH -- fixed (``_trust.secrets.config_masker``)
- a tool failing quoting the token the app keeps in ``Kernel(config=...)`` or passes as the run's ``deps`` (a
  mapping, an object with a ``github_token`` field, a ``Secret``): the error the model reads, the result, the
  ``tool_end`` event: GOT THROUGH -- fixed (``_tools.results.describe`` masks them, on the failure path)
- ``repr()`` of an ``LLMRequest`` (what a model rail logs) carrying a call's own ``extra_body={"api_key": ...}``
  and ``headers={"Authorization": ...}``: GOT THROUGH -- fixed (``LLMRequest.__repr__`` masks secret-named options)
- ``ZAGENT_TRACE_HOOKS=1`` tracing a model rail that sees such a request: held (names of kwargs only)
- a retried call to a server that answers 500 quoting the request's headers, its base URL carrying ``?key=``, the
  retry warnings at DEBUG and the final error: held
- a ``fallback:`` chain of two servers with a key each, both failing quoting the key they got, the chain's error
  naming each model's failure: held
- a ``Secret`` formatted with a format spec (``f"{s:>40}"``): held (a ``TypeError``, no value)
"""

import json
import traceback

import pytest

from zagent import Kernel, LLMRequest, Message, RunContext, Secret, ZagentError, hookimpl

pytestmark = pytest.mark.timeout(60)

TOKEN = "vt-r16b-CONFIGTOKEN-4669201609"
KEY = "sk-r16b-MAINKEY-1414213562"


def leaked(text, *secrets):
    return [s for s in (secrets or (TOKEN, KEY)) if s in text or s[:16] in text]


class _Vault:
    """A plugin reading ``config["vault"]``, whose client refuses the token quoting it."""

    @hookimpl
    def zagent_register_tools(self, register, kernel):
        raise ValueError(f"vault refused token {kernel.config['vault']['token']}")


class _VaultKeys:
    """The app's plugin that declares ``config["vault"]`` (so the key is read when ``_Vault`` has failed)."""

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]


def test_a_plugin_failing_with_its_config_token_is_masked_in_problems_and_logs(records):
    """Attack (got through): a plugin's registration hook fails quoting the token the app gave it in
    ``Kernel(config={"vault": {"token": ...}})``; ``Kernel.problems`` (what ``zagent plugins`` prints) and the
    kernel's warning record kept it (only environment secrets were masked). Defence: a plugin failure is masked
    with the secret-named values of the kernel's config as well."""
    k = Kernel(entry_points=False, plugins=[_VaultKeys(), _Vault()], config={"vault": {"token": TOKEN}})
    try:
        shown = repr(k.problems)
    finally:
        k.close()
    assert "vault refused token ***" in shown
    assert leaked(shown) == [] and leaked(records.getvalue()) == []


def test_a_strict_kernel_does_not_chain_a_plugins_config_token():
    """Attack (got through): the same plugin on a strict kernel; the ``PluginError`` masked its message with the
    environment's secrets only and chained the ``ValueError`` quoting the config token (a traceback, the CLI).
    Defence: the message and the chained causes are masked with the config's secrets too."""
    from .conftest import error_chain

    with pytest.raises(ZagentError) as err:
        Kernel(entry_points=False, plugins=[_VaultKeys(), _Vault()], config={"vault": {"token": TOKEN}}, strict=True)
    shown = error_chain(err.value) + "".join(traceback.format_exception(err.value))
    assert "vault refused token" in shown and leaked(shown) == []


def test_the_unread_config_error_does_not_quote_a_failed_plugins_config_token():
    """Attack (got through): the failed plugin was the only one reading ``config["vault"]``; the ``ConfigError``
    saying the key is read by nothing lists the plugins that failed with their messages (the token in one).
    Defence: it lists the masked problems."""
    with pytest.raises(ZagentError) as err:
        Kernel(entry_points=False, plugins=[_Vault()], config={"vault": {"token": TOKEN}})
    assert "plugins that failed" in str(err.value) and "vault refused token ***" in str(err.value)
    assert leaked(str(err.value)) == []


class _Billing:
    """The app's billing plugin: reads ``config["vault"]``; its exporter, run end and close hooks fail quoting
    the token."""

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_event(self, event):
        raise RuntimeError(f"exporter got 401 for token {TOKEN}")

    @hookimpl
    def zagent_run_end(self, result, ctx):
        raise RuntimeError(f"billing refused token {TOKEN}")

    @hookimpl
    def zagent_kernel_close(self, kernel):
        raise RuntimeError(f"vault logout failed for token {TOKEN}")


def test_runtime_hook_failures_quoting_a_config_token_are_masked_in_the_log(records):
    """Attack (got through): the app's plugin fails at run time (an event observer, ``zagent_run_end``,
    ``zagent_kernel_close``) quoting the token the app gave it in ``Kernel(config=...)``; the kernel logs each
    with ``log.exception`` and the ``zagent`` loggers masked environment secrets only, so an app's log file kept
    the token in three tracebacks. Defence: before logging, the exception is masked with the kernel config's
    secrets (``_trust.secrets.config_masker``, on the failure path only)."""
    from zagent.plugins.react import ReActLoop

    k = Kernel(["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
                _Billing()], entry_points=False, config={"vault": {"token": TOKEN}})
    try:
        ReActLoop(kernel=k, llm=k.llm("scripted:m", replies=["done"]), tools=[]).run("go")
    finally:
        k.close()
    written = records.getvalue()
    for said in ("exporter got 401 for token ***", "billing refused token ***", "vault logout failed for token ***"):
        assert said in written
    assert leaked(written) == []


class _Events:
    """Collects the kernel's events; declares ``config["vault"]`` (the app's own setting)."""

    def __init__(self, events):
        self.events = events

    @hookimpl
    def zagent_config_keys(self):
        return ["vault"]

    @hookimpl
    def zagent_event(self, event):
        self.events.append(event)


def test_a_tool_failing_with_the_kernels_config_token_is_masked_for_the_model_and_events():
    """Attack (got through): a tool calls the vault with the token the app keeps in ``Kernel(config=...)``; the
    vault refuses quoting it; the tool's error (the text the model reads and sends to its server, the result's
    ``error``, the ``tool_end`` event) kept it: only environment secrets and the call's own secret-named arguments
    were masked. Defence: a tool's exception is described with the kernel config's secrets masked too."""
    events = []
    k = Kernel([_Events(events)], entry_points=False, config={"vault": {"token": TOKEN}})

    def fetch(url: str) -> str:
        """Fetch ``url`` through the vault."""
        raise PermissionError(f"vault refused token {k.config['vault']['token']}")

    k.add_tool(fetch)
    try:
        result = k.run_tool({"name": "fetch", "arguments": {"url": "https://example.com"}})
    finally:
        k.close()
    shown = result.content + (result.error or "") + json.dumps(events, default=repr)
    assert result.state == "error" and "vault refused token ***" in result.content
    assert leaked(shown) == []


@pytest.mark.parametrize("deps", ["mapping", "object", "secret"])
def test_a_tool_failing_with_a_deps_token_is_masked(deps):
    """Attack (got through): the app passes its GitHub token to the run as ``deps`` (a mapping, a dataclass-like
    object, a bare ``Secret``); the tool's client fails quoting it, and the error the model reads kept it.
    Defence: a tool's exception is described with the run's ``deps`` secrets masked (a mapping's and an
    object's secret-named fields, a ``Secret``)."""
    class Deps:
        def __init__(self):
            self.github_token = TOKEN

    given = {"mapping": {"github_token": TOKEN}, "object": Deps(), "secret": Secret(TOKEN)}[deps]
    k = Kernel(entry_points=False)

    def push(ctx: RunContext, branch: str) -> str:
        """Push ``branch`` with the run's token."""
        token = ctx.deps.reveal() if isinstance(ctx.deps, Secret) else getattr(ctx.deps, "github_token", None)
        raise PermissionError(f"401 for token {token or ctx.deps['github_token']}")

    k.add_tool(push)
    try:
        result = k.run_tool({"name": "push", "arguments": {"branch": "main"}}, k.context(deps=given))
    finally:
        k.close()
    assert result.state == "error" and "401 for token ***" in result.content
    assert leaked(result.content + (result.error or "")) == []


def test_a_tool_failing_with_a_plain_deps_value_keeps_it():
    """Over-masking guard: a tool's error quoting a ``deps`` field that is not secret-named (the repository) keeps
    it, so the model and the developer see which repository failed."""
    k = Kernel(entry_points=False)

    def push(ctx: RunContext, branch: str) -> str:
        """Push ``branch`` to the run's repository."""
        raise PermissionError(f"no access to {ctx.deps['repository']}")

    k.add_tool(push)
    try:
        result = k.run_tool({"name": "push", "arguments": {"branch": "main"}},
                            k.context(deps={"repository": "acme-corp/zagent-mainline", "github_token": TOKEN}))
    finally:
        k.close()
    assert "no access to acme-corp/zagent-mainline" in result.content


def test_the_repr_of_a_request_masks_a_calls_secret_options():
    """Attack (got through): a model rail logs the ``LLMRequest`` it sees (``log.debug("%r", request)``); a call's
    own ``extra_body={"api_key": ...}`` and ``headers={"Authorization": "Bearer ..."}`` were shown as given.
    Defence: ``LLMRequest.__repr__`` shows secret-named options (and secret headers) as ``***``."""
    request = LLMRequest(model="m", messages=[Message(role="user", content="hi")],
                         options={"extra_body": {"provider": {"api_key": TOKEN}}, "temperature": 0.5,
                                  "headers": {"Authorization": f"Bearer {KEY}", "X-Trace": "t1"}})
    shown = repr(request)
    assert "'temperature': 0.5" in shown and "'X-Trace': 't1'" in shown and "'api_key': '***'" in shown
    assert leaked(shown) == [] and request.options["extra_body"]["provider"]["api_key"] == TOKEN


class _Rail:
    @hookimpl
    def zagent_before_llm_call(self, request, ctx):
        return None


def test_hook_tracing_does_not_print_a_requests_secret_options(monkeypatch, capsys):
    """Attack (held): ``ZAGENT_TRACE_HOOKS=1`` traces every hook call to stderr while a model rail sees a request
    carrying ``extra_body={"api_key": ...}``. Defence: the trace line names the hook's arguments, not their
    values."""
    monkeypatch.setenv("ZAGENT_TRACE_HOOKS", "1")
    k = Kernel(["zagent.plugins.offline", _Rail()], entry_points=False)
    try:
        reply = k.llm("scripted:m", replies=["fine"]).complete("hi", extra_body={"api_key": TOKEN})
    finally:
        k.close()
    err = capsys.readouterr().err
    assert reply.message.content == "fine" and "zagent_before_llm_call(ctx, request)" in err
    assert leaked(err) == []


def test_a_retried_call_with_a_key_in_the_url_is_masked_in_warnings_and_the_error(records):
    """Attack (held): a server answers 500 quoting every header it got; the model's base URL carries ``?key=``
    and the call sends a secret header of its own; two retries. Defence: the retry records and the final
    ``ProviderError`` (with its traceback) mask the key, the URL's ``key`` and secret-named headers."""
    from tests.servers.loopback import LoopbackServer, Reply

    def echo(request):
        return Reply.json({"error": {"message": "down: " + json.dumps(dict(request.headers)) + request.path}},
                          status=500, headers={"retry-after": "0"})

    k = Kernel(["zagent.plugins.openai"], entry_points=False)
    try:
        with LoopbackServer(echo) as server:
            llm = k.llm("openai:gpt-x", base_url=f"{server.url}/v1?key={TOKEN}", api_key=KEY, max_retries=2,
                        headers={"X-Vault-Token": Secret(TOKEN)})
            with pytest.raises(ZagentError) as err:
                llm.complete("hi")
        assert len(server.requests) == 3 and KEY in server.requests[0].headers.get("authorization", "")
    finally:
        k.close()
    shown = "".join(traceback.format_exception(err.value)) + records.getvalue()
    assert "down:" in shown and leaked(shown) == []


def test_a_fallback_chain_naming_each_models_failure_masks_every_key(records):
    """Attack (held): a ``fallback:`` chain of two OpenAI-compatible servers with a key each; both answer 503
    quoting the headers they got; the chain's final error names what each model said (the first model's key in
    the second's error text). Defence: each model's error is masked with its own client's secrets before the
    chain quotes it; the chain's error, its ``body`` and the log hold neither key."""
    from tests.servers.loopback import LoopbackServer, Reply

    def echo(request):
        return Reply.json({"error": {"message": "overloaded; you sent " + request.headers.get("authorization", "")}},
                          status=503)

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.fallback"], entry_points=False)
    try:
        with LoopbackServer(echo) as one, LoopbackServer(echo) as two:
            chain = k.llm("fallback:x", models=[
                {"model": "openai:gpt-a", "base_url": one.url, "api_key": KEY, "max_retries": 0},
                {"model": "openai:gpt-b", "base_url": two.url, "api_key": TOKEN, "max_retries": 0}])
            with pytest.raises(ZagentError) as err:
                chain.complete("hi")
        assert KEY in one.requests[0].headers["authorization"] and TOKEN in two.requests[0].headers["authorization"]
    finally:
        k.close()
    shown = "".join(traceback.format_exception(err.value)) + repr(getattr(err.value, "body", "")) + records.getvalue()
    assert "overloaded; you sent" in shown and leaked(shown) == []


def test_a_secret_with_a_format_spec_shows_no_value():
    """Attack (held): an app formats a ``Secret`` into a log line with a width (``f"{token:>40}"``), the path
    ``__format__`` takes instead of ``repr``. Defence: a format spec is a ``TypeError`` naming no value."""
    with pytest.raises(TypeError) as err:
        f"{Secret(TOKEN):>40}"
    assert leaked(str(err.value)) == []


def test_the_settings_walk_reads_a_bounded_number_of_values():
    """Guard: a tool error is described with the run's deps, which may hold a large cache; ``config_masker`` reads
    at most ``MAX_SETTINGS`` values of them (here a million secret-named strings) rather than all."""
    from zagent._trust.settings import MAX_SETTINGS, _setting_secrets

    found = _setting_secrets({"token": [f"tok-{i:08d}" for i in range(1_000_000)]}, False, 32)
    assert 0 < len(found) <= MAX_SETTINGS
