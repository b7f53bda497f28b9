"""Round eight: code run, or modules imported, that neither the app nor the CLI user asked for.

Attacks tried (session 2026-12-06, redteam8) and whether they got through before this module's fixes:

- ``"trusted_mod:importlib.import_module"`` (a module the trusted one imported), a name it re-exports
  (``from importlib import import_module``), or a dunder (``add.__globals__``): GOT THROUGH -- fixed:
  ``zagent.speckit.trust.resolve`` walks the attribute path, refusing dunders and code of untrusted modules
- a namespace package (no ``__init__.py``) in the trusted folder whose portion, or a same-named module, lies
  elsewhere on ``sys.path``; a trusted package using ``pkgutil.extend_path`` whose submodule lies elsewhere:
  GOT THROUGH (refused only after the code ran) -- fixed: ``zagent.speckit.trust`` checks before importing
- ``trust=True`` (``--trust``) reaching an agent file a spec names in a folder others can write; an agent file
  others can write (mode 666) next to the user's modules, opened, named, or stored in ``--agents`` (a folder or a
  ``.db``): GOT THROUGH -- fixed: ``Trust.for_file``, ``for_named_file`` (``zagent.speckit.trust``), used by
  ``zagent.plugins.actions.astool`` and ``zagent.plugins.manager``
- the CLI run in a folder every user can write (``chat --tools``, ``eval --scorer``), or given such a folder
  as ``--agents`` (``workflow run``, ``groupchat run``): GOT THROUGH (that folder was searched first, so another
  user's module shadowed the user's) -- fixed: ``Trust.for_folder`` in those commands
- a YAML spec with ``!!python/object/apply``; ``os:system`` spelled other ways: refused before
"""

import contextlib
import json
import os
import sys

import pytest

from zagent import ConfigError
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import resolve

from .conftest import agent_spec, make_kernel


def marker_module(folder, name):
    """``folder/name.py``, whose import writes ``folder/name.ran``: importing it is running it."""
    folder.mkdir(parents=True, exist_ok=True)
    mark = folder / f"{name}.ran"
    (folder / f"{name}.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n"
                                       "def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    return mark


@pytest.fixture
def app_package(tmp_path, monkeypatch):
    """The app's own package ``r8app`` (trusted by ``trusted_imports``), whose tools module imports importlib;
    ``r8_payload`` is a module on ``sys.path`` that leaves a mark when imported."""
    pkg = tmp_path / "code" / "r8app"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "tools.py").write_text("import importlib\nfrom importlib import import_module\n"
                                  "def add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n")
    mark = marker_module(tmp_path / "code", "r8_payload")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    yield mark
    for name in ("r8app", "r8app.tools", "r8_payload"):
        sys.modules.pop(name, None)


def run_parsing_agent(kernel, parse_func, reply):
    """Build (under the trust in force) and run an agent whose parse_func is ``parse_func`` and whose scripted
    model replies ``reply``; the ``ConfigError`` refusing it at load, or ``None``."""
    try:
        agent = kernel.agent(agent_spec(parse_mode="custom", parse_func=parse_func,
                                        llm_config={"model": "scripted:r8", "replies": [reply] * 3}))
    except ConfigError as exc:
        return exc
    with contextlib.suppress(Exception):  # the parsed answer is a module, not text: what matters is the import
        agent(question="q")
    return None


@pytest.mark.parametrize("path", ["r8app.tools:importlib.import_module", "r8app.tools:import_module"])
def test_a_trusted_modules_attribute_cannot_reach_code_of_an_untrusted_module(app_package, path):
    """trusted_imports ['r8app.*'] and a spec's parse_func 'r8app.tools:importlib.import_module' (through a module
    the trusted one imported) or 'r8app.tools:import_module' (re-exported): the model's reply would name a module
    to import. Defence: ConfigError at load saying the path leaves the trusted module; nothing imported."""
    k = make_kernel(config={"trusted_imports": ["r8app.*"]})
    refused = run_parsing_agent(k, path, "r8_payload")
    k.close()
    assert not app_package.exists()
    assert refused is not None and path in str(refused) and "not trusted" in str(refused)


