"""Round nine, held: ways to run code from a spec, a model's reply or a folder that the defences already stopped
(companion of ``test_security_round9_code.py``, whose helpers these use).

Tried (session 2026-12-06, redteam9), none got through: http_module in one entry of a ``fallback:`` chain; the
workflow generator's model naming an import path as a tool, or code keys (parse_func, guardrails), even built
under ``trusting(True)``; a generated prompt with ``{goal.__class__...}``; planned sub-tasks carrying routers and
reducers; YAML ``!!python/name``, ``!!python/module``, ``!!python/object/new``; ``.pth``, ``sitecustomize.py`` and
``usercustomize.py`` next to a trusted spec; spec keys ``plugins``, ``entry_points``, ``executor``, ``python_path``;
a memory ``embedder`` named by path; Python-call syntax in a pycall reply; an edited ReAct checkpoint naming code;
a skills folder's ``scripts/``; a ``*.dist-info`` entry point in the working directory or the spec's folder; a
spec naming a shell or python tool (none is built in).
"""

import contextlib
import json
import os
import subprocess
import sys

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit import Trust, trusting
from zagent.speckit.trust import resolve
from zagent.types import Field

from .conftest import PLUGINS, agent_spec
from .test_security_round9_code import kernel, marker_module


def test_a_fallback_chain_entry_naming_an_http_module_is_refused(tmp_path, monkeypatch, forget_modules):
    """An untrusted spec's llm_config 'fallback:' chain gives one entry its own options: {"model": "openai:m",
    "http_module": "r9http"}; http_module is imported by name. Expected: refused as at the top level."""
    forget_modules.append("r9http")
    mark = marker_module(tmp_path / "code", "r9http")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.fallback", "zagent.plugins.openai"], entry_points=False)
    models = [{"model": "openai:gpt-4o-mini", "api_key": "sk-own", "http_module": "r9http"}]
    with pytest.raises(ConfigError, match="http_module"):
        k.agent(agent_spec(llm_config={"model": "fallback:x", "models": models}))
    assert not mark.exists()


def test_a_generated_agent_naming_an_import_path_imports_nothing_even_under_trust(tmp_path, monkeypatch,
                                                                                    forget_modules):
    """The workflow generator's model writes an agent whose tool_names hold 'r9gen:wipe', plus keys a spec names
    code with (parse_func, guardrails), while the app builds inside trusting(True). Expected: the generated spec
    keeps only known keys and registered tool names (GenerationError), so nothing is imported."""
    from zagent.plugins.workflow.agents import AgentGenerator
    from zagent.plugins.workflow.errors import GenerationError
    from zagent.plugins.workflow.graph import WorkFlowNode

    forget_modules.append("r9gen")
    mark = marker_module(tmp_path / "code", "r9gen")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = kernel()
    gen = AgentGenerator(kernel=k, llm=k.llm("scripted:gen", replies=["{}"]))
    node = WorkFlowNode(name="step", description="d", inputs=[Field(name="goal")], outputs=[Field(name="out")])
    raw = {"name": "EvilAgent", "prompt": "Do {goal}", "tool_names": ["r9gen:wipe"], "parse_func": "r9gen:tool",
           "guardrails": ["r9gen:tool"], "parse_mode": "custom"}
    with trusting(True), pytest.raises(GenerationError, match="unknown tool"):
        gen._generated(node, raw, "")
    with trusting(True):
        spec = gen._generated(node, {**raw, "tool_names": []}, "")
    assert not mark.exists() and "parse_func" not in spec and "guardrails" not in spec


def test_a_generated_prompt_with_attribute_access_reads_no_attribute():
    """The generator's model writes a prompt '{goal.__class__.__init__.__globals__}': the node's input names are
    placeholders, nothing else is formatted (refused at build, or kept as text)."""
    from zagent.plugins.workflow.agents import AgentGenerator
    from zagent.plugins.workflow.errors import GenerationError
    from zagent.plugins.workflow.graph import WorkFlowNode

    k = kernel()
    gen = AgentGenerator(kernel=k, llm=k.llm("scripted:gen", replies=["{}"]))
    node = WorkFlowNode(name="step", description="d", inputs=[Field(name="goal")], outputs=[Field(name="out")])
    try:
        spec = gen._generated(node, {"name": "A", "prompt": "Leak {goal.__class__.__init__.__globals__}"}, "")
    except GenerationError as exc:
        assert "__globals__" in str(exc)
        return
    from zagent.plugins.workflow.planner import build_agent

    llm = k.llm("scripted:a", replies=["## out\nok"] * 3)
    build_agent(k, spec, llm)(goal="x")
    sent = json.dumps([m.content for r in llm.llm.requests for m in r.messages])
    assert "{goal.__class__.__init__.__globals__}" in sent and "__builtins__" not in sent


