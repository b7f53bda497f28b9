"""Fixtures for the attack tests: a fresh isolated kernel with every loop kind, tools worth stealing, a spy;
the ``zagent`` command as a subprocess; a ReAct run and a two-node workflow stopped half-way, to be restored."""

import asyncio
import io
import json
import logging
import os
import subprocess
import sys

import msgspec
import pytest

from zagent import Kernel
from zagent.errors import ProviderError

CLI_PLUGINS = "offline,parsers,actions,react,memory,manager,workflow,groupchat,rails,cli"

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.memory", "zagent.plugins.manager", "zagent.plugins.workflow", "zagent.plugins.groupchat",
           "zagent.plugins.rails"]


class Spy:
    """Remembers which tools really ran (the attack succeeded if ``steal`` is in ``ran``)."""

    def __init__(self):
        self.ran = []


def make_kernel(config=None, plugins=()):
    """A kernel with ``word_count`` (the tool agents are offered) and ``steal`` (the one they are not)."""
    k = Kernel(plugins=[*PLUGINS, *plugins], entry_points=False, strict=True, config=config)
    spy = Spy()

    def word_count(text: str) -> int:
        """Count the words of a text."""
        spy.ran.append("word_count")
        return len(text.split())

    def steal(path: str) -> str:
        """Read a secret file."""
        spy.ran.append("steal")
        return "the secret"

    k.add_tool(word_count)
    k.add_tool(steal)
    k.spy = spy
    return k


@pytest.fixture
def kernel():
    k = make_kernel()
    yield k
    k.close()


