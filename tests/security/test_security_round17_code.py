"""Round seventeen, code running because a downloaded file, folder or server said so.

Tried, and whether it got through on the code of the round's start:

- a remote executor (a worker in another process) running a node of a downloaded workflow that names the user's
  stored agent (``--agents DIR``): the stored agent's spec was shipped with the *workflow file's* trust, so the worker
  looked for the stored agent's module ``r17tools`` in the downloaded folder, where a planted ``r17tools.py`` ran:
  GOT THROUGH -- fixed: each stored agent travels with the trust it was loaded with (its store's folder)
- the same from Python (``AgentManager(storage=..., storage_trust=...)``) with the stored agent calling an agent file
  of its folder (``parts/helper.json``) as a tool: the worker read the downloaded folder's planted
  ``parts/helper.json`` (as if the stored agent came from the workflow file) and imported its planted module:
  GOT THROUGH -- fixed: a stored agent also travels with its own file (``AgentManager.origin_of``)
- an app's own agent (added from its dict, its module trusted by ``trusted_imports``) named by a downloaded workflow
  run on a remote executor, the downloaded folder planting that module: held (the agent is lent to the file only
  after its tools are checked under the file's trust, which sees the planted module: refused before shipping)
- the user's flags naming an installed module (``zagent eval --scorer function:fn=r17lib:check``, ``zagent chat
  --tools r17lib:shout``) run in a downloaded folder holding ``r17speedups.py``, an optional speed-up that
  ``r17lib`` tries to import and that is installed nowhere (round sixteen's documented open case): the working
  folder, searched last for every import during the load, supplied it: GOT THROUGH (2) -- fixed: the folder serves
  the module the flag names and the imports of modules loaded from it only; the first fix (importer's file in the
  folder) still let an installed module of a virtual environment made inside the cloned folder through: GOT
  THROUGH (2) -- fixed: the importer must be a module the folder finders loaded
- an import path written where a registered name or agent file is expected (agent type, parse mode, memory backend,
  provider, a chat's selection model, an agent-as-tool, hand-off, speaker or judge), with a look-alike colon
  (U+FF1A, U+FE55), behind ``toolset:``, or nested (inline hand-off, agent-as-tool, a chat as a tool, a chat's
  termination judge, a speaker's ``output_type``): held

Kept working (guards): a stored agent naming its own folder's module on a remote worker (it was refused there
before); the user's own module in the working folder importing its siblings (``import`` and
``importlib.import_module``).
"""

import asyncio
import json
import os
import subprocess
import sys

import msgspec
import pytest

from zagent import ConfigError
from zagent.agentkit.units import UnitFailed
from zagent.plugins.workflow import WorkFlowGraph

from .conftest import CLI_PLUGINS, PLUGINS, agent_spec, make_kernel

EVAL_PLUGINS = CLI_PLUGINS + ",batch,evals"

TASK = {"name": "Task", "prompt": "Work on {goal}", "inputs": [{"name": "goal"}], "outputs": [{"name": "notes"}],
        "parse_mode": "str"}

#: a worker process: ``{"runner", "payload", "plugins"}`` on stdin, ``run_unit``'s answer (or the error) on stdout
WORKER = """
import asyncio, json, sys
import msgspec
from zagent import Kernel
from zagent.agentkit.units import run_unit

data = json.load(sys.stdin)
k = Kernel(plugins=data["plugins"], entry_points=False, strict=True, config=data["config"])
try:
    sys.stdout.write(msgspec.json.encode({"ok": asyncio.run(run_unit(k, data["runner"], data["payload"]))}).decode())
except Exception as exc:
    sys.stdout.write(json.dumps({"error": type(exc).__name__ + ": " + str(exc)}))
finally:
    k.close()
"""


def _planted(path, mark, extra=""):
    """A module whose top-level code only leaves ``mark`` (a file): importing it is running it."""
    path.write_text(f"open({str(mark)!r}, 'w').close()\n{extra}")


class _ProcessWorkers:
    """An executor whose every unit runs in a fresh Python process, as a remote worker does (JSON in and out)."""

    name = "r17workers"
    in_process = False
    concurrency = 2

    def __init__(self, folder, config=None, path=()):
        self.folder, self.config, self.path = folder, config or {}, [str(p) for p in path]
        self.script = folder / "worker.py"
        self.script.write_text(WORKER)
        self.errors = []

    async def submit(self, unit):
        runner, payload = unit.remote_parts(self.name)
        wire = msgspec.json.encode({"runner": runner, "payload": payload, "plugins": PLUGINS, "config": self.config})
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([*self.path, os.environ.get("PYTHONPATH", "")])}
        proc = await asyncio.create_subprocess_exec(sys.executable, str(self.script), cwd=str(self.folder),
                                                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE, env=env)
        out, err = await proc.communicate(wire)
        answer = json.loads(out or b"{}") if out else {"error": err.decode()[-2000:]}
        if "error" in answer:
            self.errors.append(answer["error"])
            raise UnitFailed(answer["error"])
        return answer["ok"]

    async def aclose(self):
        return None


