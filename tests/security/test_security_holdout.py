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
  (``zagent._trust.sizes``)
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
