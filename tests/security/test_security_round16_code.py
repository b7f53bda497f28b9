"""Round sixteen, code running where the embedding app or the CLI user did not say so.

Tried, and whether it got through on the code of the round's start:

- the user's own flags naming code (``zagent eval --scorer function:fn=PKG:f``, ``zagent chat --tools PKG:f``, and
  ``zagent mcp serve --tool PKG:f`` in ``contrib/zagent-mcp/tests/test_mcp_round16_code.py``) run from a downloaded
  folder (a benchmark's cases, a cloned repository): the CLI searched the working folder *first* for every
  top-level import while the named module loaded, so the folder's ``colorsys.py`` ran in place of the standard
  library module the user's installed scorer imports, and its ``PKG.py`` in place of the installed ``PKG`` the
  user named: GOT THROUGH (4) -- fixed: the working folder of the user's flags is searched *after* ``sys.path``
  (``Trust.for_folder(..., last=True)``, ``finder.LateFolderFinder``): a module there is found only when nothing
  installed has its name, so the user's own ``mytools.py`` there still loads
- a key inside a file turning trust on (``trust``, ``trusted_imports`` at the top or in ``agent_config``,
  ``rails`` or ``llm_config``; a workflow's and a group chat's too): held
- a ``zagent batch`` inputs line (or eval case) carrying the payload keys a remote worker reads (``spec``, ``trust``,
  ``graph``): held, an item's values stay its inputs
- a recording (``replay:``) whose error names a class other than a provider error: held
- keys of class code written as mappings or lists holding an import path, an import path as ``tool_format``: held
- a Python-call reply whose arguments are comprehensions, a walrus, ``*``/``**`` unpacking, an ``open`` call, a
  dunder chain or a conditional (round nine tried calls, lambdas and f-strings): held, nothing evaluated
- ``long_term_memory.embedder`` (class code) given as text, a mapping or a list in an agent file or a workflow
  node's inline agent: GOT THROUGH as a bare ``AttributeError`` at run time (a workflow's earlier nodes ran first)
  -- fixed: a ``ConfigError`` naming the key when the agent is built
"""

import json
import os
import subprocess
import sys

import msgspec
import pytest

from zagent import ConfigError, Kernel
from zagent.errors import ProviderError

from .conftest import CLI_PLUGINS, PLUGINS, agent_spec

EVAL_PLUGINS = CLI_PLUGINS + ",batch,evals"


def _planted(path, mark, extra=""):
    """A module whose top-level code only leaves ``mark`` (a file): importing it is running it."""
    path.write_text(f"open({str(mark)!r}, 'w').close()\n{extra}")


def _zagent(*args, cwd, lib=None, text=None):
    """``zagent ARGS`` run from ``cwd`` (``python -m`` drops that folder, as the installed script never has it),
    with ``lib`` on ``PYTHONPATH`` standing for the user's installed packages."""
    env = {**os.environ, "ZAGENT_PLUGINS": EVAL_PLUGINS, "ZAGENT_LOG": "0"}
    env.pop("ZAGENT_MODEL", None)
    if lib is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(lib), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd, input=text)


@pytest.fixture
def benchmark(tmp_path):
    """``(lib, bench, agent file)``: the user's installed scorer/tool package ``r16lib`` (it imports the standard
    library's ``colorsys``, which nothing imported before), a downloaded benchmark folder with its cases, and the
    user's own agent file elsewhere."""
    lib, bench, own = tmp_path / "lib", tmp_path / "bench", tmp_path / "own"
    for folder in (lib, bench, own):
        folder.mkdir()
    (lib / "r16lib.py").write_text("import colorsys\n\ndef check(output, expected, case):\n    return True\n\n"
                                   "def shout(text: str) -> str:\n    'Shout.'\n    return text.upper()\n")
    (bench / "cases.jsonl").write_text(json.dumps({"id": "a", "inputs": {"question": "q"},
                                                   "expected": {"answer": "a"}}) + "\n")
    (own / "agent.json").write_text(json.dumps(agent_spec()))
    return lib, bench, own / "agent.json"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shadow", ["colorsys", "r16lib"])