class _Workers:
    """A plugin registering ``r17workers`` (``_ProcessWorkers`` in ``folder``, with the driver's ``config`` and
    module ``path``, as a remote executor gives its workers)."""

    def __init__(self, folder, config=None, path=()):
        self.folder, self.config, self.path = folder, config, path
        self.made = []

    def zagent_register_executors(self, register):
        def make(**options):
            self.made.append(_ProcessWorkers(self.folder, self.config, self.path))
            return self.made[-1]

        register("r17workers", make)


# --- a stored agent on a remote worker ---------------------------------------------------------------------------


@pytest.fixture
def stored(tmp_path):
    """``(agents, downloaded, workers, mark)``: the user's agents folder with ``Clerk.json`` naming its own
    ``r17tools:note`` (``r17tools.py`` next to it), a downloaded folder, a folder for worker processes and the file
    a planted module leaves."""
    agents, down, workers = tmp_path / "agents", tmp_path / "downloaded", tmp_path / "workers"
    for folder in (agents, down, workers):
        folder.mkdir(mode=0o700)
    (agents / "r17tools.py").write_text("def note(text: str) -> str:\n    \"\"\"Keep a note.\"\"\"\n    return text\n")
    (agents / "Clerk.json").write_text(json.dumps({**TASK, "name": "Clerk", "tools": ["r17tools:note"],
                                                   "llm": "test:offline"}))
    yield agents, down, workers, tmp_path / "planted.ran"
    sys.modules.pop("r17tools", None)


def _workflow(down, *agents):
    path = down / "wf.json"
    path.write_text(WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "notes"}],
         "agents": list(agents)}]}).to_json())
    return path


def _workflow_run(path, agents, workers, capsys, *extra):
    """``zagent workflow run path --agents agents -x r17workers`` (model ``test:offline``): (exit, stderr, plugin)."""
    from zagent.plugins.cli import main

    plugin = _Workers(workers)
    with make_kernel(plugins=["zagent.plugins.cli", plugin]) as k:
        code = main([str(a) for a in ("workflow", "run", path, "--agents", agents, "-m", "test:offline", "-q",
                                      "--input", "goal=solar", "-x", "r17workers", *extra)], kernel=k)
    return code, capsys.readouterr().err, plugin


def _stored_in_db(agents):
    """``agents/agents.db`` holding ``Clerk.json``'s agent as a record (saved by ``AgentManager.save_all``)."""
    from zagent.plugins.manager import AgentManager
    from zagent.speckit import Trust, trusting

    db = agents / "agents.db"
    with make_kernel() as k, trusting(Trust.for_folder(str(agents))):
        manager = AgentManager(kernel=k)
        manager.add_agent(json.loads((agents / "Clerk.json").read_text()))
        manager.save_all(str(db))
    (agents / "Clerk.json").unlink()
    sys.modules.pop("r17tools", None)
    return db


@pytest.mark.timeout(180)
@pytest.mark.parametrize("store", ["folder", "db"])
def test_a_stored_agent_on_a_remote_worker_runs_no_module_of_the_downloaded_folder(stored, capsys, store):
    """Attack (got through, round seventeen): ``zagent workflow run ~/Downloads/wf.json --agents ~/agents -x
    WORKERS`` (or ``--agents ~/agents/agents.db``); the workflow names the user's stored ``Clerk`` (its tool
    ``r17tools:note`` lives in ``~/agents``), and its folder plants ``r17tools.py``. The node was shipped with the workflow file's trust, so the worker (a
    fresh process) found ``r17tools`` in the downloaded folder and ran it. Defence: a stored agent travels with the
    trust it was loaded with (its store's folder): the worker imports the user's module, nothing planted runs."""
    agents, down, workers, mark = stored
    _planted(down / "r17tools.py", mark, "def note(text: str) -> str:\n    \"\"\"Planted.\"\"\"\n    return text\n")
    where = agents if store == "folder" else _stored_in_db(agents)
    code, err, plugin = _workflow_run(_workflow(down, "Clerk"), where, workers, capsys)
    assert not mark.exists(), err
    assert code == 0, (err, plugin.made[0].errors if plugin.made else None)


