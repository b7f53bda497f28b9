"""Round fourteen, wave two: code loaded from the environment. ``python -m zagent...`` run in a downloaded folder
(modules there shadowing zagent's dependencies or the standard library), import paths reaching a package's
``__main__``/``__init__`` through a trusted glob, and advice to ``pip install`` a name a spec file chose."""

import os
import subprocess
import sys

import pytest

from zagent import ConfigError, Kernel
from zagent.speckit import Trust
from zagent.speckit.trust import resolve

from .conftest import CLI_PLUGINS, agent_spec, run_cli

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions"]


def _marks(tmp_path):
    return tmp_path / "marks"


def _ran(tmp_path):
    folder = _marks(tmp_path)
    return sorted(os.listdir(folder)) if folder.exists() else []


def _planted(path, marks, mark, extra=""):
    """A module file whose top-level code only records ``mark`` in ``marks`` (then ``extra``)."""
    path.write_text(f"import os as _os\n_os.makedirs({str(marks)!r}, exist_ok=True)\n"
                    f"open(_os.path.join({str(marks)!r}, {mark!r}), 'a').close()\n{extra}")


def _dash_m(*args, cwd, pre=(), env=None):
    """``python [pre] -m zagent.plugins.cli ARGS`` as a user runs it from ``cwd``, with only the CLI's plugins."""
    env = {**os.environ, "ZAGENT_PLUGINS": CLI_PLUGINS, "ZAGENT_LOG": "0", **(env or {})}
    env.pop("ZAGENT_MODEL", None)
    return subprocess.run([sys.executable, *pre, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


# --- python -m zagent.plugins.cli in a downloaded folder: modules imported by `import zagent` itself ----------------

@pytest.mark.parametrize("shadow", ["pluggy", "attrs", "inspect", "contextvars", "uuid"])
@pytest.mark.parametrize("pre", [(), ("-W", "ignore")])
def test_dash_m_in_a_downloaded_folder_runs_no_module_shadowing_what_zagent_imports_first(tmp_path, shadow, pre):
    """Attack: a cloned repository holds ``pluggy.py`` / ``attrs.py`` (zagent's dependencies) or ``inspect.py`` /
    ``contextvars.py`` / ``uuid.py`` (standard library modules not loaded at start-up); the user runs ``python -m
    zagent.plugins.cli plugins`` there. ``-m`` puts the working folder first on sys.path and imports the package
    ``zagent`` (and its imports) before the CLI module dropped that folder: the planted file ran. Expected: nothing
    planted runs; the command works."""
    folder = tmp_path / "repo"
    folder.mkdir()
    _planted(folder / f"{shadow}.py", _marks(tmp_path), shadow, "raise ImportError('planted')\n")
    done = _dash_m("plugins", "--json", cwd=folder, pre=pre)
    assert _ran(tmp_path) == [], done.stderr
    assert done.returncode == 0, done.stderr


@pytest.mark.xfail(strict=True, reason="Python imports the -m target's top package from the working folder before "
                   "any zagent code runs; use the installed `zagent` command or `python -P -m`")
@pytest.mark.parametrize("kind", ["package", "module"])
def test_dash_m_in_a_folder_holding_a_zagent_package_runs_none_of_it(tmp_path, kind):
    """Attack (open): the folder holds ``zagent/__init__.py`` (or ``zagent.py``): ``python -m zagent.plugins.cli``
    imports that in place of the installed zagent. No defence inside zagent can run first."""
    folder = tmp_path / "repo"
    folder.mkdir()
    if kind == "package":
        (folder / "zagent").mkdir()
        _planted(folder / "zagent" / "__init__.py", _marks(tmp_path), "zagent")
    else:
        _planted(folder / "zagent.py", _marks(tmp_path), "zagent")
    _dash_m("plugins", "--json", cwd=folder)
    assert _ran(tmp_path) == []


def test_dash_m_keeps_the_working_folder_the_user_put_on_pythonpath(tmp_path):
    """Guard: ``PYTHONPATH=<folder> python -m zagent.plugins.cli run`` (the user's own choice to import from the
    folder) still finds the user's module there: with ``--trust`` an agent file elsewhere names ``r14b_own:parse``
    (in the working folder) and it is imported; only the entry ``-m`` added is dropped, never the user's."""
    folder = tmp_path / "work"
    folder.mkdir()
    _planted(folder / "r14b_own.py", _marks(tmp_path), "own", "def parse(text):\n    return {'answer': text}\n")
    specs = tmp_path / "specs"
    specs.mkdir()
    import json

    (specs / "agent.json").write_text(json.dumps(agent_spec(parse_mode="custom", parse_func="r14b_own:parse",
                                                            llm="test:echo")))
    done = _dash_m("run", str(specs / "agent.json"), "--trust", "--input", "question=hi", cwd=folder,
                   env={"PYTHONPATH": str(folder)})
    assert "own" in _ran(tmp_path), done.stdout + done.stderr


def test_dash_m_of_an_app_importing_zagent_keeps_its_own_folder(tmp_path):
    """Guard: ``python -m r14bmain`` (the user's own app in the working folder) imports zagent and then a sibling
    module of the folder: only ``python -m zagent...`` loses the working folder, an app's own ``-m`` keeps it."""
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "r14bmain.py").write_text("import zagent\nimport r14b_sibling\n")
    _planted(folder / "r14b_sibling.py", _marks(tmp_path), "sibling")
    env = {**os.environ, "ZAGENT_LOG": "0"}
    done = subprocess.run([sys.executable, "-m", "r14bmain"], capture_output=True, text=True, env=env, timeout=120,
                          cwd=folder)
    assert done.returncode == 0 and _ran(tmp_path) == ["sibling"], done.stderr


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is Python 3.11+")
def test_dash_m_with_safe_path_is_unchanged(tmp_path):
    """Guard: ``python -P -m zagent.plugins.cli`` (no working folder on sys.path at all) still works, and the
    planted module still does not run."""
    folder = tmp_path / "repo"
    folder.mkdir()
    _planted(folder / "inspect.py", _marks(tmp_path), "inspect", "raise ImportError('planted')\n")
    done = _dash_m("plugins", "--json", cwd=folder, pre=("-P",))
    assert _ran(tmp_path) == [] and done.returncode == 0, done.stderr


# --- import paths naming a package's __main__ or __init__ ----------------------------------------------------------

@pytest.fixture
def app_package(tmp_path, monkeypatch, forget_modules):
    """The app's package ``r14bpk`` on sys.path: ``__init__`` (records each run), ``__main__`` (its command line,
    which acts at import, as such scripts do) and ``tools``."""
    root = tmp_path / "site"
    pkg = root / "r14bpk"
    pkg.mkdir(parents=True)
    marks = _marks(tmp_path)
    _planted(pkg / "__init__.py", marks, "init", "def tool(x: str) -> str:\n    return x\n")
    _planted(pkg / "__main__.py", marks, "main", "def main(x: str) -> str:\n    return x\n")
    (pkg / "tools.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    monkeypatch.syspath_prepend(str(root))
    forget_modules.append("r14bpk")
    return root


def _trusting_app():
    return Kernel(plugins=PLUGINS, entry_points=False, config={"trusted_imports": ["r14bpk.*"]})


def test_trusted_glob_does_not_reach_the_packages_main_script(tmp_path, app_package):
    """Attack: the app trusts ``r14bpk.*``; an untrusted spec names ``r14bpk.__main__:main``. The glob matched, and
    importing ``__main__`` ran the package's command line (what ``python -m r14bpk`` does), code nobody chose to
    run for a spec. Expected: ``ConfigError`` naming the dunder module; nothing of ``__main__`` ran."""
    k = _trusting_app()
    with pytest.raises(ConfigError, match="__main__"):
        resolve("r14bpk.__main__:main", key="tool", kernel=k)
    assert "main" not in _ran(tmp_path)


def test_trusted_glob_does_not_import_a_package_init_again_under_its_file_name(tmp_path, app_package):
    """Attack: ``r14bpk.__init__:tool`` imports ``__init__.py`` a second time as a module of its own: the package's
    start-up code (registrations, connections, side effects) ran again for a spec. Expected: ``ConfigError``."""
    k = _trusting_app()
    resolve("r14bpk.tools:add", key="tool", kernel=k)
    before = _ran(tmp_path)
    with pytest.raises(ConfigError, match="__init__"):
        resolve("r14bpk.__init__:tool", key="tool", kernel=k)
    assert _ran(tmp_path) == before


def test_agent_spec_tool_naming_main_is_refused_before_import(tmp_path, app_package):
    """Attack end to end: an untrusted ReAct spec's ``tools: ["r14bpk.__main__:main"]`` on a kernel trusting
    ``r14bpk.*``. Expected: ``ConfigError`` when the agent is built; the package's ``__main__`` never ran."""
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.react"], entry_points=False,
               config={"trusted_imports": ["r14bpk.*"]})
    with pytest.raises(ConfigError, match="__main__"):
        k.agent({"type": "react", "name": "R", "tools": ["r14bpk.__main__:main"], "llm": "test:echo"})
    assert "main" not in _ran(tmp_path)


@pytest.mark.parametrize("path", ["r14bcli.__main__:main", "__init__:main"])
def test_folder_trust_does_not_reach_a_packages_main_script(tmp_path, forget_modules, path):
    """Attack (the CLI's folder rule): the spec's folder holds package ``r14bcli`` with a ``__main__.py`` (or the
    folder is itself a package, its ``__init__.py`` next to the spec); the spec names ``r14bcli.__main__:main`` (or
    ``__init__:main``, that file imported as a module of its own). Expected: ``ConfigError``; nothing of it ran."""
    proj = tmp_path / "proj"
    pkg = proj / "r14bcli"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    _planted(pkg / "__main__.py", _marks(tmp_path), "main", "def main(x: str) -> str:\n    return x\n")
    _planted(proj / "__init__.py", _marks(tmp_path), "init", "def main(x: str) -> str:\n    return x\n")
    k = Kernel(plugins=PLUGINS, entry_points=False)
    forget_modules.extend(["r14bcli", "__init__"])
    with pytest.raises(ConfigError, match=path.partition(":")[0].rpartition(".")[2]):
        resolve(path, key="tool", kernel=k, trust=Trust.for_folder(str(proj)), base_dir=str(proj))
    assert _ran(tmp_path) == []


def test_eval_cases_scorer_naming_main_is_refused(tmp_path, app_package):
    """Attack through evals: a cases file's scorer ``{"name": "function", "fn": "r14bpk.__main__:main"}`` on a kernel
    trusting ``r14bpk.*`` (a cases file gets the kernel's ``trusted_imports``). Expected: ``ConfigError``, the
    package's ``__main__`` never ran."""
    import json

    from zagent.plugins.evals import evaluate

    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(llm="test:echo")))
    (tmp_path / "cases.jsonl").write_text(json.dumps({
        "id": "c1", "inputs": {"question": "hi"}, "scorers": [{"name": "function", "fn": "r14bpk.__main__:main"}]}))
    k = Kernel(plugins=[*PLUGINS, "zagent.plugins.batch", "zagent.plugins.evals"], entry_points=False,
               config={"trusted_imports": ["r14bpk.*"]})
    with pytest.raises(ConfigError, match="__main__"):
        evaluate(k, str(tmp_path / "agent.json"), str(tmp_path / "cases.jsonl"))
    k.close()
    assert "main" not in _ran(tmp_path)