def test_a_trusted_modules_own_function_still_resolves(app_package):
    """The defence above keeps the app's own function: 'r8app.tools:add' resolves under trusted_imports."""
    k = make_kernel(config={"trusted_imports": ["r8app.*"]})
    assert resolve("r8app.tools:add", key="tool", kernel=k)(1, 2) == 3
    k.close()


def test_a_dunder_attribute_of_a_trusted_module_is_refused(app_package):
    """'r8app.tools:add.__globals__' walks from a trusted function into its module's namespace (every import in it).
    Defence: ConfigError; an import path names public attributes only."""
    k = make_kernel(config={"trusted_imports": ["r8app.*"]})
    with pytest.raises(ConfigError, match="not trusted"):
        resolve("r8app.tools:add.__globals__", key="tool", kernel=k)
    k.close()


def test_a_module_next_to_the_spec_cannot_lend_its_imports(tmp_path, monkeypatch):
    """The CLI's folder trust: 'helpers_r8:importlib.import_module' with helpers_r8.py next to the spec (it imports
    importlib) as a parse_func. Defence: ConfigError at load; the model's reply names no module to import."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "helpers_r8.py").write_text("import importlib\n")
    mark = marker_module(tmp_path / "elsewhere", "r8_payload_b")
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    os.chmod(proj, 0o755)
    k = make_kernel()
    try:
        with trusting(Trust.for_file(proj / "agent.json")):
            refused = run_parsing_agent(k, "helpers_r8:importlib.import_module", "r8_payload_b")
    finally:
        sys.modules.pop("helpers_r8", None)
        sys.modules.pop("r8_payload_b", None)
        k.close()
    assert not mark.exists()
    assert refused is not None and "helpers_r8:importlib.import_module" in str(refused)


def namespace_project(tmp_path, monkeypatch):
    """proj/ns_r8/ok.py (a namespace package: no __init__.py) next to proj/agent.json; an ``other`` folder on
    sys.path holds code of someone else."""
    proj = tmp_path / "proj"
    (proj / "ns_r8").mkdir(parents=True)
    (proj / "ns_r8" / "ok.py").write_text("def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.syspath_prepend(str(other))
    return proj, other


def test_a_namespace_package_in_the_trusted_folder_does_not_import_its_portion_elsewhere(tmp_path, monkeypatch):
    """'ns_r8.evil:tool': ns_r8/ lies in the trusted folder, ns_r8/evil.py in another folder on sys.path (the same
    namespace package, so Python imports it from there). Defence: ConfigError before anything is imported."""
    proj, other = namespace_project(tmp_path, monkeypatch)
    mark = marker_module(other / "ns_r8", "evil")
    try:
        with trusting(Trust.for_file(proj / "agent.json")), pytest.raises(ConfigError):
            resolve("ns_r8.evil:tool", key="tool", base_dir=str(proj))
    finally:
        for name in ("ns_r8", "ns_r8.evil"):
            sys.modules.pop(name, None)
    assert not mark.exists()


def test_a_namespace_package_in_the_trusted_folder_loses_to_a_module_elsewhere(tmp_path, monkeypatch):
    """'ns_r8.ok:tool': ns_r8/ in the trusted folder is only a namespace portion, so an ns_r8.py anywhere on
    sys.path wins the import. Defence: ConfigError before anything is imported (say: add an __init__.py)."""
    proj, other = namespace_project(tmp_path, monkeypatch)
    mark = marker_module(other, "ns_r8")
    try:
        with trusting(Trust.for_file(proj / "agent.json")), pytest.raises(ConfigError, match="__init__.py"):
            resolve("ns_r8.ok:tool", key="tool", base_dir=str(proj))
    finally:
        for name in ("ns_r8", "ns_r8.ok"):
            sys.modules.pop(name, None)
    assert not mark.exists()


def test_trust_true_does_not_reach_a_nested_file_in_a_folder_every_user_can_write(tmp_path, monkeypatch):
    """k.agent('proj/outer.json', trust=True) whose agents names '../shared/inner.json', shared/ writable by every
    user; another user's inner.json names 'r8_inner_payload:tool' (a module on sys.path). Defence: the nested file
    gets no import trust (ConfigError naming the folder); nothing imported."""
    proj, shared = tmp_path / "proj", tmp_path / "shared"
    proj.mkdir()
    shared.mkdir()
    os.chmod(shared, 0o777)
    mark = marker_module(tmp_path / "code", "r8_inner_payload")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    (shared / "inner.json").write_text(json.dumps(agent_spec(name="Inner", tools=["r8_inner_payload:tool"])))
    (proj / "outer.json").write_text(json.dumps(agent_spec(name="Outer", agents=["../shared/inner.json"])))
    k = make_kernel()
    try:
        with pytest.raises(ConfigError, match="not trusted"):
            k.agent(str(proj / "outer.json"), trust=True)
    finally:
        sys.modules.pop("r8_inner_payload", None)
        os.chmod(shared, 0o755)
        k.close()
    assert not mark.exists()


def test_trust_true_still_reaches_a_nested_file_in_the_users_own_folder(tmp_path, monkeypatch):
    """The defence above keeps --trust working for the user's own nested files: inner.json next to outer.json
    naming 'os.path:basename' loads under trust=True."""
    (tmp_path / "inner.json").write_text(json.dumps(agent_spec(name="Inner", tools=["os.path:basename"])))
    (tmp_path / "outer.json").write_text(json.dumps(agent_spec(name="Outer", agents=["inner.json"])))
    os.chmod(tmp_path, 0o755)
    k = make_kernel()
    k.agent(str(tmp_path / "outer.json"), trust=True)
    assert "basename" in k.registries["tools"]
    k.close()


def test_a_yaml_spec_with_a_python_tag_runs_nothing(tmp_path, monkeypatch):
    """agent.yaml with '!!python/object/apply:r8_yaml_payload.tool': a YAML tag that imports and calls.
    Defence: the safe loader refuses the tag (ConfigError naming file and line); nothing imported."""
    pytest.importorskip("yaml")
    mark = marker_module(tmp_path / "code", "r8_yaml_payload")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    (tmp_path / "agent.yaml").write_text("name: E\nprompt: '{q}'\ninputs: [{name: q}]\n"
                                         "description: !!python/object/apply:r8_yaml_payload.tool ['x']\n")
    k = make_kernel()
    with pytest.raises(ConfigError, match="agent.yaml:4"):
        k.agent(str(tmp_path / "agent.yaml"), trust=True)
    sys.modules.pop("r8_yaml_payload", None)
    k.close()
    assert not mark.exists()


@pytest.mark.parametrize("path", ["os.system", " os : system ", "os:system ", "\uff4f\uff53:system",
                                  "os:\u0455ystem", "builtins:exec", "posix:system"])
def test_os_system_spelled_other_ways_is_refused(path):
    """A tool 'os:system' written with spaces, no colon, fullwidth or Cyrillic letters, or as builtins:exec or
    posix:system. Defence: ConfigError (not an import path, or not trusted); no tool registered."""
    k = make_kernel()
    with pytest.raises(ConfigError):
        k.agent(agent_spec(tools=[path]))
    assert not {"system", "exec", "\u0455ystem"} & set(k.registries["tools"])
    k.close()


def zagent_script(*args, cwd, pythonpath):
    """The installed ``zagent`` command (not ``python -m``, which puts the working directory on sys.path itself)."""
    import subprocess

    env = {**os.environ, "ZAGENT_PLUGINS": "offline,parsers,actions,react,rails,evals,manager,workflow,groupchat,cli", "ZAGENT_LOG": "0",
           "PYTHONPATH": str(pythonpath)}
    env.pop("ZAGENT_MODEL", None)
    script = os.path.join(os.path.dirname(sys.executable), "zagent")
    return subprocess.run([script, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", [
    ["eval", "{root}/examples/calculator_cases.jsonl", "--agent", "{root}/examples/calculator_agent.json",
     "--scorer", "function:fn=r8_user_mod:tool"],
    ["chat", "--tools", "r8_user_mod:tool", "--model", "test:offline"],
], ids=["eval-scorer", "chat-tools"])
def test_a_world_writable_working_directory_does_not_shadow_the_users_module(tmp_path, command):
    """The user names their own module on the command line ('--scorer function:fn=r8_user_mod:tool',
    '--tools r8_user_mod:tool') while working in a folder every user can write, where another user put
    r8_user_mod.py. Defence: a working directory others can write is not searched first; the user's module runs."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mine, shared = tmp_path / "mine", tmp_path / "shared"
    marker_module(mine, "r8_user_mod").unlink(missing_ok=True)
    planted = marker_module(shared, "r8_user_mod")
    os.chmod(shared, 0o777)
    try:
        zagent_script(*[a.format(root=root) for a in command], cwd=shared, pythonpath=mine)
        assert not planted.exists()
        assert (mine / "r8_user_mod.ran").exists()  # the user's own module was the one imported
    finally:
        os.chmod(shared, 0o755)