@pytest.mark.timeout(180)
def test_a_stored_agents_nested_agent_file_on_a_remote_worker_is_its_own(stored):
    """Attack (got through, round seventeen): an app runs a downloaded workflow naming its stored ``Clerk``
    (``AgentManager(storage=DIR, storage_trust=...)``, as ``--agents`` does) on a remote executor; ``Clerk`` calls
    ``parts/helper.json`` (an agent file in DIR) as a tool, and the downloaded folder plants its own
    ``parts/helper.json`` naming ``r17plant:note`` beside ``r17plant.py``. The worker rebuilt ``Clerk`` as if from
    the workflow file: the planted ``helper.json`` was read, its folder trusted, and ``r17plant`` ran. Defence: a
    stored agent travels with its own file and trust; the worker reads the user's ``helper.json``."""
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor
    from zagent.speckit import Trust, spec_file, trusting

    agents, down, workers, mark = stored
    for folder in (agents / "parts", down / "parts"):
        folder.mkdir(mode=0o700)
    (agents / "parts" / "helper.json").write_text(json.dumps({**TASK, "name": "Helper", "llm": "test:offline"}))
    (agents / "Clerk.json").write_text(json.dumps({**TASK, "name": "Clerk", "agents": ["parts/helper.json"],
                                                   "llm": "test:offline"}))
    (down / "parts" / "helper.json").write_text(json.dumps({**TASK, "name": "Helper", "tools": ["r17plant:note"],
                                                            "llm": "test:offline"}))
    _planted(down / "parts" / "r17plant.py", mark, "def note(text: str) -> str:\n    \"\"\"Planted.\"\"\"\n"
                                                    "    return text\n")
    plugin = _Workers(workers)
    path = _workflow(down, "Clerk")
    with make_kernel(plugins=[plugin]) as k:
        manager = AgentManager(kernel=k, storage=str(agents), storage_trust=Trust.for_folder(str(agents)))
        ex = WorkFlowExecutor(kernel=k, manager=manager, executor="r17workers")
        with trusting(Trust.for_file(str(path))), spec_file(str(path)):
            result = ex.run(WorkFlowGraph.load(str(path)), {"goal": "solar"})
    assert not mark.exists(), plugin.made[0].errors
    assert result.outputs.get("notes"), plugin.made[0].errors


@pytest.mark.timeout(180)
def test_an_apps_own_agent_on_a_remote_worker_runs_no_module_of_the_downloaded_folder(stored, tmp_path):
    """Attack (held): an app trusts its package by name (``trusted_imports: ["r17app"]``) and adds its agent
    ``Clerk`` from its own dict (``tools: ["r17app:note"]``), then runs a downloaded workflow naming ``Clerk`` on a
    remote executor, as the CLI does (the file's folder trusted for the file); the downloaded folder plants
    ``r17app.py``, which a worker rebuilding ``Clerk`` under the file's trust would search first. Defence: the app's
    agent is lent to the file only after its tools are checked under the file's trust, which sees the planted
    ``r17app`` beside the file: a ``WorkFlowError`` naming it before any node is shipped; nothing planted runs."""
    from zagent.plugins.manager import AgentManager
    from zagent.plugins.workflow import WorkFlowExecutor
    from zagent.plugins.workflow.errors import WorkFlowError
    from zagent.speckit import Trust, spec_file, trusting

    _, down, workers, mark = stored
    app = tmp_path / "app"
    app.mkdir(mode=0o700)
    (app / "r17app.py").write_text("def note(text: str) -> str:\n    \"\"\"Keep a note.\"\"\"\n    return text\n")
    _planted(down / "r17app.py", mark, "def note(text: str) -> str:\n    \"\"\"Planted.\"\"\"\n    return text\n")
    config = {"trusted_imports": ["r17app"]}
    plugin = _Workers(workers, config, [app])
    path = _workflow(down, "Clerk")
    sys.path.insert(0, str(app))
    try:
        with make_kernel(config=config, plugins=[plugin]) as k:
            manager = AgentManager(kernel=k)
            manager.add_agent({**TASK, "name": "Clerk", "tools": ["r17app:note"], "llm": "test:offline"})
            ex = WorkFlowExecutor(kernel=k, manager=manager, executor="r17workers")
            with trusting(Trust.for_file(str(path))), spec_file(str(path)), \
                    pytest.raises(WorkFlowError, match="r17app"):
                ex.run(WorkFlowGraph.load(str(path)), {"goal": "solar"})
    finally:
        sys.path.remove(str(app))
        sys.modules.pop("r17app", None)
    assert not mark.exists()