def test_eval_scorer_flag_in_a_downloaded_folder_runs_none_of_its_modules(benchmark, tmp_path, shadow):
    """Attack (got through, round sixteen): the user runs ``zagent eval cases.jsonl --agent ~/own/agent.json
    --scorer function:fn=r16lib:check`` inside a downloaded benchmark folder that holds ``colorsys.py`` (a standard
    module the user's installed ``r16lib`` imports) or ``r16lib.py`` itself. The CLI searched the working folder
    first for every import while loading ``r16lib``: the planted file ran. Defence: the working folder of the
    user's flags is searched after ``sys.path``; nothing planted runs and the score comes from the user's
    scorer."""
    lib, bench, agent = benchmark
    mark = tmp_path / "planted.ran"
    _planted(bench / f"{shadow}.py", mark, "def check(output, expected, case):\n    return False\n")
    done = _zagent("eval", "cases.jsonl", "--agent", str(agent), "--scorer", "function:fn=r16lib:check", "--json",
                   cwd=bench, lib=lib)
    assert not mark.exists(), done.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totals"]["passed"] == 1


@pytest.mark.timeout(120)
def test_eval_scorer_flag_still_finds_the_users_module_in_the_working_folder(benchmark, tmp_path):
    """Guard: a scorer module that is only in the working folder (the user's own ``myscore.py``, importing a
    sibling ``myhelp.py`` there) is still found there by ``--scorer``."""
    lib, bench, agent = benchmark
    (bench / "myhelp.py").write_text("OK = True\n")
    (bench / "myscore.py").write_text("import myhelp\n\ndef check(output, expected, case):\n    return myhelp.OK\n")
    done = _zagent("eval", "cases.jsonl", "--agent", str(agent), "--scorer", "function:fn=myscore:check", "--json",
                   cwd=bench, lib=lib)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totals"]["passed"] == 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shadow", ["colorsys", "r16lib"])
def test_chat_tools_flag_in_a_downloaded_folder_runs_none_of_its_modules(benchmark, tmp_path, shadow):
    """Attack (got through, round sixteen): ``zagent chat --tools r16lib:shout`` (the user's installed package) run
    inside a cloned repository holding ``colorsys.py`` or ``r16lib.py``: the planted file ran. Defence: the working
    folder is searched after ``sys.path`` for ``--tools``; the chat starts with the user's tool."""
    lib, bench, _ = benchmark
    mark = tmp_path / "planted.ran"
    _planted(bench / f"{shadow}.py", mark, "def shout(text: str) -> str:\n    'Planted.'\n    return text\n")
    done = _zagent("chat", "--tools", "r16lib:shout", "--model", "test:echo", cwd=bench, lib=lib, text="hi\n")
    assert not mark.exists(), done.stderr
    assert done.returncode == 0, done.stderr


@pytest.mark.timeout(120)
def test_chat_tools_flag_still_finds_the_users_module_in_the_working_folder(benchmark, tmp_path):
    """Guard: ``zagent chat --tools mytools:shout`` with ``mytools.py`` only in the working folder still loads it
    (its top-level code leaves a mark: it ran)."""
    lib, bench, _ = benchmark
    mark = tmp_path / "mytools.ran"
    _planted(bench / "mytools.py", mark, "def shout(text: str) -> str:\n    'Shout.'\n    return text.upper()\n")
    done = _zagent("chat", "--tools", "mytools:shout", "--model", "test:echo", cwd=bench, lib=lib, text="hi\n")
    assert done.returncode == 0, done.stderr
    assert mark.exists()


def test_the_late_folder_never_shadows_a_module_found_on_sys_path(tmp_path, forget_modules):
    """Guard of the mechanism: under ``Trust.for_folder(folder, everything=True, last=True)`` a ``colorsys.py`` in
    the folder is not what ``import colorsys`` gets while a module of the folder loads, and a module found only
    there still loads."""
    from zagent.speckit import Trust, trusting
    from zagent.speckit.trust import resolve

    forget_modules.extend(["r16late", "colorsys"])
    sys.modules.pop("colorsys", None)
    mark = tmp_path / "colorsys.ran"
    _planted(tmp_path / "colorsys.py", mark)
    (tmp_path / "r16late.py").write_text("import colorsys\n\ndef fn():\n    return colorsys.__file__\n")
    with trusting(Trust.for_folder(str(tmp_path), everything=True, last=True)):
        fn = resolve("r16late:fn", key="tool")
    assert not mark.exists()
    assert not fn().startswith(str(tmp_path))


# --- keys inside a file that would turn trust on ----------------------------------------------------------------