def workflow_file(proj):
    """proj/wf.json: node A, then B if the router 'r8_router_mod:route' says so."""
    def node(name, out):
        return {"name": name, "description": "d", "inputs": [{"name": "goal"}], "outputs": [{"name": out}],
                "agents": [agent_spec(name=f"W{name}", prompt="{goal}", inputs=[{"name": "goal"}],
                                      outputs=[{"name": out}], llm="test:offline")]}
    (proj / "wf.json").write_text(json.dumps({
        "name": "w", "goal": "test the router trust", "inputs": [{"name": "goal"}],
        "nodes": [node("A", "x"), node("B", "y")],
        "conditional_edges": [{"source": "A", "router": "r8_router_mod:route", "targets": ["B"]}]}))
    return ["workflow", "run", str(proj / "wf.json"), "--input", "goal=g"]


def chat_file(proj):
    """proj/chat.json: one speaker, chosen by the selection policy 'r8_router_mod:route'."""
    (proj / "chat.json").write_text(json.dumps({
        "name": "g", "agents": [agent_spec(name="A", llm="test:offline")], "max_rounds": 1,
        "selection": {"policy": "r8_router_mod:route"}}))
    return ["groupchat", "run", str(proj / "chat.json"), "--input", "task=t"]


@pytest.mark.parametrize("make", [workflow_file, chat_file], ids=["workflow", "groupchat"])
def test_a_world_writable_agents_folder_does_not_shadow_the_users_module(tmp_path, make):
    """`zagent workflow run wf.json --agents SHARED --trust` (or `groupchat run`): the user trusts the file's
    'r8_router_mod:route' (their own module, on PYTHONPATH); SHARED, every user can write it, holds another user's
    r8_router_mod.py. Defence: an --agents folder others can write gets no import trust and is not searched first."""
    mine, shared, proj = tmp_path / "mine", tmp_path / "shared", tmp_path / "proj"
    marker_module(mine, "r8_router_mod")
    planted = marker_module(shared, "r8_router_mod")
    proj.mkdir()
    command = make(proj)
    os.chmod(shared, 0o777)
    try:
        zagent_script(*command, "--agents", str(shared), "--trust", cwd=proj, pythonpath=mine)
        assert not planted.exists()
        assert (mine / "r8_router_mod.ran").exists()  # the user's own module was the one imported
    finally:
        os.chmod(shared, 0o755)


