"""The run log: when it is on, what a run leaves in the SQLite file, and that secrets do not get there."""

import sqlite3

import pytest

from zagent import Kernel
from zagent.plugins.cli import start_kernel
from zagent.plugins.runlog.store import RunLogStore

from .conftest import PLUGINS, run_scenario


def test_off_by_default_for_an_embedded_kernel_no_observer_is_added(log_path):
    """Kernel() with the runlog plugin but no "log" setting adds no event listener and writes no file."""
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    assert not k.hooks.active("zagent_event")
    k.close()


def test_zagent_log_env_turns_it_on(monkeypatch, tmp_path):
    """ZAGENT_LOG=1 logs to $ZAGENT_LOG_DB."""
    path = tmp_path / "env.db"
    monkeypatch.setenv("ZAGENT_LOG", "1")
    monkeypatch.setenv("ZAGENT_LOG_DB", str(path))
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    k.llm("test:offline").complete("hello")
    k.close()
    assert [r["kind"] for r in RunLogStore.open(path).runs()] == ["llm"]


def test_the_cli_logs_by_default_and_zagent_log_0_turns_it_off(monkeypatch):
    """The zagent command's kernel has "log" on unless ZAGENT_LOG is set (0 turns it off)."""
    monkeypatch.setenv("ZAGENT_PLUGINS", "runlog,offline")
    k = start_kernel([])
    assert k.config["log"] is True and k.hooks.active("zagent_event")
    k.close()
    monkeypatch.setenv("ZAGENT_LOG", "0")
    k = start_kernel([])
    assert "log" not in k.config and not k.hooks.active("zagent_event")
    k.close()


def test_a_react_run_is_one_run_with_its_llm_and_tool_spans(make_logged, log_path):
    """Two tool calls in one step: the log has the run, two steps, two LLM calls and both tool calls with content."""
    run_scenario(make_logged, "react_two_tools")
    store = RunLogStore.open(log_path)
    [run] = store.runs()
    assert (run["kind"], run["name"], run["outcome"], run["llm_calls"], run["tool_calls"]) == ("run", "helper", "ok", 2, 2)
    rows = store.spans(run["run_id"])
    tools = {r["name"]: r for r in rows if r["kind"] == "tool"}
    assert set(tools) == {"word_count", "shout"}
    assert "arguments" in tools["shout"]["data"] and tools["shout"]["data"]["state"] == "success"
    llm = [r for r in rows if r["kind"] == "llm"]
    assert all(r["input_tokens"] > 0 and r["duration"] is not None for r in llm)
    assert llm[0]["data"]["request"]["messages"][-1]["content"] == "How many words are in 'the quick brown fox'?"
    assert {c["name"] for c in llm[0]["data"]["reply"]["tool_calls"]} == {"word_count", "shout"}
    step1 = next(r for r in rows if r["kind"] == "step" and r["name"] == "step 1")
    assert all(t["parent_id"] == step1["span_id"] for t in tools.values())


def test_secrets_in_options_and_tool_arguments_are_masked(make_logged, log_path):
    """An api_key request option and a tool argument named token are stored as ***, never in clear."""
    k = make_logged()

    def login(user: str, token: str) -> str:
        """Log in.

        Args:
            user: who.
            token: the credential.
        """
        return "ok"

    k.add_tool(login)
    k.run_tool({"name": "login", "arguments": {"user": "ann", "token": "tok-SECRET-123"}})
    k.llm("test:offline").complete("hi", api_key="sk-SECRET-456")
    k.close()
    raw = b"".join(bytes(r[0]) for r in sqlite3.connect(log_path).execute("SELECT data FROM run_spans"))
    assert b"SECRET" not in raw and b"***" in raw and b"ann" in raw


def test_a_run_still_open_when_the_kernel_closes_is_written_as_unfinished(make_logged, log_path):
    """A run whose run_end never came: kernel.close() writes its rows, the open spans marked unfinished."""
    k = make_logged()
    k.emit("run_start", action="x")
    k.close()
    [row] = RunLogStore.open(log_path).spans(RunLogStore.open(log_path).db.read(
        lambda c: c.execute("SELECT run_id FROM run_spans").fetchone()[0]))
    assert row["outcome"] == "unfinished"


def test_a_file_of_another_application_is_refused_and_left_untouched(tmp_path):
    """Pointing the log at an SQLite file of something else: ForeignDatabase, the file unchanged."""
    from zagent.plugins.memory import ForeignDatabase

    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine (x)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(ForeignDatabase):
        RunLogStore.open(path)
    assert path.read_bytes() == before


def test_past_max_held_runs_the_oldest_open_run_is_written_as_unfinished(make_logged, log_path, monkeypatch):
    """Runs whose end never comes (a process-level start, a plugin's own span) are held up to ``MAX_HELD_RUNS``;
    past it the oldest is written as it stands, its open span ``unfinished``, and no longer held."""
    import asyncio

    from zagent.plugins.runlog import observer

    monkeypatch.setattr(observer, "MAX_HELD_RUNS", 3)
    k = make_logged()

    async def open_run(i):
        await k.aemit("run_start", action=f"r{i}")  # a task of its own: each its own top span

    for i in range(5):
        asyncio.run(open_run(i))
    logger = next(impl[1].__self__ for impl in k.hooks.impls("zagent_event")
                  if type(getattr(impl[1], "__self__", None)).__name__ == "RunLogger")
    assert len(logger._held) == 3
    rows = sqlite3.connect(log_path).execute("SELECT outcome FROM run_spans").fetchall()
    assert rows == [("unfinished",), ("unfinished",)]
