"""Tool references are resolved the same way everywhere: names, 'toolset:NAME', trusted import paths
(issue 17, items 1-3)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from zagent import ConfigError, Kernel

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.rails"]

TOOLS_MODULE = textwrap.dedent('''
    def triple(n: int) -> int:
        """Multiply by three.

        Args:
            n: the number
        """
        return 3 * n
''')


@pytest.fixture
def kernel():
    k = Kernel(plugins=PLUGINS, entry_points=False)

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    k.add_tool(add, toolset="math")
    k.add_tool(mul, toolset="math")
    k.add_tool(lambda text: text, name="echo")
    yield k
    k.close()


@pytest.fixture
def tools_dir(tmp_path, monkeypatch):
    """A folder holding tripler_tools.py; removed from sys.modules afterwards."""
    (tmp_path / "tripler_tools.py").write_text(TOOLS_MODULE)
    yield tmp_path
    sys.modules.pop("tripler_tools", None)


def cli(*args, cwd, stdin=""):
    env = {k: v for k, v in os.environ.items() if k not in ("ZAGENT_MODEL", "PYTHONPATH")}
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, input=stdin, timeout=300)


def test_declared_agent_takes_a_whole_toolset(kernel):
    """'toolset:math' in a declared agent's tools offers every tool of that toolset."""
    agent = kernel.agent({"name": "calc", "prompt": "Compute {q}", "inputs": [{"name": "q"}],
                          "outputs": [{"name": "answer"}], "tools": ["toolset:math", "echo"], "llm": "test:m"})
    assert sorted(agent.action().tools) == ["add", "echo", "mul"]


def test_unknown_toolset_names_the_toolsets(kernel):
    """A toolset with no tools is a ConfigError listing the toolsets there are."""
    with pytest.raises(ConfigError) as info:
        kernel.agent({"name": "calc", "prompt": "Compute {q}", "inputs": [{"name": "q"}],
                      "outputs": [{"name": "answer"}], "tools": ["toolset:shell"], "llm": "test:m"})
    assert "shell" in str(info.value) and "math" in str(info.value)


def test_react_agent_takes_a_toolset_and_an_import_path(kernel, tools_dir):
    """A ReAct agent accepts 'toolset:NAME' and, when trusted, 'module:function' (registered on the kernel)."""
    sys.path.insert(0, str(tools_dir))
    try:
        agent = kernel.agent({"type": "react", "name": "helper", "tools": ["toolset:math", "tripler_tools:triple"]},
                             trust=True)
    finally:
        sys.path.remove(str(tools_dir))
    assert list(agent.tools) == ["add", "mul", "triple"]
    assert kernel.run_tool({"name": "triple", "arguments": {"n": 4}}).content == "12"


def test_react_agent_refuses_an_untrusted_import_path(kernel):
    """Without trust, an import path in a ReAct spec's tools is refused with how to trust it."""
    with pytest.raises(ConfigError) as info:
        kernel.agent({"type": "react", "name": "helper", "tools": ["os:system"]})
    assert "os:system" in str(info.value) and "trust" in str(info.value)


def test_react_agent_file_resolves_tools_next_to_it(tmp_path, tools_dir):
    """`zagent chat FILE` with a tool 'module:function' from the file's own folder runs that tool."""
    spec = tools_dir / "helper.json"
    spec.write_text(json.dumps({"type": "react", "name": "helper", "tools": ["tripler_tools:triple"]}))
    proc = cli("chat", str(spec), cwd=tmp_path.parent, stdin="triple 4 please\n")
    assert proc.returncode == 0, proc.stderr
    assert "triple" in proc.stderr


def test_chat_tools_flag_takes_import_paths(tools_dir):
    """`zagent chat --tools module:function` (the user's own flag) imports from the working directory."""
    proc = cli("chat", "--tools", "tripler_tools:triple", cwd=tools_dir, stdin="triple 4 please\n")
    assert proc.returncode == 0, proc.stderr
    assert "triple" in proc.stderr


def test_workflow_file_inline_agents_resolve_tools_next_to_it(tmp_path, tools_dir):
    """An inline agent of a workflow file names a tool by import path from the workflow's folder."""
    wf = {"name": "t", "goal": "triple a number", "inputs": [{"name": "n"}],
          "nodes": [{"name": "compute", "inputs": [{"name": "n"}], "outputs": [{"name": "result"}],
                     "agents": [{"name": "Tripler", "prompt": "Triple {n}", "inputs": [{"name": "n"}],
                                 "outputs": [{"name": "result"}], "tools": ["tripler_tools:triple"],
                                 "parse_mode": "str"}]}]}
    path = tools_dir / "wf.json"
    path.write_text(json.dumps(wf))
    proc = cli("workflow", "run", str(path), "--input", "n=4", cwd=tmp_path.parent)
    assert proc.returncode == 0, proc.stderr


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def test_readme_workflow_example_with_an_import_path_runs_offline(tmp_path):
    """The README's `zagent workflow run examples/workflow_sum.json` runs offline: its inline agent's tool resolves."""
    proc = cli("workflow", "run", os.path.join(EXAMPLES, "workflow_sum.json"), "--input", "question=What is 2+3?",
               "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "explanation" in proc.stdout


def test_readme_chat_tools_example_runs_offline():
    """The README's `cd examples && zagent chat --tools example_tools:add` calls the add tool offline."""
    proc = cli("chat", "--tools", "example_tools:add", cwd=EXAMPLES, stdin="What is 2+3?\n")
    assert proc.returncode == 0, proc.stderr
    assert "→ add" in proc.stderr
