"""Round nine: code run that neither the app nor the CLI user asked for (new kinds of the cases round eight tried).

Attacks that got through on the code before this round's fixes (session 2026-12-06, redteam9); those that were
already stopped are in ``test_security_round9_code_held.py``. A marker file written by the hostile code proves it ran.

- a submodule (``pkg/tools.py``) or a subpackage's ``__init__.py`` of mode 666 in the trusted spec folder: GOT
  THROUGH (only the top-level module's file was checked) -- fixed: ``zagent.speckit.trust._planted_below``
- ``trusted_mod:conn.executescript`` / ``trusted_mod:ALLOWED_HOSTS.append``, a C method of an object in a trusted
  module (no ``__module__``): GOT THROUGH (the model's reply ran as SQL; the app's list grew) -- fixed:
  ``zagent.speckit.trust._walk`` takes a bound C method's owner from its object's type
- a tool a trusted spec imported (``"r9admin:wipe"``), its ``toolset:``, or an agent a trusted spec declared with
  such a tool, named by its plain name in an untrusted spec; an agent a trusted workflow built, kept in the
  executor's pool, named by an untrusted workflow: GOT THROUGH -- fixed: ``zagent.agentkit.toolrefs`` remembers the
  import paths behind spec-registered tools (``astool``: agents offered as tools) and re-checks them for the
  naming spec (``check_lent_agent``: the ``AgentManager`` pool)
- a submodule as a sourceless ``tools.pyc`` of mode 666: GOT THROUGH -- fixed: found as the import finds it
- the spec's folder inside a folder another user owns (who may swap it): GOT THROUGH -- fixed: ``dubious_folder``
- an untrusted spec with the same llm_config (``http_module``, a ``base_url``) as a trusted spec's got the kernel's
  cached model, skipping both checks: GOT THROUGH -- fixed: ``zagent._model.resolve`` caches a spec's models apart
"""

import contextlib
import os
import sys

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import resolve

from .conftest import PLUGINS, agent_spec


def marker_module(folder, name, body=""):
    """``folder/name.py`` whose import writes ``folder/name.ran``; ``tool(text)`` echoes, ``wipe()`` leaves
    ``folder/name.wiped`` (the harm a call does)."""
    folder.mkdir(parents=True, exist_ok=True)
    mark = folder / f"{name}.ran"
    (folder / f"{name}.py").write_text(
        f"open({str(mark)!r}, 'w').write('ran')\n"
        "def tool(text: str) -> str:\n    'Echo.'\n    return text\n"
        f"def wipe() -> str:\n    'Wipe.'\n    open({str(folder / (name + '.wiped'))!r}, 'w').write('x')\n"
        "    return 'wiped'\n" + body)
    return mark


def kernel(config=None):
    return Kernel(plugins=list(PLUGINS), entry_points=False, strict=True, config=config)


# -- folder trust: a package's submodule others can write ----------------------------------------------------------


@pytest.mark.parametrize("where", ["module", "package __init__", "sourceless module"])
def test_a_submodule_others_can_write_in_a_trusted_folder_is_not_imported(tmp_path, where, forget_modules):
    """proj/ (the user's) holds agent.json and package r9pkg/ (the user's, 755); r9pkg/tools.py (or the
    __init__.py of its subpackage r9pkg/sub/) can be written by every user (mode 666), so anyone could have put
    code in it. The CLI's folder trust refuses a top-level module of mode 666; a submodule of the same mode must be
    refused too, before it is imported."""
    forget_modules.append("r9pkg")
    proj = tmp_path / "proj"
    (proj / "r9pkg").mkdir(parents=True)
    (proj / "r9pkg" / "__init__.py").write_text("")
    if where == "module":
        mark, path = marker_module(proj / "r9pkg", "tools"), "r9pkg.tools:tool"
        os.chmod(proj / "r9pkg" / "tools.py", 0o666)
    elif where == "sourceless module":  # r9pkg/tools.pyc alone: Python imports it as the module (no source)
        import py_compile

        mark = marker_module(proj / "r9pkg", "tools")
        py_compile.compile(str(proj / "r9pkg" / "tools.py"), cfile=str(proj / "r9pkg" / "tools.pyc"))
        (proj / "r9pkg" / "tools.py").unlink()
        os.chmod(proj / "r9pkg" / "tools.pyc", 0o666)
        path = "r9pkg.tools:tool"
    else:
        (proj / "r9pkg" / "sub").mkdir()
        mark = marker_module(proj / "r9pkg" / "sub", "__init__")
        marker_module(proj / "r9pkg" / "sub", "mod")
        os.chmod(proj / "r9pkg" / "sub" / "__init__.py", 0o666)
        path = "r9pkg.sub.mod:tool"
    with trusting(Trust.for_file(proj / "agent.json")), pytest.raises(ConfigError, match="other users"):
        resolve(path, key="tool", base_dir=str(proj))
    assert not mark.exists()