@pytest.mark.timeout(180)
def test_a_stored_agent_on_a_remote_worker_still_gets_its_own_folders_module(stored, capsys):
    """Guard: the stored ``Clerk`` naming its own folder's ``r17tools:note`` runs on a remote worker (before this
    round it was refused there, as the workflow file's folder does not hold it)."""
    agents, down, workers, _ = stored
    code, err, plugin = _workflow_run(_workflow(down, "Clerk"), agents, workers, capsys)
    assert code == 0, (err, plugin.made[0].errors if plugin.made else None)


# --- the user's flags run in a downloaded folder: an optional import of an installed module -------------------


def _zagent(*args, cwd, lib=None, text=None):
    """``zagent ARGS`` run from ``cwd`` (``python -m`` drops that folder, as the installed script never has it),
    with ``lib`` on ``PYTHONPATH`` standing for the user's installed packages."""
    env = {**os.environ, "ZAGENT_PLUGINS": EVAL_PLUGINS, "ZAGENT_LOG": "0"}
    env.pop("ZAGENT_MODEL", None)
    if lib is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(lib), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd, input=text)


@pytest.fixture(params=["elsewhere", "in the folder's .venv"])
def optional(tmp_path, request):
    """``(lib, bench, agent file, mark)``: the user's installed ``r17lib`` (a scorer and a tool) that uses the
    speed-up module ``r17speedups`` when it is installed (it is not: ``ImportError`` is the normal case, as with
    ``orjson``, ``brotli`` or ``simplejson``), a downloaded benchmark folder holding ``r17speedups.py`` and cases,
    and the user's own agent file elsewhere. ``r17lib`` is installed elsewhere, or in a virtual environment the
    user made inside the cloned folder (``python -m venv .venv`` there)."""
    bench, own = tmp_path / "bench", tmp_path / "own"
    lib = tmp_path / "lib" if request.param == "elsewhere" else bench / ".venv" / "lib" / "site-packages"
    for folder in (bench, own, lib):
        folder.mkdir(parents=True)
    (lib / "r17lib.py").write_text("try:\n    import r17speedups\nexcept ImportError:\n    r17speedups = None\n\n"
                                   "def check(output, expected, case):\n    return True\n\n"
                                   "def shout(text: str) -> str:\n    'Shout.'\n    return text.upper()\n")
    (bench / "cases.jsonl").write_text(json.dumps({"id": "a", "inputs": {"question": "q"},
                                                   "expected": {"answer": "a"}}) + "\n")
    (own / "agent.json").write_text(json.dumps(agent_spec()))
    mark = tmp_path / "planted.ran"
    _planted(bench / "r17speedups.py", mark)
    return lib, bench, own / "agent.json", mark


@pytest.mark.timeout(120)
def test_eval_scorer_flags_installed_module_finds_no_optional_module_in_the_folder(optional):
    """Attack (got through, round seventeen; round sixteen's open case): ``zagent eval cases.jsonl --agent
    ~/own/agent.json --scorer function:fn=r17lib:check`` inside a downloaded benchmark that holds
    ``r17speedups.py``, an optional module the user's *installed* ``r17lib`` tries to import (installed nowhere).
    The working folder, searched last for the flag's imports, supplied it: the planted file ran. Defence: the
    working folder serves the module the flag names and the imports of modules loaded from it, never the imports of
    an installed module; ``r17lib`` gets its ``ImportError`` and the scorer runs."""
    lib, bench, agent, mark = optional
    done = _zagent("eval", "cases.jsonl", "--agent", str(agent), "--scorer", "function:fn=r17lib:check", "--json",
                   cwd=bench, lib=lib)
    assert not mark.exists(), done.stderr
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totals"]["passed"] == 1


@pytest.mark.timeout(120)
def test_chat_tools_flags_installed_module_finds_no_optional_module_in_the_folder(optional):
    """Attack (got through, round seventeen): ``zagent chat --tools r17lib:shout`` in the same folder: the planted
    ``r17speedups.py`` ran. Defence: as above; the chat starts with the user's tool."""
    lib, bench, _, mark = optional
    done = _zagent("chat", "--tools", "r17lib:shout", "--model", "test:echo", cwd=bench, lib=lib, text="hi\n")
    assert not mark.exists(), done.stderr
    assert done.returncode == 0, done.stderr


