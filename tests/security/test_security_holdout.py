"""Hold-out round: new attacks of issue 28's kinds, each as the hostile input itself.

Attacks tried (session 2026-12-03) and whether they got through before this module's fixes:

- record: path in a sub-agent's llm_config (agents, handoffs, group-chat speaker, judge, workflow node): held
- fallback chain (``fallback:record:...`` / ``model: [...]``) with a path outside the folder: held
- a nested agent tool's model reusing the id of a call the human approved (same args): held (asked again)
- negative token usage from the wire: held (usage bounds)
- memory namespace collision via ``session``: held (exact namespace match, ``name@digest``)
- a field name with terminal escapes: GOT THROUGH (a raw ``ValueError`` traceback with ESC sequences on stderr,
  printed after the CLI had restored the raw stream) -- fixed: a ``ConfigError`` at load, and any unexpected
  error of ``zagent`` is printed through the safe stderr
- spec counts out of range (``max_tool_call_concurrency: 0`` crashing the run, ``max_rounds: 10**9``,
  ``memory_size: -5``, ``max_iterations: 10**12``, ``judge_every: 0``): GOT THROUGH -- fixed: bounded at load
  (``zagent.speckit.sizes``)

Second hold-out sweep (session 2026-12-03, every spec kind: agent, react, workflow, group chat, rails,
long-term memory, skills, batch input files):

- workflow ``conditional_edges`` ``max_loops: 10**9`` (a billion rounds of model calls): GOT THROUGH (``-5`` was
  only reported by ``problems()``)
  -- fixed: bounded 0-1000 at load
- group chat ``termination.max_seconds: NaN`` or ``-1``, ``max_tokens: 10**18`` or ``-1``: GOT THROUGH (NaN
  never ends a chat by time) -- fixed: bounded at load (``SPEC_NUMBERS``, ``SPEC_SIZES``)
- ``long_term_memory.busy_timeout: 1e9`` / ``retries: 10**9`` (a run hanging on a locked memory.db):
  GOT THROUGH -- fixed: bounded at load (the mapping is walked like ``termination``)
- ``long_term_memory.max_bytes: -1`` / ``common_ratio: NaN``: GOT THROUGH (accepted at load, failing or
  misbehaving at first use) -- fixed: bounded at load
- an agent or field ``name`` of 100,000 characters: GOT THROUGH (found by the sweep, fixed last) -- fixed:
  ``name`` is at most 256 characters at load (``zagent.speckit.sizes.MAX_NAME``)
- ``rails.usage_limits: {"total_tokens": NaN}`` or ``-5``: GOT THROUGH (accepted at load, the run failed at its
  first call) -- fixed: ``check_rails`` refuses it at load
- a react spec file's relative ``agents``/``handoffs`` resolved against the working directory, not the spec's
  folder (with the cwd in ``spec_paths``, a file planted there was loaded): GOT THROUGH -- fixed: a spec read
  from a file names files next to itself
- an interrupt node's ``question`` with ``{x.__class__.__mro__}``: held (names only)
- an agent file naming itself, two files handing off to each other: held (a loop is a ConfigError)
- a batch input line nested 100,000 deep: held (that line fails, the others run)
- a batch input line with extra keys (``llm``, ``__class__``): held (ignored; inputs are data)
- a field ``type`` nested 5,000 deep: held (ConfigError)
- a group chat keyword ``(a+)+$``: held (a literal phrase, never a regex)
- ``rails.tool_rpm``/``tool_budget`` of NaN: held (ConfigError)
"""

import json

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel, run_cli

