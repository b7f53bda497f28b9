"""Attack: a spec file names code (``module:attr``). It is data: nothing is imported unless trusted."""

import json

import pytest

from zagent import ConfigError
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import resolve
from zagent.plugins.groupchat import GroupChat
from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

from .conftest import agent_spec, make_kernel, run_cli as cli



def canary(folder, name="canary_mod"):
    """A module next to the spec whose top-level code leaves a mark: importing it is running it."""
    mark = folder / f"{name}.ran"
    (folder / f"{name}.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n"
                                       "def add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
                                       "def parse(text):\n    return {'answer': text.upper()}\n")
    return mark


@pytest.mark.parametrize("key, value", [
    ("tools", ["os:system"]),
    ("parse_func", "subprocess:getoutput"),
])
def test_hostile_agent_spec_is_refused_by_default(key, value):
    """k.agent(spec) with os:system as a tool or subprocess:getoutput as parse_func: ConfigError naming key and value."""
    k = make_kernel()
    spec = agent_spec(**{key: value}, **({"parse_mode": "custom"} if key == "parse_func" else {}))
    with pytest.raises(ConfigError) as err:
        k.agent(spec)
    text = str(err.value)
    assert (value[0] if isinstance(value, list) else value) in text and "not trusted" in text
    assert "trusted_imports" in text and "--trust" in text  # says how to trust it
    assert "system" not in k.registries["tools"]


def test_hostile_approver_in_a_react_spec_is_refused():
    """rails.approver 'operator:is_not' (approves everything) in a react spec is refused when the agent is built."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="rails.approver 'operator:is_not'.*not trusted"):
        k.agent({"type": "react", "name": "r", "tools": ["word_count"], "rails": {"approver": "operator:is_not"}})


def test_hostile_approver_set_at_run_time_blocks_instead_of_approving():
    """An approver import path in an agent's run-time rails is not imported: the sensitive call is blocked."""
    k = make_kernel()
    k.add_tool(lambda: "deleted", name="wipe", sensitive=True, description="wipe the disk")
    ctx = k.context(agent="a", agent_config={"rails": {"approver": "operator:is_not"}})
    result = k.run_tool({"name": "wipe", "arguments": {}}, ctx)
    assert result.state == "blocked" and "not trusted" in result.error


def test_hostile_speaker_selector_in_a_group_chat_is_refused():
    """selection.policy 'os:system' in a group chat spec is refused before any turn."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="speaker selection policy 'os:getcwd'.*not trusted"):
        GroupChat(kernel=k, agents=[agent_spec(name="A")], selection={"policy": "os:getcwd"},
                  termination={"max_rounds": 1}, llm=k.llm("scripted:gc", replies=["x"])).run("task")


@pytest.mark.parametrize("where", ["router", "reducer"])
def test_hostile_workflow_router_or_reducer_is_refused(where):
    """A workflow file's router or reducer 'subprocess:getoutput' is refused before any node runs."""
    k = make_kernel()
    a = {"name": "A", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "x"}],
         "agents": [agent_spec(name="W", prompt="{goal}", inputs=[{"name": "goal"}], outputs=[{"name": "x"}])]}
    b = {"name": "B", "description": "b", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
         "agents": [agent_spec(name="V", prompt="{x}", inputs=[{"name": "x"}], outputs=[{"name": "y"}])]}
    data = {"name": "w", "goal": "test hostile code", "nodes": [a, b],
            "edges": [] if where == "router" else [{"source": "A", "target": "B"}]}
    if where == "router":
        data["conditional_edges"] = [{"source": "A", "router": "subprocess:getoutput", "targets": ["B"]}]
    else:
        data["state"] = [{"name": "x", "reducer": "subprocess:getoutput"}]
    llm = k.llm("scripted:wf", replies=["x"] * 3)
    with pytest.raises(ConfigError, match="subprocess:getoutput.*not trusted"):
        WorkFlowExecutor(kernel=k, llm=llm).run(WorkFlowGraph.from_dict(data), {"goal": "g"})
    assert llm.requests == []