def test_cli_workflow_router_naming_a_packages_main_is_refused(tmp_path):
    """Attack through ``zagent workflow run wf.json`` (the CLI trusts the file's folder): the project holds package
    ``r14bwf`` whose ``__main__.py`` acts at import; the router is ``r14bwf.__main__:route``. Expected: the run
    fails naming ``__main__``; it never ran."""
    import json

    proj = tmp_path / "proj"
    (proj / "r14bwf").mkdir(parents=True)
    (proj / "r14bwf" / "__init__.py").write_text("")
    _planted(proj / "r14bwf" / "__main__.py", _marks(tmp_path), "main", "def route(state):\n    return 'B'\n")

    def node(name, out):
        return {"name": name, "description": "d", "inputs": [{"name": "goal"}], "outputs": [{"name": out}],
                "agents": [agent_spec(name=f"W{name}", prompt="{goal}", inputs=[{"name": "goal"}],
                                      outputs=[{"name": out}], llm="test:offline")]}
    (proj / "wf.json").write_text(json.dumps({
        "name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [node("A", "x"), node("B", "y")],
        "conditional_edges": [{"source": "A", "router": "r14bwf.__main__:route", "targets": ["B"]}]}))
    done = run_cli("workflow", "run", str(proj / "wf.json"), "--input", "goal=g", cwd=proj)
    assert _ran(tmp_path) == [], done.stdout + done.stderr
    assert done.returncode != 0 and "__main__" in done.stderr


