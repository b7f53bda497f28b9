r"""Round eleven: untrusted text in outputs, memory namespaces and resource bounds (21 tried, 16 got through).

Got through before the fix: ``--json`` output holding a model's or tool's DEL or C1 control (``\x9b``, the one-byte
CSI) was escaped as ``\x9b``, no JSON escape: invalid JSON (now ``\u009b``, valid in JSON and in text); the HTML
timeline showed bidi overrides, zero-width and tag characters and raw controls as they are, so a reviewer read a
reordered or hidden text (now shown escaped, as on the terminal); a model's tool name or a node's error holding a
line break printed a fake progress line on stderr (``zagent run``, ``chat``, ``workflow run``: now one line); a
ReAct checkpoint kept a finished call's whole return value (a 30 MB tool output made a 30 MB row; a value JSON
cannot hold stopped the run): it keeps what the model reads; four ``rails.redact`` patterns with exponential
backtracking passed the static check (a delimiter class above U+3000, case folds ``ſ``/``s`` and Kelvin/``k``); a
spec listing 1,001 (or 300,000) agents, nodes or members loaded (now ``SPEC_LENGTHS``); a YAML spec holding a
5,000-digit number or an impossible date raised a bare ``ValueError`` (now a ``ConfigError`` naming the file). Held:
OSC 52/OSC 8/title sequences in ``zagent logs`` output, markup in a call id on the page, path-like, case, Unicode
and wildcard (``%``, ``_``, ``*``) namespaces and searches, megabytes of open tool-call markers in every text format
(linear), a 50 MB tool output in the run log and the next prompt (cut).
"""

import json
import sqlite3

import pytest

from zagent import Kernel, ToolCall

from .conftest import make_kernel

C1 = "\x9b2J\x7f\x85"  # CSI (clear screen), DEL, NEL
RAW = set("\x9b\x7f\x85\x1b\x07")  # none may reach the output raw
OSC = "\x1b]52;c;Y3VybCBldmlsLnNo\x07\x1b]8;;https://evil.example\x07link\x1b]8;;\x07\x1b]0;title\x07"
HIDDEN = "\u202egpj.exe\u200b\u2066\U000e0041\u00ad"  # override, zero-width space, isolate, tag, soft hyphen
INVISIBLE = set("\u202e\u200b\u2066\U000e0041\u00ad")
HOSTILE = f"pwn{C1}{OSC}{HIDDEN}ed"
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.runlog", "zagent.plugins.cli"]
FORMATS = ["tool_call", "hermes", "mistral", "llama3", "fenced", "pycall", "pipe"]


@pytest.fixture
def log_path(tmp_path):
    """A run log of one ReAct run whose tool result, arguments, reply and span names carry ``HOSTILE``."""
    path = str(tmp_path / "logs.db")
    k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": path})

    def fetch(url: str) -> str:
        """Fetch a page."""
        return f"page says {HOSTILE}"

    k.add_tool(fetch)
    from zagent.plugins.react.loop import ReActLoop

    llm = k.llm("scripted:m", replies=[{"tool_calls": [{"name": "fetch", "arguments": {"url": HOSTILE}}]},
                                       f"answer {HOSTILE}"])
    ReActLoop(kernel=k, llm=llm, tools=["fetch"], agent="helper").run(f"task {HOSTILE}")
    k.close()
    db = sqlite3.connect(path)
    db.execute("UPDATE run_spans SET name = ? WHERE kind = 'run'", (f"helper{HOSTILE}",))
    db.commit()
    db.close()
    return path


def cli(capsys, *args):
    from zagent.plugins.cli import main

    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(list(args), kernel=k) == 0
    finally:
        k.close()
    return capsys.readouterr().out


# -- terminal and HTML ---------------------------------------------------------------------------------------------


def test_json_output_with_c1_controls_stays_valid_json(log_path, capsys):
    """Attack: a tool output and a reply holding DEL and C1 controls (``\\x9b``: CSI in one byte), printed by
    ``zagent logs show --json``. Defence: each is a JSON escape (``\\u009b``): valid JSON, no raw control."""
    out = cli(capsys, "logs", "show", "latest", "--db", log_path, "--json")
    assert not RAW & set(out)
    rows = json.loads(out)  # was: Invalid \escape
    assert f"helper{HOSTILE}" in [row["name"] for row in rows]


def test_printable_escapes_every_c1_control_as_a_json_escape():
    """``printable`` of JSON text holding U+007F-U+009F is still JSON and gives the same string back."""
    from zagent.plugins.cliterminal import printable

    text = "".join(map(chr, range(0x7F, 0xA0)))
    shown = printable(json.dumps(text, ensure_ascii=False))
    assert json.loads(shown) == text and shown.isascii()