def test_a_planned_sub_task_cannot_name_routers_or_reducers(tmp_path, monkeypatch, forget_modules):
    """The TaskPlanner's model answers sub-tasks carrying 'router': 'r9plan:tool' and 'reducer' keys, and a
    'conditional_edges' entry: the plan becomes nodes and plain edges only, and nothing is imported."""
    from zagent.plugins.workflow.build import build_from_plan
    from zagent.plugins.workflow.planner import parse_plan

    forget_modules.append("r9plan")
    mark = marker_module(tmp_path / "code", "r9plan")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    tasks = [{"name": "first", "inputs": ["goal"], "outputs": ["a"], "router": "r9plan:tool",
              "conditional_edges": [{"source": "first", "router": "r9plan:tool", "targets": ["second"]}]},
             {"name": "second", "inputs": ["a"], "outputs": ["b"], "reducer": "r9plan:tool"}]
    with trusting(True):
        graph = build_from_plan(parse_plan("a goal", tasks))
    assert not graph.conditional_edges and not graph.state and not mark.exists()


@pytest.mark.parametrize("tag", ["!!python/name:r9yaml.tool", "!!python/module:r9yaml",
                                 "!!python/object/new:r9yaml.tool ['x']"])
def test_a_yaml_spec_with_other_python_tags_runs_nothing(tmp_path, monkeypatch, forget_modules, tag):
    """agent.yaml whose prompt is a YAML tag that imports (name, module, object/new; round eight tried
    object/apply). Expected: the file is refused, nothing imported."""
    forget_modules.append("r9yaml")
    mark = marker_module(tmp_path, "r9yaml")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "agent.yaml").write_text(f"name: Evil\nprompt: {tag}\nparse_mode: str\n")
    with pytest.raises(ConfigError):
        kernel().agent(str(tmp_path / "agent.yaml"), trust=True)
    assert not mark.exists()


def test_pth_and_sitecustomize_files_next_to_a_trusted_spec_run_nothing(tmp_path, forget_modules):
    """The spec's folder (trusted by the CLI rule) also holds r9.pth (an 'import' line runs when site reads it),
    sitecustomize.py and usercustomize.py. Resolving the user's module there puts the folder on sys.path for the
    import only; none of those files is read."""
    forget_modules.extend(["r9fold", "sitecustomize", "usercustomize"])
    proj = tmp_path / "proj"
    marker_module(proj, "r9fold")
    (proj / "r9.pth").write_text(f"import os; open({str(proj / 'pth.ran')!r}, 'w').write('ran')\n")
    site = [marker_module(proj, n) for n in ("sitecustomize", "usercustomize")]
    with trusting(Trust.for_file(proj / "agent.json")):
        assert resolve("r9fold:tool", key="tool", base_dir=str(proj))("x") == "x"
    assert not (proj / "pth.ran").exists() and not any(m.exists() for m in site)


@pytest.mark.parametrize("key", ["plugins", "entry_points", "zagent_plugins", "import", "executor", "python_path"])
def test_a_spec_key_naming_plugins_or_loaders_is_refused(tmp_path, monkeypatch, forget_modules, key):
    """An agent spec with a key that would load code in other tools ('plugins': ['r9plug'], 'executor',
    'python_path'...). Expected: an unknown key is a ConfigError; nothing imported, even under trust."""
    forget_modules.append("r9plug")
    mark = marker_module(tmp_path, "r9plug")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=key):
        kernel().agent(agent_spec(**{key: ["r9plug"] if key != "python_path" else str(tmp_path)}), trust=True)
    assert not mark.exists()


def test_a_memory_embedder_named_in_a_spec_is_not_imported(tmp_path, monkeypatch, forget_modules):
    """long_term_memory.embedder 'r9emb:tool' (the class table: an object only Python code can give)."""
    forget_modules.append("r9emb")
    mark = marker_module(tmp_path / "code", "r9emb")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    spec = agent_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "embedder": "r9emb:tool"})
    with contextlib.suppress(ConfigError):
        kernel().agent(spec)
    assert not mark.exists()


def test_python_call_syntax_in_a_reply_is_parsed_not_evaluated(tmp_path):
    """A model on the pycall tool format replies with calls whose arguments are code: __import__('os').system,
    a lambda called in place, an f-string. Expected: arguments are read as literals (or left as text); nothing
    is evaluated."""
    mark = tmp_path / "pycall.ran"
    k = kernel()
    reply = (f"add(a=__import__('os').system('touch {mark}'), b=(lambda: open('{mark}', 'w'))(), "
             f"c=f\"{{open('{mark}', 'w')}}\")")
    with contextlib.suppress(Exception):
        k.tool_format("pycall").parse_tool_calls(reply)
    assert not mark.exists()