def test_trusted_imports_glob_lets_the_app_trust_its_own_modules(tmp_path, monkeypatch):
    """Kernel(config={'trusted_imports': ['pkgx.*']}) trusts pkgx.tools, and nothing else."""
    (tmp_path / "pkgx").mkdir()
    (tmp_path / "pkgx" / "__init__.py").write_text("")
    (tmp_path / "pkgx" / "tools.py").write_text("def add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    k = make_kernel(config={"trusted_imports": ["pkgx.*"]})
    assert k.agent(agent_spec(tools=["pkgx.tools:add"])).action().tools == ["add"]
    with pytest.raises(ConfigError, match="not trusted"):
        k.agent(agent_spec(name="Other", tools=["os:getcwd"]))


def test_trust_true_opts_one_spec_in():
    """k.agent(spec, trust=True) imports what the spec names (the app vouches for this spec)."""
    k = make_kernel()
    agent = k.agent(agent_spec(tools=["os.path:basename"]), trust=True)
    assert agent.action().tools == ["basename"]


def test_a_module_named_like_an_imported_one_in_the_folder_is_not_trusted(tmp_path):
    """A file os.py next to the spec does not make 'os:system' trusted (the real os would be imported)."""
    (tmp_path / "os.py").write_text("def system(cmd): return 0\n")
    with trusting(Trust.for_file(tmp_path / "agent.json")):
        with pytest.raises(ConfigError, match="not trusted"):
            resolve("os:system", key="tool", base_dir=str(tmp_path))


def test_syntax_error_in_a_trusted_module_names_file_and_line(tmp_path):
    """A trusted module with a SyntaxError is a ConfigError naming its file and line, not a traceback."""
    (tmp_path / "broken_mod_a.py").write_text("x = 1\ndef f(:\n    pass\n")
    with trusting(Trust.for_file(tmp_path / "agent.json")), pytest.raises(ConfigError) as err:
        resolve("broken_mod_a:f", key="tool", base_dir=str(tmp_path))
    assert f"{tmp_path / 'broken_mod_a.py'}:2" in str(err.value) and "SyntaxError" in str(err.value)


def test_exception_at_import_of_a_trusted_module_names_file_and_line(tmp_path):
    """A trusted module raising at import is a ConfigError naming file, line and the exception."""
    (tmp_path / "raising_mod_b.py").write_text("import math\n\nraise RuntimeError('boom at import')\n")
    with trusting(Trust.for_file(tmp_path / "agent.json")), pytest.raises(ConfigError) as err:
        resolve("raising_mod_b:f", key="tool", base_dir=str(tmp_path))
    assert "raising_mod_b.py:3: RuntimeError: boom at import" in str(err.value)


@pytest.mark.parametrize("value", ["no_colon", ".relative:f", "a b:f", "mod:", "mod\x00x:f", 5])
def test_malformed_import_paths_are_config_errors(value):
    """Values that are not 'package.module:attr' are refused with a ConfigError naming them."""
    with pytest.raises(ConfigError, match="not an import path"):
        resolve(value, key="tool", trust=Trust(everything=True))


# -- the command line -------------------------------------------------------------------------------------


def test_cli_agent_show_imports_nothing_next_to_the_file(tmp_path):
    """`zagent agent show` renders the prompt without importing the module the file names (its code never runs)."""
    mark = canary(tmp_path)
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(tools=["canary_mod:add"], parse_mode="custom",
                                                               parse_func="canary_mod:parse")))
    proc = cli("agent", "show", str(tmp_path / "agent.json"), "--input", "question=hi")
    assert proc.returncode == 0, proc.stderr
    assert "Answer: hi" in proc.stdout and not mark.exists()


def test_cli_workflow_show_imports_nothing(tmp_path):
    """`zagent workflow show` checks a router's form without importing it."""
    mark = canary(tmp_path)
    node = {"name": "A", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "x"}], "agents": []}
    data = {"name": "w", "goal": "show without running", "nodes": [node, {**node, "name": "B",
                                                                           "outputs": [{"name": "y"}]}],
            "edges": [], "conditional_edges": [{"source": "A", "router": "canary_mod:add", "targets": ["B"]}]}
    (tmp_path / "wf.json").write_text(json.dumps(data))
    cli("workflow", "show", str(tmp_path / "wf.json"))
    assert not mark.exists()