def test_logs_show_prints_osc_sequences_escaped(log_path, capsys):
    """Attack: OSC 52 (clipboard), OSC 8 (link) and OSC 0 (title) in a tool output and span name, shown by
    ``zagent logs show --step 1``. Defence (held): no raw ESC, BEL or C1 reaches stdout."""
    out = cli(capsys, "logs", "show", "latest", "--db", log_path, "--step", "1")
    assert "pwn" in out and not RAW & set(out)
    assert not INVISIBLE & set(out)


def test_the_html_timeline_shows_hidden_and_control_characters_escaped(log_path, tmp_path, capsys):
    """Attack: bidi overrides, zero-width, tag and soft-hyphen characters and raw controls in the agent's name, the
    arguments, a tool output and the reply, viewed in ``zagent logs show --html`` (the override reorders what the
    reviewer reads, a tag character hides text). Defence: shown as escapes, as on the terminal."""
    out = tmp_path / "run.html"
    cli(capsys, "logs", "show", "latest", "--db", log_path, "--html", str(out))
    page = out.read_text(encoding="utf-8")
    assert "pwn" in page and "page says" in page
    assert not INVISIBLE & set(page) and not RAW & set(page)
    assert "\\u202egpj.exe" in page and "\\x1b]52;c;" in page


FORGED = "x -> success\n[Counter] step 9: answered"


@pytest.mark.parametrize("printer", ["run", "chat"])
def test_a_tool_name_with_a_line_break_cannot_fake_a_progress_line(capsys, printer):
    """Attack: the model calls a tool named ``x -> success\\n[Counter] step 9: answered``; ``zagent run``'s and
    ``zagent chat``'s progress lines on stderr printed it on two lines, the second a fake step. Defence: one line,
    the break shown as ``\\x0a``."""
    k = make_kernel()
    if printer == "run":
        from zagent.plugins.actions.cli import _Progress as Printer
    else:
        from zagent.plugins.react.cli import _Printer as Printer
    k.add_plugin(Printer(), name="progress")
    agent = k.agent({"name": "Counter", "prompt": "Count: {text}", "inputs": [{"name": "text"}], "parse_mode": "str",
                     "outputs": [{"name": "answer"}], "tools": ["word_count"]})
    agent.llm = k.llm("scripted:forge", replies=[{"tool_calls": [{"name": FORGED, "arguments": {}}]}, "done"])
    agent(text="a")
    k.close()
    err = capsys.readouterr().err
    assert "\\x0a[Counter] step 9" in err and not any(line.startswith("[Counter] step 9") for line in err.splitlines())


def test_a_node_error_with_line_breaks_cannot_fake_workflow_progress(capsys):
    """Attack: a node fails with an error quoting model text ``\\n  + b: done``; ``zagent workflow run``'s progress
    printed a fake line saying node b finished. Defence: each progress line is one line."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowFailed
    from zagent.plugins.workflow.cli import ProgressPrinter

    from .conftest import NodeAgent, two_node_workflow

    class Failing:
        name = "two"

        async def aexecute(self, *, inputs, ctx=None):
            raise RuntimeError("the model said:\n  + b: done\nworkflow finished")

    k = make_kernel()
    k.add_plugin(ProgressPrinter(), name="progress")
    ex = WorkFlowExecutor(kernel=k)
    ex.manager.add_agent(NodeAgent("one", False))
    ex.manager.add_agent(Failing())
    with pytest.raises(WorkFlowFailed):
        ex.run(two_node_workflow(), {"x": "hi"})
    k.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines and not any(line.startswith(("  + b: done", "workflow finished")) for line in lines)


# -- memory namespaces -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["wallet", "\uff37\uff41\uff4c\uff4c\uff45\uff54", "Wallet/..", "../Wallet", "%",
                                  "_allet", "Wall*", "Wallet\u200b", "Wallet "])
def test_a_spec_chosen_name_never_reaches_the_apps_namespace(tmp_path, monkeypatch, name):
    """Attack: an untrusted spec named like the app's ``Wallet`` (case, full-width, path-like, SQL LIKE and glob
    wildcards, zero-width, a space) recalls with ``use_long_term_memory``. Defence (held): its namespace is its own
    ``name@digest`` (agent half never ``Wallet``) and its recall returns none of the app's messages."""
    from zagent import Message

    monkeypatch.setenv("ZAGENT_MEMORY_DB", str(tmp_path / "memory.db"))
    k = make_kernel()
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"name": name, "prompt": "Q: {q}", "inputs": [{"name": "q"}],
                                "outputs": [{"name": "answer"}], "parse_mode": "str", "use_long_term_memory": True}))
    evil = k.agent(str(path))
    store = evil._long_term()
    store.add("Wallet", Message.user("card 4111 wallet Wallet % _ *"))
    assert evil.namespace.split("/")[0] not in ("Wallet", "wallet") and "@" in evil.namespace
    for text in ("card", "%", "_", "*", "Wallet", 'card" OR "4111', "NEAR(card 4111)", "namespace:Wallet"):
        assert store.search(evil.namespace, text) == []
        assert store.search(evil.namespace, text, agent=evil.namespace.split("/")[0]) == []
    k.close()