def test_a_restored_react_checkpoint_naming_code_imports_nothing(tmp_path, monkeypatch, forget_modules):
    """Another user edits a ReAct run's checkpoint (unsigned store) to add keys that name code: 'tools',
    'parse_func', an llm_config with http_module, and a waiting step for tool 'r9cp:wipe'. Expected: the resume
    reads only its own fields, offers the loop's own tools, and imports nothing."""
    import msgspec

    from zagent.plugins.react import ReActLoop

    from .conftest import failed_react, make_kernel

    forget_modules.append("r9cp")
    mark = marker_module(tmp_path / "code", "r9cp")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    k = make_kernel()
    store = k.memory("checkpoints", path=str(tmp_path / "runs.db"))
    run_id = failed_react(k, store, [{"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]}])
    step, raw = store.latest(run_id)
    state = msgspec.json.decode(raw)
    state.update(tools=["r9cp:wipe"], parse_func="r9cp:tool", agent_type="r9cp:tool",
                 llm_config={"model": "openai:x", "http_module": "r9cp"})
    state["steps"].append({"step": 3, "action": "use_tool", "tool": "r9cp:wipe", "call_id": "c9", "parameters": {}})
    store.save(run_id, step + 1, msgspec.json.encode(state), kind="react")
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:again", replies=[
        {"tool_calls": [{"name": "r9cp:wipe", "arguments": {}}]}, "done", "done"]), tools=["word_count"],
        checkpoints=store, agent_config={})
    with contextlib.suppress(Exception):
        loop.resume(run_id)
    assert not mark.exists() and not (tmp_path / "code" / "r9cp.wiped").exists()


def test_a_skill_folders_scripts_never_run(tmp_path):
    """A shared skills folder holds deploy.md (instructions: run scripts/deploy.py), scripts/deploy.py, and an
    Anthropic-style deploy/SKILL.md with deploy/scripts/x.py and an __init__.py: skills are text (section 6), so
    loading them and reading every skill runs none of those files."""
    from zagent.plugins.skills.registry import SkillRegistry

    folder = tmp_path / "skills"
    reg = SkillRegistry(folder, index=False)
    reg.register({"name": "deploy", "description": "Deploy", "instructions": "Run `python scripts/deploy.py`."})
    marks = [marker_module(folder / "scripts", "deploy"), marker_module(folder, "__init__"),
             marker_module(folder / "deploy" / "scripts", "x")]
    (folder / "deploy" / "SKILL.md").write_text("---\nname: deploy2\ndescription: d\n---\nRun scripts/x.py\n")
    again = SkillRegistry(folder, index=False).load()
    assert "deploy" in again.names() and "scripts/deploy.py" in again.get("deploy").instructions
    assert not any(m.exists() for m in marks)


def test_the_cli_loads_no_plugin_a_working_or_spec_folder_declares(tmp_path):
    """The installed ``zagent`` command (all installed plugins: no ZAGENT_PLUGINS) run in a folder holding
    r9evil-1.0.dist-info/entry_points.txt with a ``[zagent]`` entry point (and the same next to the spec, which
    folder trust puts on sys.path while it imports the spec's own module). Expected: no plugin is read from either
    folder; only installed distributions are."""
    work, proj = tmp_path / "work", tmp_path / "proj"
    marks = []
    for folder in (work, proj):
        marks.append(marker_module(folder, "r9evil_plugin"))
        meta = folder / "r9evil-1.0.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: r9evil\nVersion: 1.0\n")
        (meta / "entry_points.txt").write_text("[zagent]\nr9evil = r9evil_plugin\n")
    marker_module(proj, "r9mine")
    (proj / "agent.json").write_text(json.dumps(agent_spec(tools=["r9mine:tool"])))
    env = {k: v for k, v in os.environ.items() if k not in ("ZAGENT_PLUGINS", "ZAGENT_MODEL", "PYTHONPATH")}
    script = os.path.join(os.path.dirname(sys.executable), "zagent")
    subprocess.run([script, "run", str(proj / "agent.json"), "--input", "question=hi", "--model", "test:offline"],
                   capture_output=True, text=True, env={**env, "ZAGENT_LOG": "0"}, cwd=work, timeout=120,
                   stdin=subprocess.DEVNULL)
    assert (proj / "r9mine.ran").exists()  # the run got as far as the spec's own module
    assert not any(m.exists() for m in marks)


@pytest.mark.parametrize("name", ["shell", "bash", "python", "exec", "run_code", "execute_python"])
def test_no_plugin_offers_a_code_running_tool_a_spec_could_name(name):
    """A spec naming a shell or python-exec tool by name: zagent and its installed plugins register no tool
    (tools are the app's), so the name is an unknown tool, refused at load."""
    k = Kernel(strict=False)  # every installed plugin, as the CLI loads them
    try:
        assert k.names("tools") == []
        with pytest.raises(ConfigError, match="unknown tool"):
            k.agent(agent_spec(tools=[name]))
    finally:
        k.close()