def test_trusted_glob_still_resolves_the_apps_own_submodule(tmp_path, app_package):
    """Guard: ``r14bpk.tools:add`` and ``r14bpk:tool`` (the package's own function) still resolve; ``--trust``
    (``trust=True``) may still name anything."""
    k = _trusting_app()
    assert resolve("r14bpk.tools:add", key="tool", kernel=k)(1, 2) == 3
    assert resolve("r14bpk:tool", key="tool", kernel=k)("x") == "x"
    assert resolve("r14bpk.__main__:main", key="tool", kernel=k, trust=Trust(everything=True))("y") == "y"


# --- a module-level __getattr__ and inherited methods (held) --------------------------------------------------------

def test_module_getattr_forwarding_to_os_is_refused(tmp_path, monkeypatch, forget_modules):
    """Attack (held): the trusted module defines ``__getattr__`` forwarding every unknown name to ``os`` (a
    compatibility shim); a spec names ``r14bshim:system``. Expected: ``ConfigError`` naming ``posix``."""
    (tmp_path / "r14bshim.py").write_text("import os\n\ndef __getattr__(name):\n    return getattr(os, name)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    k = Kernel(plugins=PLUGINS, entry_points=False, config={"trusted_imports": ["r14bshim"]})
    forget_modules.append("r14bshim")
    with pytest.raises(ConfigError, match="posix"):
        resolve("r14bshim:system", key="parse_func", kernel=k)


@pytest.mark.parametrize("attr", ["run", "start"])
def test_inherited_method_of_a_trusted_class_is_its_bases_code(tmp_path, monkeypatch, forget_modules, attr):
    """Attack (held): ``class Worker(threading.Thread)`` in the trusted module; a spec names ``Worker.run`` (or
    ``start``), the base's code reached through the trusted class. Expected: ``ConfigError`` naming threading."""
    (tmp_path / "r14bthr.py").write_text("import threading\n\nclass Worker(threading.Thread):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    k = Kernel(plugins=PLUGINS, entry_points=False, config={"trusted_imports": ["r14bthr"]})
    forget_modules.append("r14bthr")
    with pytest.raises(ConfigError, match="threading"):
        resolve(f"r14bthr:Worker.{attr}", key="parse_func", kernel=k)


# --- a name a spec file (or a typo) chose, offered as a package to install -----------------------------------------

def test_untrusted_spec_naming_an_unknown_provider_gets_no_install_advice_for_that_name():
    """Attack: an agent file names ``llm: "acmellm:big"``; the error told the user to ``pip install
    zagent-acmellm``, a name the file's author can publish (a typo-squatted plugin runs at the next start).
    Expected: ``ConfigError`` naming the unknown provider and the installed ones, and no install command for it."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    with pytest.raises(ConfigError) as err:
        k.agent(agent_spec(llm="acmellm:big"))
    text = str(err.value)
    assert "acmellm" in text and "Installed providers" in text
    assert "pip install zagent-acmellm" not in text and "pip install" not in text


def test_cli_run_of_a_spec_naming_an_unknown_provider_gives_no_install_command(tmp_path):
    """Attack through ``zagent run agent.json``: the same advice was printed on the user's terminal. Expected:
    exit 1, the provider named, no ``pip install`` of it."""
    import json

    (tmp_path / "agent.json").write_text(json.dumps(agent_spec(llm="acmellm:big")))
    done = run_cli("run", str(tmp_path / "agent.json"), "--input", "question=hi", cwd=tmp_path)
    assert done.returncode != 0
    assert "acmellm" in done.stderr and "pip install" not in done.stdout + done.stderr


def test_unknown_executor_name_gets_no_install_command_for_it(monkeypatch):
    """Attack: ``ZAGENT_EXECUTOR=rey`` (a typo of ``ray``, or a name set by a shared shell profile): the error said
    ``pip install zagent-rey``. Expected: ``ConfigError`` naming the installed executors, no install command for
    the unknown name (a known plugin is named by its real distribution)."""
    monkeypatch.setenv("ZAGENT_EXECUTOR", "rey")
    k = Kernel(plugins=PLUGINS, entry_points=False)
    with pytest.raises(ConfigError) as err:
        k.executor()
    assert "rey" in str(err.value) and "local" in str(err.value)
    assert "zagent-rey" not in str(err.value)