def test_a_folder_inside_one_another_user_owns_is_not_trusted(tmp_path, forget_modules):
    """proj/ is the user's (755) but lies in outer/, owned by another user (755, not writable by the user): that
    user may rename proj/ and put a folder of their own, with a planted module, in its place. Expected: proj/ is
    not trusted, as a folder inside a non-sticky world-writable one is not."""
    if os.getuid() != 0:
        pytest.skip("making a folder owned by another user needs root")
    forget_modules.append("r9swap")
    outer = tmp_path / "outer"
    mark = marker_module(outer / "proj", "r9swap")
    os.chown(outer, 12345, 12345)
    trust = Trust.for_file(outer / "proj" / "agent.json")
    assert trust.folders == () and "owned by another user" in trust.refused[0]
    with trusting(trust), pytest.raises(ConfigError, match="owned by another user"):
        resolve("r9swap:tool", key="tool", base_dir=str(outer / "proj"))
    assert not mark.exists()


def test_the_users_own_submodule_still_imports(tmp_path, forget_modules):
    """The defence above keeps the user's own package (every file 644) trusted next to the spec."""
    forget_modules.append("r9own")
    proj = tmp_path / "proj"
    (proj / "r9own").mkdir(parents=True)
    (proj / "r9own" / "__init__.py").write_text("")
    marker_module(proj / "r9own", "tools")
    with trusting(Trust.for_file(proj / "agent.json")):
        assert resolve("r9own.tools:tool", key="tool", base_dir=str(proj))("x") == "x"


# -- a trusted module's objects ------------------------------------------------------------------------------------