@pytest.mark.timeout(120)
def test_a_flag_named_module_in_the_folder_still_imports_its_siblings(optional, tmp_path):
    """Guard: the user's own ``myscore.py`` in the working folder (named by ``--scorer``) importing its sibling
    ``myhelp.py`` (by ``import`` and by ``importlib.import_module``) still loads both from there."""
    lib, bench, agent, _ = optional
    (bench / "myhelp.py").write_text("OK = True\n")
    (bench / "myother.py").write_text("OK = True\n")
    (bench / "myscore.py").write_text("import importlib\nimport myhelp\nother = importlib.import_module('myother')\n"
                                      "\ndef check(output, expected, case):\n    return myhelp.OK and other.OK\n")
    done = _zagent("eval", "cases.jsonl", "--agent", str(agent), "--scorer", "function:fn=myscore:check", "--json",
                   cwd=bench, lib=lib)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totals"]["passed"] == 1


# --- spellings and places of import paths in a spec --------------------------------------------------------------


@pytest.fixture
def untrusted_module(tmp_path, forget_modules):
    """``r17evil``: importable (on ``sys.path``) but trusted by nobody; importing it leaves a mark."""
    folder = tmp_path / "site"
    folder.mkdir()
    mark = tmp_path / "r17evil.ran"
    _planted(folder / "r17evil.py", mark, "def fn(text: str) -> str:\n    'Run.'\n    return text\n\n"
                                          "class Agent:\n    pass\n")
    sys.path.insert(0, str(folder))
    forget_modules.append("r17evil")
    yield mark
    sys.path.remove(str(folder))


def _react(name, **over):
    return {"type": "react", "name": name, "llm": "test:echo", **over}


PLACED = {
    "full-width colon": agent_spec(tools=["r17evil\uff1afn"]),
    "small colon": agent_spec(tools=["r17evil\ufe55fn"]),
    "toolset prefix": agent_spec(tools=["toolset:r17evil:fn"]),
    "agent type": agent_spec(type="r17evil:Agent"),
    "parse mode": agent_spec(parse_mode="r17evil:fn"),
    "memory backend": agent_spec(use_long_term_memory=True, long_term_memory={"name": "r17evil:Agent"}),
    "provider": agent_spec(llm="r17evil:Agent"),
    "react hand-off inline": _react("r", handoffs=[_react("h", tools=["r17evil:fn"])]),
    "react agent-as-tool inline": _react("r", agents=[agent_spec(tools=["r17evil:fn"])]),
    "chat as a tool, its policy": agent_spec(agents=[{"type": "groupchat", "name": "g", "agents": [_react("a")],
                                                      "selection": {"policy": "r17evil:fn"}}]),
    "chat termination judge": {"type": "groupchat", "name": "g", "agents": [_react("a")],
                               "termination": {"judge": agent_spec(name="J", tools=["r17evil:fn"])}},
    "chat speaker output_type": {"type": "groupchat", "name": "g",
                                 "agents": [agent_spec(name="S", output_type="r17evil:Agent")]},
    "chat selection model": {"type": "groupchat", "name": "g", "agents": [_react("a")],
                             "selection": {"policy": "llm", "llm": "r17evil:Agent"}},
    "agent-as-tool by path": agent_spec(agents=["r17evil:Agent"]),
    "hand-off by path": _react("r", handoffs=["r17evil:Agent"]),
    "chat speaker by path": {"type": "groupchat", "name": "g", "agents": ["r17evil:Agent", _react("a")]},
    "chat judge by path": {"type": "groupchat", "name": "g", "agents": [_react("a")],
                           "termination": {"judge": "r17evil:Agent"}},
}


@pytest.mark.parametrize("case", sorted(PLACED))
def test_an_import_path_in_another_spelling_or_place_imports_nothing(untrusted_module, case):
    """Attack (held): ``r17evil`` named where a registered name or an agent file is expected (agent type, parse
    mode, memory backend, provider, a chat's selection model, an agent-as-tool, hand-off, speaker or judge), written
    with a look-alike colon (U+FF1A, U+FE55) or behind ``toolset:``,
    or nested (an inline hand-off, agent-as-tool, a chat called as a tool, a chat's termination judge, a speaker's
    ``output_type``). Defence: registries are looked up by name, every import path goes through the trusted
    resolver: a ``ConfigError``; ``r17evil`` never imported."""
    k = make_kernel()
    with pytest.raises(ConfigError):
        k.agent({"llm": "test:echo", **PLACED[case]})
    k.close()
    assert not untrusted_module.exists()