@pytest.fixture
def untrusted_module(tmp_path, forget_modules):
    """``r16evil``: importable (on ``sys.path``) but trusted by nobody; importing it leaves a mark."""
    folder = tmp_path / "site"
    folder.mkdir()
    mark = tmp_path / "r16evil.ran"
    _planted(folder / "r16evil.py", mark, "def fn(text: str) -> str:\n    'Run.'\n    return text\n\n"
                                          "def route(state):\n    return 'b'\n")
    sys.path.insert(0, str(folder))
    forget_modules.append("r16evil")
    yield mark
    sys.path.remove(str(folder))


def _node(name, agent, read="question", write="answer"):
    return {"name": name, "description": name, "inputs": [{"name": read}], "outputs": [{"name": write}],
            "agents": [agent]}


def _second(**over):
    """Node ``b``'s agent: reads node ``a``'s ``answer``, writes ``final``."""
    return {**agent_spec(name="B", llm="test:echo", prompt="Check: {answer}", inputs=[{"name": "answer"}],
                         outputs=[{"name": "final"}]), **over}


KEYED = {
    "agent trust": agent_spec(trust=True, tools=["r16evil:fn"]),
    "agent trusted_imports": agent_spec(trusted_imports=["*"], tools=["r16evil:fn"]),
    "agent agent_config": agent_spec(agent_config={"trusted_imports": ["*"], "trust": True}, tools=["r16evil:fn"]),
    "agent llm_config": agent_spec(llm_config={"trusted_imports": ["*"]}, tools=["r16evil:fn"]),
    "react agent_config": {"type": "react", "name": "r", "agent_config": {"trusted_imports": ["*"]},
                           "tools": ["r16evil:fn"]},
    "react rails": {"type": "react", "name": "r", "rails": {"trusted_imports": ["*"]}, "tools": ["r16evil:fn"]},
    "react parse_func": agent_spec(agent_config={"trust": "everything"}, parse_mode="custom",
                                   parse_func="r16evil:fn"),
}


@pytest.mark.parametrize("case", sorted(KEYED))
def test_a_key_inside_an_agent_file_does_not_turn_trust_on(untrusted_module, case):
    """Attack (held): an agent file asks for trust itself (``trust: true``, ``trusted_imports: ["*"]`` at the top,
    in ``agent_config``, ``rails`` or ``llm_config``) and names ``r16evil:fn``. Defence: trust comes only from the
    app or the CLI user: ``ConfigError``, ``r16evil`` never imported."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(ConfigError):
        k.agent(KEYED[case])
    k.close()
    assert not untrusted_module.exists()


@pytest.mark.parametrize("where", ["top", "state"])
def test_a_key_inside_a_workflow_file_does_not_turn_trust_on(untrusted_module, tmp_path, where):
    """Attack (held): a workflow file carries ``trusted_imports: ["*"]`` (at the top, or beside its state) and a
    router ``r16evil:route``. Defence: loading or running it is a ``ConfigError``; ``r16evil`` never imported."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = {"name": "w", "goal": "g", "inputs": [{"name": "question"}],
             "nodes": [_node("a", agent_spec(name="A", llm="test:echo")),
                       _node("b", _second(), "answer", "final")],
             "edges": [], "conditional_edges": [{"source": "a", "router": "r16evil:route", "targets": ["b"]}]}
    if where == "top":
        graph["trusted_imports"] = ["*"]
    else:
        graph["state"] = [{"name": "trusted_imports", "default": ["*"]}]
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(graph))
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(ConfigError, match="r16evil|trusted_imports"):
        WorkFlowExecutor(kernel=k).run(WorkFlowGraph.load(str(path)), {"question": "q"})
    k.close()
    assert not untrusted_module.exists()


def test_a_key_inside_a_group_chat_file_does_not_turn_trust_on(untrusted_module, tmp_path):
    """Attack (held): a group chat file says ``trusted_imports: ["*"]`` and its selection policy is
    ``r16evil:fn``. Defence: ``ConfigError`` when it loads; never imported."""
    from zagent.plugins.groupchat import GroupChat

    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"name": "c", "trusted_imports": ["*"], "selection": {"policy": "r16evil:fn"},
                                "agents": [{"type": "react", "name": "a", "llm": "test:echo"}]}))
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(ConfigError):
        GroupChat.load(str(path), k)
    path.write_text(json.dumps({"name": "c", "selection": {"policy": "r16evil:fn", "trusted_imports": ["*"]},
                                "agents": [{"type": "react", "name": "a", "llm": "test:echo"}]}))
    with pytest.raises(ConfigError):
        GroupChat.load(str(path), k)
    k.close()
    assert not untrusted_module.exists()


# --- data items and recordings ------------------------------------------------------------------------------------