@pytest.mark.parametrize("nested", [False, True], ids=["spec-file", "nested-agent-file"])
def test_a_spec_file_other_users_can_write_gets_no_folder_trust(tmp_path, nested):
    """proj/ (the user's, mode 755) holds helper_r8.py (top-level code) and an agent file every user can write
    (mode 666) naming 'helper_r8:tool': opened as the CLI does (Trust.for_file), or named by the user's own
    outer.json. Another user wrote that file, not the user. Defence: ConfigError; helper_r8 is not imported."""
    proj = tmp_path / "proj"
    mark = marker_module(proj, "helper_r8")
    os.chmod(proj, 0o755)
    evil = proj / "shared.json"
    evil.write_text(json.dumps(agent_spec(name="Shared", tools=["helper_r8:tool"])))
    os.chmod(evil, 0o666)
    (proj / "outer.json").write_text(json.dumps(agent_spec(name="Outer", agents=["shared.json"])))
    opened = proj / ("outer.json" if nested else "shared.json")
    k = make_kernel()
    try:
        with trusting(Trust.for_file(opened)), pytest.raises(ConfigError, match="other users"):
            k.agent(str(opened))
    finally:
        sys.modules.pop("helper_r8", None)
        k.close()
    assert not mark.exists()


def test_an_agent_file_others_can_write_in_a_trusted_agents_folder_imports_nothing(tmp_path):
    """The user's agents folder (trusted, as `--agents` is) holds helper_r8b.py and helper.json, which every user
    can write (mode 666) and which names 'helper_r8b:tool'; a workflow or group chat asks the manager for
    'helper'. Defence: the file's folder trust does not apply to it (ConfigError); helper_r8b is not imported."""
    from zagent.plugins.manager import AgentManager

    agents = tmp_path / "agents"
    mark = marker_module(agents, "helper_r8b")
    os.chmod(agents, 0o755)
    (agents / "helper.json").write_text(json.dumps(agent_spec(name="helper", tools=["helper_r8b:tool"])))
    os.chmod(agents / "helper.json", 0o666)
    k = make_kernel()
    try:
        with trusting(Trust.for_folder(str(agents))), pytest.raises(ConfigError, match="other users"):
            AgentManager(kernel=k, storage=str(agents)).add_agent("helper")
    finally:
        sys.modules.pop("helper_r8b", None)
        k.close()
    assert not mark.exists()