@pytest.fixture
def app_db(tmp_path, monkeypatch, forget_modules):
    """The app's package r9app (trusted by trusted_imports) whose db module holds an open sqlite3 connection
    and a class of its own."""
    forget_modules.append("r9app")
    pkg = tmp_path / "code" / "r9app"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "db.py").write_text("import sqlite3\nconn = sqlite3.connect(':memory:', check_same_thread=False)\n"
                               "ALLOWED_HOSTS = ['example.org']\n"
                               "class Store:\n    def parse(self, text):\n        return {'answer': text}\n"
                               "store = Store()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    return tmp_path / "pwned.db"


def run_parse_func(k, parse_func, reply):
    """Build an agent whose parse_func is ``parse_func`` and whose model replies ``reply``, and run it; the
    ``ConfigError`` refusing it, or ``None``."""
    try:
        agent = k.agent(agent_spec(parse_mode="custom", parse_func=parse_func,
                                   llm_config={"model": "scripted:r9", "replies": [reply] * 3}))
    except ConfigError as exc:
        return exc
    with contextlib.suppress(Exception):
        agent(question="q")
    return None


def test_a_builtin_method_of_a_trusted_modules_object_is_refused(app_db):
    """trusted_imports ['r9app.*'] and parse_func 'r9app.db:conn.executescript': the path walks into the app's
    sqlite3 connection and names its C method (no __module__, so round eight's owner check saw no module). The
    model's reply is then run as SQL ('ATTACH DATABASE ... ; CREATE TABLE' writes a file). Expected: refused,
    as code of sqlite3 (which the app imports but does not trust as spec code)."""
    k = kernel({"trusted_imports": ["r9app.*"]})
    sql = f"ATTACH DATABASE '{app_db}' AS p; CREATE TABLE p.t(x);"
    err = run_parse_func(k, "r9app.db:conn.executescript", sql)
    assert not app_db.exists()
    assert isinstance(err, ConfigError) and "sqlite3" in str(err)


def test_a_builtin_method_of_a_trusted_modules_list_is_refused(app_db):
    """'r9app.db:ALLOWED_HOSTS.append' as parse_func adds the model's reply to the app's allow-list: a method of a
    builtins type, refused like the connection's."""
    k = kernel({"trusted_imports": ["r9app.*"]})
    err = run_parse_func(k, "r9app.db:ALLOWED_HOSTS.append", "evil.example")
    assert sys.modules["r9app.db"].ALLOWED_HOSTS == ["example.org"]
    assert isinstance(err, ConfigError) and "builtins" in str(err)


def test_a_method_of_the_trusted_modules_own_object_still_resolves(app_db):
    """The defence above keeps the app's own code: 'r9app.db:store.parse' (a method of a class r9app.db defines)."""
    k = kernel({"trusted_imports": ["r9app.*"]})
    assert resolve("r9app.db:store.parse", key="parse_func", kernel=k)("hi") == {"answer": "hi"}


# -- a tool one trusted spec imported, named by another spec --------------------------------------------------------


def test_a_tool_a_trusted_spec_imported_is_not_offered_to_an_untrusted_spec(tmp_path, monkeypatch, forget_modules):
    """The app trusts its own admin spec (k.agent(admin, trust=True)), whose tools name 'r9admin:wipe'; the import
    registers tool 'wipe' on the kernel. A user's spec loaded untrusted afterwards names plain 'wipe': the code the
    app trusted for one spec must not reach another that could not name it by path. Expected: refused, naming the
    import path and how to trust it."""
    forget_modules.append("r9admin")
    marker_module(tmp_path / "code", "r9admin")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel()
    k.agent(agent_spec(name="Admin", tools=["r9admin:wipe"]), trust=True)
    user = agent_spec(tools=["wipe"], llm_config={"model": "scripted:u", "replies": [
        {"tool_calls": [{"name": "wipe", "arguments": {}}]}, "done"]})
    try:
        agent = k.agent(user)
    except ConfigError as exc:
        assert "r9admin:wipe" in str(exc) and "trust" in str(exc)
    else:
        with contextlib.suppress(Exception):
            agent(question="q")
    assert not (tmp_path / "code" / "r9admin.wiped").exists()


def test_a_toolset_a_trusted_spec_imported_is_not_offered_to_an_untrusted_spec(tmp_path, monkeypatch,
                                                                               forget_modules):
    """As above, through 'toolset:admin': the admin spec's import path names a Tool of toolset 'admin'."""
    forget_modules.append("r9set")
    marker_module(tmp_path / "code", "r9set", "from zagent import tool as _tool\nwipe_tool = _tool(wipe, "
                  "name='wipe', toolset='admin')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel()
    k.agent(agent_spec(name="Admin", tools=["r9set:wipe_tool"]), trust=True)
    user = agent_spec(tools=["toolset:admin"], llm_config={"model": "scripted:u", "replies": [
        {"tool_calls": [{"name": "wipe", "arguments": {}}]}, "done"]})
    try:
        agent = k.agent(user)
    except ConfigError as exc:
        assert "r9set:wipe_tool" in str(exc)
    else:
        with contextlib.suppress(Exception):
            agent(question="q")
    assert not (tmp_path / "code" / "r9set.wiped").exists()


def test_an_agent_a_trusted_workflow_built_is_not_lent_to_an_untrusted_one(tmp_path, monkeypatch, forget_modules):
    """One WorkFlowExecutor (its AgentManager pool) runs the app's own workflow inside trusting(True), whose inline
    agent 'Cleaner' has tools ['r9wf:wipe']; then a user's workflow, untrusted, whose node names 'Cleaner' (or
    declares an inline spec named 'Cleaner'). The pool kept the trusted agent, so the user's workflow ran it.
    Expected: refused, naming the import path; the app's own run still works."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    forget_modules.append("r9wf")
    marker_module(tmp_path / "code", "r9wf")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel()
    cleaner = {"name": "Cleaner", "prompt": "Clean {x}", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
               "parse_mode": "str", "tools": ["r9wf:wipe"], "llm_config": {"model": "scripted:c", "replies": [
                   {"tool_calls": [{"name": "wipe", "arguments": {}}]}, "done"] * 2}}

    def graph(agent):
        return WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "nodes": [
            {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
             "agents": [agent]}]})

    ex = WorkFlowExecutor(kernel=k)
    with trusting(True):
        ex.run(graph(cleaner), {"x": "hi"})
    (tmp_path / "code" / "r9wf.wiped").unlink()
    for ref in ("Cleaner", {**cleaner, "tools": []}):
        with contextlib.suppress(Exception):
            ex.run(graph(ref), {"x": "hi"})
        assert not (tmp_path / "code" / "r9wf.wiped").exists()
    with trusting(True):  # the app's own workflow, trusted, still gets its agent from the pool
        ex.run(graph("Cleaner"), {"x": "hi"})
    assert (tmp_path / "code" / "r9wf.wiped").exists()


def test_a_tool_the_app_trusts_by_pattern_stays_reachable_by_name(tmp_path, monkeypatch, forget_modules):
    """The defence above keeps sharing a tool among specs that may all name it: with trusted_imports ['r9mine']
    a second spec names 'wipe' after the first imported 'r9mine:wipe'; and a tool the app added itself
    (k.add_tool) is reachable by name from any spec."""
    forget_modules.append("r9mine")
    marker_module(tmp_path / "code", "r9mine")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel({"trusted_imports": ["r9mine"]})
    k.agent(agent_spec(name="A", tools=["r9mine:wipe"]))
    assert k.agent(agent_spec(name="B", tools=["wipe"])) is not None

    def own(text: str) -> str:
        """The app's own tool."""
        return text

    k.add_tool(own)
    assert k.agent(agent_spec(name="C", tools=["own"])) is not None


def test_an_agent_a_trusted_spec_declared_is_not_offered_to_an_untrusted_spec(tmp_path, monkeypatch,
                                                                               forget_modules):
    """As above, through an agent: the admin spec (trust=True) declares an inline agent 'Cleaner' whose tools name
    'r9adm:wipe'; Cleaner is registered as a tool. A user's spec names plain 'Cleaner' and its model calls it, so
    Cleaner calls wipe. Expected: refused at load, naming the import path Cleaner's tools come from."""
    forget_modules.append("r9adm")
    marker_module(tmp_path / "code", "r9adm")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel()
    inner = agent_spec(name="Cleaner", tools=["r9adm:wipe"], llm_config={"model": "scripted:c", "replies": [
        {"tool_calls": [{"name": "wipe", "arguments": {}}]}, "done"]})
    k.agent(agent_spec(name="Admin", agents=[inner]), trust=True)
    user = agent_spec(tools=["Cleaner"], llm_config={"model": "scripted:u", "replies": [
        {"tool_calls": [{"name": "Cleaner", "arguments": {"question": "x"}}]}, "done"]})
    try:
        agent = k.agent(user)
    except ConfigError as exc:
        assert "r9adm:wipe" in str(exc)
    else:
        with contextlib.suppress(Exception):
            agent(question="q")
    assert not (tmp_path / "code" / "r9adm.wiped").exists()


# -- a model a trusted spec made, named by another spec -------------------------------------------------------------


@pytest.mark.parametrize("option", ["http_module", "base_url"])
def test_an_untrusted_spec_does_not_get_the_model_a_trusted_spec_made(monkeypatch, option):
    """The app builds its own spec with trust=True, whose llm_config names http_module 'httpx' (code by name) or
    a base_url of its own; the kernel caches that model. An untrusted spec with the very same llm_config got the
    cached model, so neither check ran (http_module refused; the user's key sent only to the configured URL).
    Expected: refused as it is without the trusted spec."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-own-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.openai"], entry_points=False)
    cfg = {"model": "openai:gpt-4o-mini", option: "httpx" if option == "http_module" else "https://r9.example/v1"}
    trusted = k.agent(agent_spec(name="Mine", llm_config=dict(cfg)), trust=True)
    with pytest.raises(ConfigError, match=option):
        k.agent(agent_spec(name="Theirs", llm_config=dict(cfg)))
    assert k.agent(agent_spec(name="Again", llm_config=dict(cfg)), trust=True).llm is trusted.llm  # still cached