class _Shipping:
    """An executor that ships each unit as a remote one does (JSON, ``run_unit`` on a worker kernel)."""

    name = "r16shipping"
    in_process = False
    concurrency = 2

    def __init__(self):
        self.worker = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
        self.payloads = []

    async def submit(self, unit):
        from zagent.agentkit.units import run_unit

        runner, payload = unit.remote_parts(self.name)
        wire = msgspec.json.decode(msgspec.json.encode(payload))
        self.payloads.append(wire)
        return msgspec.json.decode(msgspec.json.encode(await run_unit(self.worker, runner, wire)))

    async def aclose(self):
        await self.worker.aclose()


def test_a_batch_item_cannot_replace_what_the_worker_builds(untrusted_module, tmp_path):
    """Attack (held): a ``zagent batch`` inputs line carries the keys a worker reads from a unit's payload:
    ``spec`` (an agent naming ``r16evil:fn``), ``trust: {"everything": true}`` and ``graph``. Defence: an item's
    values stay its inputs; the worker builds the driver's spec under the driver's trust; ``r16evil`` never
    imported."""
    made = []

    class Plugin:
        def zagent_register_executors(self, register):
            def make(**options):
                made.append(_Shipping())
                return made[-1]

            register("r16shipping", make)

    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.batch", Plugin()], entry_points=False, strict=True)
    evil = agent_spec(name="Planted", tools=["r16evil:fn"], llm="test:echo")
    items = [{"question": "q", "spec": evil, "trust": {"everything": True}, "graph": {"name": "x"},
              "inputs": {"question": "q"}}]
    report = k.batch(agent_spec(llm="test:echo"), items, executor="r16shipping", out=str(tmp_path / "out.jsonl"))
    assert report.summary.done == 1 and report.summary.failed == 0
    payload = made[0].payloads[0]
    assert payload["trust"]["everything"] is False and payload["spec"]["name"] == "Evil" \
        and "tools" not in payload["spec"]
    assert payload["inputs"]["trust"] == {"everything": True}
    for ex in made:
        ex.worker.close()
    k.close()
    assert not untrusted_module.exists()


@pytest.mark.parametrize("named", ["ConfigError", "Kernel", "__builtins__", "__class__", "PluginError"])
def test_a_recordings_error_names_no_class_to_build(tmp_path, named):
    """Attack (held): a shared recording's error record names ``{"type": NAME}``: something other than a provider
    error (a zagent class, a dunder). Defence: only a ``ProviderError`` subclass of ``zagent.errors`` is raised;
    anything else is a plain ``ProviderError`` saying it was replayed."""
    from zagent.types import LLMRequest, Message

    path = tmp_path / "rec.jsonl"
    request = LLMRequest(model="m", messages=[Message(role="user", content="hi")])
    path.write_text(msgspec.json.encode({"model": "test:echo", "request": request,
                                         "error": {"type": named, "message": "boom"}}).decode() + "\n")
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    llm = k.llm("replay:test:echo", path=str(path), match="order")
    with pytest.raises(ProviderError) as caught:
        llm.send(llm.request("hi"))
    k.close()
    assert type(caught.value) is ProviderError and "(replayed) boom" in str(caught.value)


def test_a_python_call_reply_evaluates_none_of_its_arguments(tmp_path):
    """Attack (held): a model on the Python-call format answers calls whose arguments are code of kinds round nine
    did not try: a comprehension, a walrus, ``*``/``**`` unpacking, an ``open`` call, a dunder chain to
    ``object.__subclasses__``, a conditional expression. Defence: ``ast`` reads them; each is a call error the
    model is told about; nothing runs."""
    from zagent.plugins.parsers.pycall import read

    mark = tmp_path / "pycall.ran"
    touch = f"__import__('pathlib').Path({str(mark)!r}).touch()"
    replies = [
        f"[shout(text=[{touch} for _ in [1]])]",
        f"[shout(text=(x := {touch}))]",
        f"[shout(*[{touch}])]",
        f"[shout(**{{'text': {touch}}})]",
        f"[shout(text=open({str(mark)!r}, 'w'))]",
        "[shout(text=().__class__.__base__.__subclasses__())]",
        f"[shout(text={touch} if 1 else 2)]",
    ]
    for reply in replies:
        found = read(reply)
        assert found is not None and not found.calls and found.errors, reply
    assert not mark.exists()


# --- keys of class "code" given as data --------------------------------------------------------------------------