# -- resource bounds ---------------------------------------------------------------------------------------------


def test_a_react_checkpoint_keeps_what_the_model_reads_not_a_huge_value(tmp_path):
    """Attack: a tool returns 30 MB in a batch of two calls; the checkpoint after the first result held the whole
    value (a 30 MB row; past 64 MiB the run can never be restored). Defence: it keeps the content the model
    reads (at most ``MAX_RESULT_CHARS``)."""
    from zagent.plugins.react import ReActLoop

    k = make_kernel()
    k.add_tool(lambda n: "x" * n, name="big", description="a big page")
    store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    calls = {"tool_calls": [{"name": "big", "arguments": {"n": 30_000_000}},
                            {"name": "word_count", "arguments": {"text": "a"}}]}
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:cp", replies=[calls, "done"]), tools=["big", "word_count"],
                     checkpoints=store, max_tool_call_concurrency=1)
    assert loop.run("go").content == "done"
    store.close()
    k.close()
    assert (tmp_path / "cp.db").stat().st_size < 5_000_000


def test_a_react_batch_with_a_value_json_cannot_hold_still_checkpoints(tmp_path):
    """Attack: a tool returns a set holding an object (its text for the model is its ``repr``) in a batch of two
    calls: the checkpoint could not encode the value and the run stopped. Defence: the run goes on."""
    from zagent.plugins.react import ReActLoop

    class Blob:
        def __repr__(self):
            return "<Blob>"

    k = make_kernel()
    k.add_tool(lambda: {1, Blob()}, name="obj", description="an object")
    store = k.memory("checkpoints", path=str(tmp_path / "cp.db"))
    calls = {"tool_calls": [{"name": "obj", "arguments": {}}, {"name": "word_count", "arguments": {"text": "a"}}]}
    loop = ReActLoop(kernel=k, llm=k.llm("scripted:obj", replies=[calls, "done"]), tools=["obj", "word_count"],
                     checkpoints=store, max_tool_call_concurrency=1)
    result = loop.run("go")
    assert result.content == "done" and [s.is_error for s in result.steps if s.tool] == [False, False]
    k.close()


@pytest.mark.parametrize("pattern", ["(?:[\uff10-\uff19]+[\uff10-\uff11])+$", "(?i)(?:[\u017f]+s)+$",
                                     "(?i)(?:[\u212a]+k)+$", "(?:[a-z\u3000-\uffff]+[\u4e00-\u4e01])+$"])
def test_a_spec_regex_whose_rounds_split_two_ways_above_the_scanned_range_is_refused(pattern):
    """Attack: a ``rails.redact`` pattern whose repeated group ends with a class matching only characters above
    U+3000 (full-width digits, CJK), or a letter its repeat matches ignoring case (``ſ`` is ``s``, the Kelvin sign
    ``k``): the check took the rounds as delimited, and 38 characters took over 15 s. Defence: refused."""
    from zagent import ConfigError
    from zagent.agentkit.specregex import compile_spec_regex

    with pytest.raises(ConfigError, match="rails.redact: .* is refused: a quantifier inside a repeated group"):
        compile_spec_regex(pattern, "rails.redact")


@pytest.mark.parametrize("pattern", [r"(?:\w+\W)+", r"(?:[a-z]+[^a-z])+", r"(?i)(?:[\w-]+\.)+[a-z]{2,}"])
def test_delimited_spec_regexes_are_still_accepted(pattern):
    """No false refusal: rounds ending with a character their repeats cannot match (in any case) are accepted."""
    from zagent.agentkit.specregex import compile_spec_regex

    compile_spec_regex(pattern, "rails.redact")


def _member(i):
    return {"name": f"m{i}", "description": "d", "prompt": "T: {text}\n{transcript}", "parse_mode": "str",
            "inputs": [{"name": "text"}, {"name": "transcript"}], "outputs": [{"name": "answer"}]}