ESC = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[8mHIDDEN\x1b[2K\r\u202e"


def test_a_field_name_with_terminal_escapes_is_a_config_error(tmp_path):
    """`zagent run` of a spec whose input name holds ESC sequences says why, with the escapes shown escaped."""
    spec = agent_spec(inputs=[{"name": "question" + ESC}], prompt="Q {question}")
    (tmp_path / "evil.json").write_text(json.dumps(spec))
    out = run_cli("run", str(tmp_path / "evil.json"), "-i", "question=hi", cwd=tmp_path)
    assert out.returncode == 1 and "\x1b" not in out.stderr + out.stdout
    assert "control character" in out.stderr and "Traceback" not in out.stderr


def test_an_unexpected_error_quoting_hostile_text_is_printed_escaped(monkeypatch, capsys):
    """A non-zagent exception carrying ESC sequences is printed (traceback) through the safe stderr, not raw."""
    from zagent.plugins import cli

    def boom(argv, kernel):
        raise ValueError("bad value " + ESC)

    monkeypatch.setattr(cli, "_run", boom)
    monkeypatch.setattr(cli, "start_kernel", lambda argv: make_kernel())
    assert cli.main(["run", "x.json"]) == 1
    err = capsys.readouterr().err
    assert "ValueError: bad value" in err and "\x1b" not in err and "\\x1b" in err


@pytest.mark.parametrize("spec", [
    agent_spec(max_tool_call_concurrency=0), agent_spec(memory_size=-5), agent_spec(max_steps=10**9),
    {"type": "react", "name": "R", "max_iterations": 10**12},
    {"type": "react", "name": "R", "max_tool_call_concurrency": -1},
    {"type": "groupchat", "name": "c", "agents": [{"type": "react", "name": "A"}], "max_rounds": 10**9},
    {"type": "groupchat", "name": "c", "agents": [{"type": "react", "name": "A"}],
     "termination": {"max_rounds": 3, "judge": {"type": "react", "name": "J"}, "judge_every": 0}},
    {"type": "human", "name": "h", "prompt": "x", "outputs": ["a"], "memory_size": -4},
])
def test_spec_counts_out_of_range_are_refused_at_load(spec):
    """A count a spec sets (a resource the user pays for) outside its range is a ConfigError naming it."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="must be a whole number from"):
        k.agent(spec)
    k.close()


def test_ordinary_counts_still_load():
    """Counts inside the ranges load as before."""
    k = make_kernel()
    k.agent(agent_spec(max_tool_call_concurrency=4, memory_size=0, max_steps=6))
    k.agent({"type": "react", "name": "R", "max_iterations": 60, "tool_limit": 1})
    k.close()


# -- second hold-out sweep --------------------------------------------------------------------------------


def loop_workflow(**edge):
    """A one-node workflow whose conditional edge loops back to its node (``edge`` holds the attack)."""
    node = agent_spec(name="A", inputs=[{"name": "x"}], prompt="{x}", outputs=[{"name": "x"}])
    return {"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [],
            "nodes": [{"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "x"}],
                       "agents": [node]}],
            "conditional_edges": [{"source": "a", "router": "routers:again", "targets": ["a"], **edge}]}


@pytest.mark.parametrize("loops", [10**9, -5])
def test_a_workflow_loop_count_out_of_range_is_refused(loops):
    """``max_loops: 10**9`` (a billion model calls) or negative: ConfigError at load."""
    from zagent.plugins.workflow import WorkFlowGraph

    with pytest.raises(ConfigError, match="max_loops must be a whole number from 0 to 1000"):
        WorkFlowGraph.from_dict(loop_workflow(max_loops=loops))


def chat(**termination):
    return {"type": "groupchat", "name": "c", "termination": termination,
            "agents": [agent_spec(name="A", inputs=[{"name": "task"}], prompt="{task}")]}


@pytest.mark.parametrize("termination, message", [
    ({"max_seconds": float("nan")}, "max_seconds must be a number"),
    ({"max_seconds": -1}, "max_seconds must be a number"),
    ({"max_seconds": float("inf")}, "max_seconds must be a number"),
    ({"max_tokens": 10**18}, "max_tokens must be a whole number"),
    ({"max_tokens": -1}, "max_tokens must be a whole number"),
])
def test_a_group_chat_budget_out_of_range_is_refused(termination, message):
    """A group chat's time or token budget of NaN, inf, negative or huge is a ConfigError at load."""
    k = make_kernel()
    with pytest.raises(ConfigError, match=message):
        k.agent(chat(**termination))
    k.close()


@pytest.mark.parametrize("memory, message", [
    ({"busy_timeout": 1e9}, "busy_timeout must be a number from 0 to 600"),
    ({"retries": 10**9}, "retries must be a whole number from 0 to 100"),
    ({"max_bytes": -1}, "max_bytes must be a whole number from 4096"),
    ({"common_ratio": float("nan")}, "common_ratio must be a number from 0 to 1"),
])
def test_long_term_memory_numbers_out_of_range_are_refused_at_load(memory, message):
    """``long_term_memory`` waits, retries and sizes from a spec are bounded when it loads, not at first use."""
    k = make_kernel()
    with pytest.raises(ConfigError, match=message):
        k.agent(agent_spec(use_long_term_memory=True, long_term_memory=memory))
    k.close()


@pytest.mark.parametrize("limit", [float("nan"), -5, "lots", True])
def test_a_bad_usage_limit_is_refused_at_load(limit):
    """``rails.usage_limits`` of NaN, negative, text or a bool is a ConfigError when the agent is built."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="usage_limits must be a mapping"):
        k.agent({"type": "react", "name": "r", "rails": {"usage_limits": {"total_tokens": limit}}})
    k.close()


def test_a_react_spec_files_agents_are_read_next_to_it_not_from_the_cwd(tmp_path, monkeypatch):
    """``agents: ["helper.json"]`` in specs/r.json loads specs/helper.json, never a helper.json planted in the cwd."""
    specs, cwd = tmp_path / "specs", tmp_path / "cwd"
    specs.mkdir()
    cwd.mkdir()
    (specs / "r.json").write_text(json.dumps({"type": "react", "name": "r", "agents": ["helper.json"]}))
    (specs / "helper.json").write_text(json.dumps(agent_spec(name="Helper")))
    (cwd / "helper.json").write_text(json.dumps(agent_spec(name="Planted")))
    monkeypatch.chdir(cwd)
    k = make_kernel(config={"spec_paths": [str(cwd)]})
    agent = k.agent(str(specs / "r.json"))
    assert "Helper" in agent.tools and "Planted" not in agent.tools
    k.close()


def test_an_interrupt_question_is_not_a_format_engine():
    """A workflow question ``{x.__class__.__mro__}`` is asked as written: only ``{name}`` placeholders fill."""
    from zagent.plugins.workflow import WorkFlowGraph
    from zagent.plugins.workflow.attempts import ask_text

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [], "nodes": [
        {"name": "q", "description": "q", "kind": "interrupt", "question": "{x.__class__.__mro__} {x}?",
         "inputs": [{"name": "x"}], "outputs": [{"name": "y"}]}]})
    assert ask_text(graph.nodes[0], {"x": "hi"}) == "{x.__class__.__mro__} hi?"


def test_agent_files_naming_each_other_are_a_config_error(tmp_path):
    """An agent file offering itself as a tool, and two files handing off to each other: ConfigError, no hang."""
    (tmp_path / "a.json").write_text(json.dumps({"type": "react", "name": "A", "agents": ["a.json"]}))
    (tmp_path / "b.json").write_text(json.dumps({"type": "react", "name": "B", "handoffs": ["c.json"]}))
    (tmp_path / "c.json").write_text(json.dumps({"type": "react", "name": "C", "handoffs": ["b.json"]}))
    k = make_kernel()
    for name in ("a.json", "b.json"):
        with pytest.raises(ConfigError, match="name each other in a loop"):
            k.agent(str(tmp_path / name))
    k.close()


def test_a_batch_line_nested_too_deep_fails_alone(tmp_path):
    """A batch input line nested 100,000 deep is that line's error; the next line runs."""
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"question": ' + "[" * 100_000 + "]" * 100_000 + '}\n{"question": "hi"}\n')
    k = make_kernel(plugins=["zagent.plugins.batch"])
    k.batch(agent_spec(), str(inputs), out=str(tmp_path / "out.jsonl"))
    first, second = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert not first["ok"] and "not valid JSON" in first["error"]["message"] and second["ok"]
    k.close()


def test_batch_line_keys_are_inputs_not_settings(tmp_path):
    """A batch line with ``llm: record:...`` and ``__class__`` keys runs the agent as declared (they are data)."""
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(json.dumps({"question": "hi", "llm": "record:test:offline", "path": str(tmp_path / "x.jsonl"),
                                  "__class__": 1}) + "\n")
    k = make_kernel(plugins=["zagent.plugins.batch"])
    k.batch(agent_spec(), str(inputs), out=str(tmp_path / "out.jsonl"))
    assert json.loads((tmp_path / "out.jsonl").read_text())["ok"] and not (tmp_path / "x.jsonl").exists()
    k.close()


def test_a_field_type_nested_5000_deep_is_a_config_error():
    """``type: list[list[...str...]]`` 5,000 deep is a ConfigError, not a RecursionError."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="unknown type"):
        k.agent(agent_spec(outputs=[{"name": "a", "type": "list[" * 5000 + "str" + "]" * 5000}]))
    k.close()


def test_a_100k_character_agent_name_is_a_config_error():
    """An agent (or field) ``name`` of 100,000 characters is refused at load with the limit, not loaded."""
    k = make_kernel()
    with pytest.raises(ConfigError, match="more than 256"):
        k.agent(agent_spec(name="A" * 100_000))
    with pytest.raises(ConfigError, match="more than 256"):
        k.agent(agent_spec(outputs=[{"name": "b" * 300, "type": "str"}]))
    k.agent(agent_spec(name="A" * 256))
    k.close()


def test_a_group_chat_keyword_is_a_phrase_not_a_regex():
    """``keywords: ["(a+)+$"]`` ends a chat only on that literal text (no regex, so no catastrophic match)."""
    from zagent.plugins.groupchat.termination import from_spec

    from types import SimpleNamespace

    [keyword] = from_spec({"keywords": ["(a+)+$"]}, lambda a: a)
    said = lambda text: SimpleNamespace(last=SimpleNamespace(round=1, content=text, speaker="A"))  # noqa: E731
    assert keyword.check(said("a" * 40 + "!")) is None  # a regex would match (after exponential time)
    assert keyword.check(said("done (a+)+$")) is not None