def declared(name="Counter", tools=("word_count",), **over):
    """A declared agent's spec counting words with ``tools`` (``word_count``: the one offered)."""
    return {"name": name, "description": "counts", "prompt": "Count: {text}", "inputs": [{"name": "text"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": list(tools), **over}


def calls(*items, content=None):
    """A scripted reply making the native tool calls ``items`` (with text ``content`` beside them)."""
    return {"tool_calls": list(items), **({"content": content} if content is not None else {})}


def drain(stream):
    """Every item a consumer of ``stream`` got, and the error it ended with (or None)."""
    got = []

    async def go():
        try:
            async for item in stream:
                got.append(item)
        except Exception as exc:  # noqa: BLE001 - what the test checks
            return exc
        return None

    return got, asyncio.run(go())


def rewrite_latest(store, run_id, change, *, after=1):
    """The attacker (writes the store, cannot read the user's files): the latest checkpoint of ``run_id`` read,
    changed in place by ``change(state)`` and written back whole as the next step (``after=0``: in its place)."""
    step, raw = store.latest(run_id)
    state = msgspec.json.decode(raw)
    change(state)
    kind = next(r.kind for r in store.list() if r.run_id == run_id)
    store.save(run_id, step + after, msgspec.json.encode(state), kind=kind)


def edit_latest(db, run_id, change, *, after=1):
    """``rewrite_latest`` on the store file ``db``, opened by a kernel of its own (as another process would)."""
    k = make_kernel()
    try:
        rewrite_latest(k.memory("checkpoints", path=db), run_id, change, after=after)
    finally:
        k.close()


@pytest.fixture
def records():
    """Everything the root logger writes at DEBUG and up, as an app's log file would hold it."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield buf
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


class Observer:
    """A plugin recording after-tool-call results and tool events, as a rail or a logger would see them."""

    def __init__(self):
        self.results = []
        self.events = []

    def zagent_after_tool_call(self, call, result, ctx):
        self.results.append(result)

    def zagent_event(self, event):
        if event.type == "tool_end":
            self.events.append(dict(event.data))


def agent_spec(**over):
    """A one-input agent spec with ``over`` merged in (the attack goes in ``over``)."""
    return {"name": "Evil", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str", **over}


def run_cli(*args, cwd=None, plugins=CLI_PLUGINS, env=None):
    """``zagent ARGS`` in a new interpreter with only ``plugins``, no ``ZAGENT_MODEL`` and no run log."""
    env = {**os.environ, "ZAGENT_PLUGINS": plugins, "ZAGENT_LOG": "0", **(env or {})}
    env.pop("ZAGENT_MODEL", None)
    return subprocess.run([sys.executable, "-m", "zagent.plugins.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


def failed_react(k, store, calls, *, tools=("word_count", "steal"), agent_config=None):
    """The run id of a ReAct run that made ``calls`` and then failed on a provider error (so it can be restored)."""
    from zagent.plugins.react import ReActLoop

    llm = k.llm("scripted:first", replies=[*calls, ProviderError("down", provider="scripted")])
    loop = ReActLoop(kernel=k, llm=llm, tools=list(tools), checkpoints=store, agent_config=agent_config or {})
    with pytest.raises(ProviderError):
        loop.run("count")
    return loop.state.run_id


def two_node_workflow():
    """Workflow ``w``: node ``a`` (agent ``one``, ``x`` -> ``y``) then node ``b`` (agent ``two``, ``y`` -> ``z``)."""
    from zagent.plugins.workflow import WorkFlowGraph

    return WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}], "agents": ["one"]},
        {"name": "b", "description": "b", "inputs": [{"name": "y"}], "outputs": [{"name": "z"}], "agents": ["two"]}],
        "edges": [{"source": "a", "target": "b"}]})


class NodeAgent:
    """A workflow agent answering ``{"y": x + "!"}``, or raising when ``fail`` is set."""

    def __init__(self, name, fail):
        self.name, self.fail = name, fail

    async def aexecute(self, *, inputs, ctx=None):
        if self.fail:
            raise RuntimeError("stop here")
        return {"y": inputs["x"] + "!"}


def workflow_stopped_at_b(k, db):
    """``(executor, graph)`` after run ``wf`` of ``two_node_workflow`` with ``x="hi"`` saved node ``a`` and
    failed at ``b``."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed

    graph = two_node_workflow()
    ex = WorkFlowExecutor(kernel=k, checkpoints=db)
    ex.manager.add_agent(NodeAgent("one", False))
    ex.manager.add_agent(NodeAgent("two", True))
    with pytest.raises(WorkFlowFailed, match="b: RuntimeError: stop here"):
        ex.run(graph, {"x": "hi"}, run_id="wf")
    return ex, graph


def zagent_mcp_module(monkeypatch, name):
    """Yield ``zagent_mcp.<name>``: the installed one, else the package next to this repository's kernel (put back
    out of ``sys.path`` and ``sys.modules`` afterwards, so other tests still see it as not installed); skipped
    when its SDK is missing. For a fixture's ``yield from``."""
    from pathlib import Path

    try:
        installed = __import__(f"zagent_mcp.{name}", fromlist=[name])
    except ImportError:
        installed = None
    if installed is not None:
        yield installed
        return
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "contrib" / "zagent-mcp"))
    try:
        yield pytest.importorskip(f"zagent_mcp.{name}")
    finally:
        for module in [m for m in sys.modules if m == "zagent_mcp" or m.startswith("zagent_mcp.")]:
            del sys.modules[module]


def spec_folder(tmp_path, **spec):
    """``(folder, spec file)``: a downloaded spec in ``tmp_path/dl/proj``, ``spec`` written as its JSON."""
    folder = tmp_path / "dl" / "proj"
    folder.mkdir(parents=True)
    path = folder / "agent.json"
    path.write_text(json.dumps(spec))
    return folder, path


def error_chain(err):
    """str, repr, args, body and notes of ``err`` and every exception in its cause/context chain."""
    out, seen = [], set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        out.append(f"{err} {err!r} {err.args!r} {getattr(err, 'body', '')} {getattr(err, '__notes__', '')}")
        err = err.__cause__ or err.__context__
    return " | ".join(out)


@pytest.fixture
def default_recursion_limit():
    """Python's default recursion limit for the test (another test or library may have raised it, and then a
    5,000-deep line decodes without reaching the limit these defences handle)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


@pytest.fixture
def forget_modules():
    """Names of modules a test imports, dropped from ``sys.modules`` after it."""
    names = []
    yield names
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            sys.modules.pop(name, None)