@pytest.mark.parametrize("imported_first", [False, True], ids=["fresh", "package-already-imported"])
def test_a_trusted_package_extending_its_path_does_not_import_a_submodule_from_elsewhere(tmp_path, monkeypatch,
                                                                                      imported_first):
    """proj/pkg_r8/__init__.py uses pkgutil.extend_path (an old-style namespace package), so pkg_r8.__path__ takes
    in every pkg_r8/ on sys.path; another folder on sys.path holds pkg_r8/evil.py. The spec names
    'pkg_r8.evil:tool'. Defence: a module is in the trusted folder only if found there, checked before the import:
    ConfigError, evil.py never runs."""
    proj = tmp_path / "proj"
    (proj / "pkg_r8").mkdir(parents=True)
    (proj / "pkg_r8" / "__init__.py").write_text("from pkgutil import extend_path\n"
                                                 "__path__ = extend_path(__path__, __name__)\n")
    (proj / "pkg_r8" / "ok.py").write_text("def tool(text: str) -> str:\n    'Echo.'\n    return text\n")
    other = tmp_path / "other"
    mark = marker_module(other / "pkg_r8", "evil")
    monkeypatch.syspath_prepend(str(other))
    try:
        with trusting(Trust.for_file(proj / "agent.json")):
            if imported_first:
                resolve("pkg_r8.ok:tool", key="tool", base_dir=str(proj))
            with pytest.raises(ConfigError):
                resolve("pkg_r8.evil:tool", key="tool", base_dir=str(proj))
    finally:
        for name in ("pkg_r8", "pkg_r8.ok", "pkg_r8.evil"):
            sys.modules.pop(name, None)
    assert not mark.exists()


def test_a_stored_agent_in_a_database_others_can_write_gets_no_trust(tmp_path, monkeypatch):
    """`--agents shared/agents.db --trust`: agents.db (every user can write it) holds another user's agent 'helper'
    naming 'r8_db_payload:tool' (a module on sys.path). The user's --trust vouches for their chat or workflow file,
    not for it. Defence: the stored agent is built with no trust (ConfigError); nothing imported."""
    from zagent.plugins.manager import AgentManager

    shared = tmp_path / "shared"
    shared.mkdir()
    mark = marker_module(tmp_path / "code", "r8_db_payload")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = make_kernel()
    db = shared / "agents.db"
    store = k.memory("checkpoints", path=str(db))
    store.save("agent:helper", 0, agent_spec(name="helper", tools=["r8_db_payload:tool"]), kind="agent_spec",
               metadata={"name": "helper"})
    os.chmod(db, 0o666)
    try:
        with trusting(Trust(everything=True)), pytest.raises(ConfigError, match="other users"):
            AgentManager(kernel=k, storage=str(db)).add_agent("helper")
    finally:
        sys.modules.pop("r8_db_payload", None)
        k.close()
    assert not mark.exists()