def test_cli_run_trusts_a_module_in_the_spec_folder(tmp_path):
    """`zagent run` imports a tool module that sits next to the agent file (as python trusts a script's folder)."""
    canary(tmp_path)
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(tools=["canary_mod:add"])))
    proc = cli("run", str(tmp_path / "agent.json"), "--input", "question=2+3", "-q")
    assert proc.returncode == 0, proc.stderr


def test_cli_run_refuses_other_modules_without_trust(tmp_path):
    """`zagent run` with 'os:system' as a tool fails with a message naming --trust; with --trust it runs."""
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(tools=["os:system"])))
    proc = cli("run", str(tmp_path / "agent.json"), "--input", "question=q", "-q")
    assert proc.returncode != 0 and "os:system" in proc.stderr and "--trust" in proc.stderr
    assert "Traceback" not in proc.stderr
    (tmp_path / "agent2.json").write_text(json.dumps(agent_spec(tools=["os.path:basename"])))
    proc = cli("run", str(tmp_path / "agent2.json"), "--input", "question=q", "-q", "--trust")
    assert proc.returncode == 0, proc.stderr


def test_cli_run_reports_a_syntax_error_with_file_and_line(tmp_path):
    """`zagent run` with a tool module that does not compile says file and line, no traceback."""
    (tmp_path / "broken_mod_c.py").write_text("def f(:\n")
    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(tools=["broken_mod_c:f"])))
    proc = cli("run", str(tmp_path / "agent.json"), "--input", "question=q", "-q")
    assert proc.returncode != 0 and "broken_mod_c.py:1" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("spec", [
    {"type": "react", "name": "r", "trajectory_path": "/tmp/x/.bashrc"},
    agent_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": "/tmp/x/authorized_keys"}),
])
def test_spec_cannot_make_zagent_write_to_any_file(spec):
    """A spec naming a trajectory or memory file that is not *.jsonl / *.db is refused (no append to ~/.bashrc)."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="refused"):
        k.agent(spec)
    assert k.agent(spec, trust=True) is not None  # the app may vouch for it


def test_cli_workflow_run_trusts_a_router_in_the_files_folder_only(tmp_path):
    """`zagent workflow run` imports a router module next to the file (the trust reaches the run's event loop),
    and refuses one that is not there, before any node runs."""
    (tmp_path / "wf_router_mod.py").write_text("def pick(values):\n    return 'B'\n")
    a = {"name": "A", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "x"}],
         "agents": [agent_spec(name="W", prompt="{goal}", inputs=[{"name": "goal"}], outputs=[{"name": "x"}])]}
    b = {"name": "B", "description": "b", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
         "agents": [agent_spec(name="V", prompt="{x}", inputs=[{"name": "x"}], outputs=[{"name": "y"}])]}
    for name, router in (("ok.json", "wf_router_mod:pick"), ("bad.json", "os:getcwd")):
        (tmp_path / name).write_text(json.dumps({"name": "w", "goal": "route by a router", "nodes": [a, b],
                                                 "conditional_edges": [{"source": "A", "router": router,
                                                                        "targets": ["B"]}]}))
    ok = cli("workflow", "run", str(tmp_path / "ok.json"), "--input", "goal=g", "-q")
    assert ok.returncode == 0, ok.stderr
    bad = cli("workflow", "run", str(tmp_path / "bad.json"), "--input", "goal=g", "-q")
    assert bad.returncode != 0 and "os:getcwd" in bad.stderr and "--trust" in bad.stderr


def test_hostile_approver_in_a_declared_agents_config_is_refused():
    """agent_config.rails.approver 'operator:is_not' in a declared agent spec is refused when it is built;
    with trust=True it is resolved then."""
    k = make_kernel()
    spec = agent_spec(agent_config={"rails": {"approver": "operator:is_not"}})
    with pytest.raises(ConfigError, match="rails.approver 'operator:is_not'.*not trusted"):
        k.agent(spec)
    import operator

    assert k.agent(spec, trust=True).agent_config["rails"]["approver"] is operator.is_not