@pytest.mark.parametrize("embedder", ["r16evil:fn", {"name": "r16evil:fn"}, ["r16evil", "fn"]])
def test_a_spec_files_embedder_is_refused_when_the_agent_is_built(untrusted_module, tmp_path, embedder):
    """Attack (got through as a bare error, round sixteen): an agent file's ``long_term_memory.embedder`` (a key of
    class code: an object only Python code can give) names code as text, a mapping or a list. Before: the agent
    built, and its first run died on ``AttributeError: 'str' object has no attribute 'aembed'``. Defence: a
    ``ConfigError`` naming the key when the agent is built; nothing imported, no memory file made."""
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(agent_spec(llm="test:echo", use_long_term_memory=True,
                                          long_term_memory={"name": "sqlite", "path": "mem.db",
                                                            "embedder": embedder})))
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(ConfigError, match="long_term_memory.embedder"):
        k.agent(str(path))
    k.close()
    assert not untrusted_module.exists() and not (tmp_path / "mem.db").exists()


def test_a_workflow_nodes_inline_embedder_is_refused_before_any_node_runs(untrusted_module, tmp_path):
    """Attack (got through as a bare error, round sixteen): the same ``embedder`` text in the inline agent of a
    workflow file's second node. Before: node ``a`` ran (its model paid for), then node ``b`` failed on the
    option. Defence: a workflow error naming the key before any node runs; nothing imported."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph
    from zagent.plugins.workflow.errors import WorkFlowError

    second = _second(use_long_term_memory=True, long_term_memory={"name": "inprocess", "embedder": "r16evil:fn"})
    path = tmp_path / "wf.json"
    path.write_text(json.dumps({"name": "w", "goal": "g", "inputs": [{"name": "question"}],
                                "nodes": [_node("a", agent_spec(name="A", llm="test:echo")),
                                          _node("b", second, "answer", "final")],
                                "edges": [{"source": "a", "target": "b"}]}))
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(WorkFlowError, match="long_term_memory.embedder"):
        WorkFlowExecutor(kernel=k).run(WorkFlowGraph.load(str(path)), {"question": "q"})
    k.close()
    assert not untrusted_module.exists()


SHAPED = {
    "tools mapping": agent_spec(tools=[{"name": "r16evil:fn"}]),
    "output_validators mapping": agent_spec(output_validators=[{"fn": "r16evil:fn"}]),
    "guardrails list": agent_spec(guardrails=[["r16evil", "fn"]]),
    "parse_func list": agent_spec(parse_mode="custom", parse_func=["r16evil:fn"]),
    "output_type mapping": agent_spec(output_type={"module": "r16evil", "attr": "fn"}),
    "approver mapping": agent_spec(agent_config={"rails": {"approver": {"fn": "r16evil:fn"}}}),
    "react tools mapping": {"type": "react", "name": "r", "tools": [{"path": "r16evil:fn"}]},
    "react pinned mapping": {"type": "react", "name": "r", "pinned_tools": [{"name": "r16evil:fn"}]},
    "react approver list": {"type": "react", "name": "r", "rails": {"approver": ["r16evil:fn"]}},
    "react tool_format path": {"type": "react", "name": "r", "tool_format": "r16evil:fn"},
}


@pytest.mark.parametrize("case", sorted(SHAPED))
def test_code_keys_given_as_mappings_or_lists_import_nothing(untrusted_module, case):
    """Attack (held): a key of class code (``tools``, ``pinned_tools``, ``output_validators``, ``guardrails``,
    ``parse_func``, ``output_type``, ``rails.approver``) written as a mapping or a list that holds the import path,
    hoping a converter reads it another way, and an import path where a registered tool format is named. Defence:
    a ``ConfigError`` naming the key when the agent is built; ``r16evil`` never imported."""
    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    with pytest.raises(ConfigError):
        k.agent({**SHAPED[case], "llm": "test:echo"})
    k.close()
    assert not untrusted_module.exists()


def test_an_embedder_object_from_python_code_is_still_taken(tmp_path):
    """Guard: the app's own embedder object (anything with ``aembed``) in ``long_term_memory`` still builds and
    recalls by meaning."""

    class Embedder:
        async def aembed(self, texts):
            return [[float(len(t)), 1.0] for t in texts]

    k = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    agent = k.agent(agent_spec(llm="test:echo", use_long_term_memory=True, long_term_memory={
        "name": "sqlite", "path": str(tmp_path / "mem.db"), "embedder": Embedder()}), trust=True)
    agent.execute(inputs={"question": "q"})
    assert agent.recall("q")
    k.close()