@pytest.mark.parametrize("kind", ["agents-as-tools", "workflow nodes", "chat members"])
def test_a_spec_listing_thousands_of_agents_or_nodes_is_refused(kind):
    """Attack: a spec (at most 64 MiB: hundreds of thousands of entries) listing 1,001 inline agents to build and
    offer as tools with every request, workflow nodes (a model call each) or chat members. Defence: a
    ``ConfigError`` naming the key and the bound (``SPEC_LENGTHS``) when the spec loads; 1,000 still load."""
    from zagent import ConfigError
    from zagent.plugins.groupchat import GroupChat
    from zagent.plugins.workflow import WorkFlowGraph

    k = make_kernel()

    def load(n):
        if kind == "agents-as-tools":
            return k.agent({"name": "Boss", "prompt": "Q: {q}", "inputs": [{"name": "q"}], "parse_mode": "str",
                            "outputs": [{"name": "answer"}], "agents": [_member(i) for i in range(n)]})
        if kind == "workflow nodes":
            return WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "edges": [], "nodes": [
                {"name": f"n{i}", "description": "d", "inputs": [{"name": "x"}], "outputs": [{"name": f"y{i}"}],
                 "agents": ["one"]} for i in range(n)]})
        return GroupChat.from_dict({"name": "c", "agents": [_member(i) for i in range(n)],
                                    "termination": {"max_rounds": 1}}, kernel=k)

    with pytest.raises(ConfigError, match=r"lists 1,001 entries, more than 1,000"):
        load(1001)
    if kind != "agents-as-tools":  # 1,000 agents built as tools take seconds: the bound itself is the point
        load(1000)
    k.close()


@pytest.mark.parametrize("value", ["9" * 5000, "2021-13-45"])
def test_a_yaml_spec_value_python_cannot_hold_is_a_config_error(tmp_path, value):
    """Attack: a YAML spec holding a 5,000-digit number or the date 2021-13-45: a bare ``ValueError`` (advising
    ``sys.set_int_max_str_digits``) came out of loading it. Defence: a ``ConfigError`` naming the file."""
    pytest.importorskip("yaml")
    from zagent import ConfigError
    from zagent.speckit import load_spec_file

    path = tmp_path / "evil.yaml"
    path.write_text(f"name: evil\nmax_steps: {value}\n")
    with pytest.raises(ConfigError, match=r"evil.yaml[:\d]*: not (a usable YAML value|valid YAML: a number written)"):
        load_spec_file(str(path))


@pytest.mark.timeout(180)  # a hang guard: fails only if it never ends
@pytest.mark.parametrize("fmt", FORMATS)
def test_megabytes_of_open_call_markers_parse_in_linear_time(fmt):
    """Attack: a reply of 100,000 unclosed call openings or brackets (2 MB) in each text format (quadratic parsing
    would take hours). Defence (held): each is read in seconds."""
    k = Kernel(["zagent.plugins.parsers"], entry_points=False)
    reader = k.tool_format(fmt)
    for piece in ("<tool_call>{", "[TOOL_CALLS][", '{"name": "x", "arguments": ', "steal(", "```tool_call\n{",
                  "TOOL:x|", '{"a":' * 3):
        reader.extract(piece * 100_000)


def test_a_50_mb_tool_output_is_cut_before_the_run_log_and_the_next_prompt(tmp_path):
    """Attack: a tool returns 50 MB. Defence (held): the next prompt and the run log's row get at most
    ``MAX_RESULT_CHARS`` of it (and the ``tool_end`` event none)."""
    from zagent._tools.results import MAX_RESULT_CHARS
    from zagent.plugins.react import ReActLoop

    path = str(tmp_path / "logs.db")
    k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": path})
    k.add_tool(lambda: "y" * 50_000_000, name="flood", description="a flood")
    llm = k.llm("scripted:flood", replies=[{"tool_calls": [{"name": "flood", "arguments": {}}]}, "done"])
    ReActLoop(kernel=k, llm=llm, tools=["flood"]).run("go")
    k.close()
    fed = [m.content for m in llm.requests[1].messages if m.role == "tool"]
    assert len(fed) == 1 and len(fed[0]) <= MAX_RESULT_CHARS
    db = sqlite3.connect(path)
    biggest = db.execute("SELECT max(length(data)) FROM run_spans").fetchone()[0]
    db.close()
    assert biggest < 3 * MAX_RESULT_CHARS


def test_markup_in_a_call_id_reaches_the_html_page_inert(tmp_path, capsys):
    """Attack: a call id holding ``<svg onload>`` and ESC, viewed in the HTML timeline. Defence (held): escaped."""
    from zagent.plugins.react.loop import ReActLoop

    path = str(tmp_path / "logs.db")
    k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": path})
    k.add_tool(lambda: "ok", name="ping", description="ping")
    evil = '"><svg onload=alert(1)>\x1b[8m'
    llm = k.llm("scripted:id", replies=[{"tool_calls": [ToolCall(id=evil, name="ping", arguments={})]}, "done"])
    ReActLoop(kernel=k, llm=llm, tools=["ping"]).run("go")
    k.close()
    out = tmp_path / "run.html"
    cli(capsys, "logs", "show", "latest", "--db", path, "--html", str(out))
    page = out.read_text(encoding="utf-8")
    assert "<svg" not in page and "\x1b" not in page
