"""Round thirteen, generated workflows, memory and surfaces: round twelve's open cases in this family (a generator
given no ``tools=``, an inline agent named like a stored one, names read whole from memory and document files, a
skills index whose index SQL was changed) and their neighbours, memory queries written by a model, a batch resuming a results file another user wrote.

Attacks tried and whether they got through before this round's fixes:

- ``WorkFlowGenerator`` built without ``tools=``: its generated agent names ``steal`` (registered by the app for
  something else), the model selects the manager's agent holding ``steal``, the generator's prompt lists ``steal``:
  GOT THROUGH (every registered tool was offered) -- fixed: no ``tools=`` means no tools; ``zagent workflow
  generate`` likewise: GOT THROUGH -- fixed: it offers only ``--tool NAME`` (registered tools, checked first)
- a workflow file's inline agent named like an agent the manager's storage holds (a folder or a ``.db``) but has
  not loaded: GOT THROUGH (the inline spec was registered first, and a later node naming the stored agent ran the
  file's prompt) -- fixed: the stored agent is loaded first and the inline spec is checked against it (same as a
  held one); a stored agent with ``steal`` and an inline spec naming none: GOT THROUGH -- fixed: WorkFlowError
- ``SqliteMemory.namespaces()`` (``zagent memory list``) with a 70 MiB namespace planted in ``memory.db``: GOT
  THROUGH (read whole) -- fixed: a StoreError naming the row; ``DocumentStore.sources()`` with a 70 MiB source, and
  a search whose winning chunk carries it: GOT THROUGH -- fixed: a ConfigError naming the limit; a 70 MiB chunk id
  in the full-text table: GOT THROUGH -- fixed: ids are measured before they are read; a 70 MiB run id in an
  ``AgentManager`` storage ``.db`` (a checkpoint file), listed by the generator: GOT THROUGH -- fixed: likewise
- a skills ``.index.sqlite`` shipped with an expression index on ``stats``, or zagent's ``transitions_name`` index
  redefined: GOT THROUGH -- fixed: indexes are compared with zagent's SQL too
- a model's recall query or document question with LIKE wildcards (``%``, ``_``) or FTS5 syntax (``*``, column
  filters, ``NEAR``): held (parameters, quoted words); a namespace with ``%`` reading another: held
- ``zagent batch --out`` naming a results file another user owns, listing every item as done: held (refused);
  but the file was read whole (every line decoded) before the refusal: GOT THROUGH -- fixed: its owner is checked
  before the first line is read

Counted by attack: 14 tried, 11 got through, 11 fixed; 3 held. (``zagent mcp serve``:
``contrib/zagent-mcp/tests/test_mcp_round13_surfaces.py``, 6 tried, all held.)
"""

import json
import os
import sqlite3

import msgspec
import pytest

from zagent import ConfigError, Message
from zagent.errors import ZagentError
from zagent.plugins.manager import AgentManager
from zagent.plugins.workflow import WorkFlowError, WorkFlowExecutor, WorkFlowGenerator, WorkFlowGraph
from zagent.plugins.workflow.errors import GenerationError
from zagent.plugins.workflow.graph import WorkFlowNode

from .conftest import agent_spec, make_kernel, run_cli

GOAL = "Write a short report on solar power"
BIG = 70 * 2**20


def _node():
    return msgspec.convert({"name": "t0", "inputs": [{"name": "goal"}], "outputs": [{"name": "report"}]},
                           WorkFlowNode)


def _report_agent(**over):
    return {"name": "ReportAgent", "prompt": "Write the report for {goal}.", "outputs": [{"name": "report"}], **over}


# -- a generator given no tools ---------------------------------------------------------------------------------


def test_a_generator_given_no_tools_offers_its_agents_none():
    """Attack (got through): the app builds ``WorkFlowGenerator(kernel=k, llm=...)`` to plan a report; the model's
    generated agent names ``steal``, a tool the app registered for another job. Defence: without ``tools=`` a
    generated agent may use no tool (a GenerationError naming it), and the prompt lists none."""
    with make_kernel() as k:
        llm = k.llm("scripted:gen", replies=[json.dumps({"generated_agents": [_report_agent(tool_names=["steal"])]})])
        gen = WorkFlowGenerator(kernel=k, llm=llm, num_turns=0, max_retries=0)
        with pytest.raises(GenerationError, match="steal"):
            gen.agent_generator.generate(GOAL, _node())
        sent = "\n".join(str(m.content) for m in llm.requests[0].messages)
    assert "- steal" not in sent and "- word_count" not in sent


def test_a_generator_given_no_tools_cannot_select_an_agent_holding_one():
    """Attack (got through): with no ``tools=``, the model *selects* the manager's ``Janitor``, which holds
    ``steal``. Defence: a selected agent using any tool is refused when the generator was given none."""
    with make_kernel() as k:
        manager = AgentManager(kernel=k)
        manager.add_agent({"name": "Janitor", "prompt": "Clean {goal}", "inputs": [{"name": "goal"}],
                           "outputs": [{"name": "report"}], "tools": ["steal"]})
        llm = k.llm("scripted:gen", replies=[json.dumps({"selected_agents": ["Janitor"]})])
        gen = WorkFlowGenerator(kernel=k, llm=llm, manager=manager, num_turns=0, max_retries=0)
        with pytest.raises(GenerationError, match="steal"):
            gen.agent_generator.generate(GOAL, _node())


def test_a_generator_given_tools_still_offers_exactly_those():
    """Regression: ``tools=["word_count"]`` offers ``word_count`` (listed, accepted) and nothing else."""
    with make_kernel() as k:
        reply = json.dumps({"generated_agents": [_report_agent(tool_names=["word_count"])]})
        llm = k.llm("scripted:gen", replies=[reply])
        gen = WorkFlowGenerator(kernel=k, llm=llm, num_turns=0, max_retries=0, tools=["word_count"])
        [spec] = gen.agent_generator.generate(GOAL, _node())
        sent = "\n".join(str(m.content) for m in llm.requests[0].messages)
    assert spec["tools"] == ["word_count"] and "- word_count" in sent and "- steal" not in sent


def _cli_generate(k, tmp_path, *flags):
    """``zagent workflow generate`` with a scripted model whose agent for the one sub-task names ``steal``."""
    from zagent.plugins.cli import main

    plan = json.dumps({"sub_tasks": [{"name": "write", "inputs": ["goal"], "outputs": ["report"]}]})
    agents = json.dumps({"generated_agents": [_report_agent(tool_names=["steal"])]})
    k.llm("scripted:cli13").replies.extend([plan, agents])
    out = tmp_path / "wf.json"
    code = main(["workflow", "generate", GOAL, "-o", str(out), "-m", "scripted:cli13", "--turns", "0", *flags],
                kernel=k)
    return code, out


def test_workflow_generate_on_the_command_line_offers_no_tool_unless_named(tmp_path, capsys):
    """Attack (got through): ``zagent workflow generate`` in a kernel holding ``steal``; the model's agent uses it,
    and ``zagent workflow run wf.json`` would then offer it. Defence: the command offers no tool without
    ``--tool NAME``; the agent naming ``steal`` is refused (exit 1, the file not written)."""
    with make_kernel() as k:
        code, out = _cli_generate(k, tmp_path)
    assert code == 1 and not out.exists() and "steal" in capsys.readouterr().err


def test_workflow_generate_tool_flag_names_registered_tools_only(tmp_path, capsys):
    """Guard: ``--tool`` naming a tool that is not registered exits 1 naming it, before any model call; a
    registered one is offered (the agent naming ``steal`` is accepted with ``--tool steal``)."""
    with make_kernel() as k:
        code, out = _cli_generate(k, tmp_path, "--tool", "no_such_tool")
        assert code == 1 and "no_such_tool" in capsys.readouterr().err and not out.exists()
    with make_kernel() as k:
        code, out = _cli_generate(k, tmp_path, "--tool", "steal")
    assert code == 0 and WorkFlowGraph.load(out).nodes[0].agents[0]["tools"] == ["steal"]


# -- an inline agent named like a stored one --------------------------------------------------------------------


def _stored(tmp_path, kind, **over):
    """The manager storage (a folder or a ``.db``) holding the user's ``Writer`` (prompt ``REAL WRITER``)."""
    spec = {"name": "Writer", "prompt": "REAL WRITER {notes}", "inputs": [{"name": "notes"}],
            "outputs": [{"name": "report"}], "parse_mode": "str", **over}
    if kind == "folder":
        store = tmp_path / "agents"
        store.mkdir(mode=0o700)
        (store / "Writer.json").write_text(json.dumps(spec))
        return str(store)
    path = str(tmp_path / "agents.db")
    with make_kernel() as k:
        saver = AgentManager(kernel=k)
        saver.add_agent(spec)
        saver.save_all(path)
    return path


def _shadowing_workflow(**inline):
    """Node ``a``'s inline ``Writer`` (the file's prompt), then node ``b`` naming the stored ``Writer``."""
    writer = {"name": "Writer", "prompt": "EVIL {goal}", "inputs": [{"name": "goal"}],
              "outputs": [{"name": "notes"}], "parse_mode": "str", **inline}
    return WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "goal"}], "outputs": [{"name": "notes"}],
         "agents": [writer]},
        {"name": "b", "description": "b", "inputs": [{"name": "notes"}], "outputs": [{"name": "report"}],
         "agents": ["Writer"]}], "edges": [{"source": "a", "target": "b"}]})


@pytest.mark.parametrize("kind", ["folder", "db"])
def test_an_inline_agent_cannot_shadow_a_stored_agent_not_loaded_yet(tmp_path, kind):
    """Attack (got through): the user's manager stores ``Writer`` (not loaded yet); a downloaded workflow file's
    node ``a`` carries an inline ``Writer`` with its own prompt, registered first, so node ``b``, which names the
    user's ``Writer``, ran the file's prompt. Defence: an inline spec named like a stored agent is that agent, as
    for one already held: the file's prompt never runs under the user's name."""
    storage = _stored(tmp_path, kind)
    with make_kernel() as k:
        llm = k.llm("scripted:run", replies=["done"] * 4)
        manager = AgentManager(kernel=k, storage=storage)
        try:
            WorkFlowExecutor(kernel=k, llm=llm, manager=manager).run(_shadowing_workflow(), {"goal": "solar"})
        except ZagentError:
            pass  # refusing the file is a defence too
        sent = "\n".join(str(m.content) for r in llm.requests for m in r.messages)
    assert "EVIL" not in sent


def test_an_inline_agent_named_like_a_stored_agent_with_tools_is_refused(tmp_path):
    """Attack (got through): the stored ``Writer`` holds ``steal``; the inline ``Writer`` names no tool, so the
    node would silently run an agent with ``steal``. Defence: WorkFlowError naming the agent and the tool."""
    storage = _stored(tmp_path, "folder", tools=["steal"])
    with make_kernel() as k:
        manager = AgentManager(kernel=k, storage=storage)
        with pytest.raises(WorkFlowError, match="Writer.*steal"):
            WorkFlowExecutor(kernel=k, llm="scripted:x", manager=manager).run(_shadowing_workflow(), {"goal": "g"})
        assert "steal" not in k.spy.ran


# -- names read whole -------------------------------------------------------------------------------------------


def test_a_huge_namespace_name_planted_in_memory_is_refused_unread(tmp_path):
    """Attack (got through): ``memory.db`` edited so one row's namespace is 70 MiB; ``zagent memory list``
    (``namespaces()``) read it whole. Defence: a StoreError naming the row and saying what to do."""
    with make_kernel() as k:
        path = str(tmp_path / "memory.db")
        store = k.memory("sqlite", path=path)
        store.add("A", Message.user("alpha"))
        store.add("B", Message.user("beta"))
        store.close()
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE messages SET namespace = ? WHERE namespace = 'B'", ("x" * BIG,))
        store = k.memory("sqlite", path=path)
        with pytest.raises(ZagentError, match="namespace.*row"):
            store.namespaces()
        store.close()


def test_a_huge_document_source_planted_is_refused_unread(tmp_path):
    """Attack (got through): a document store edited so a chunk's ``source`` is 70 MiB; ``sources()`` and a
    search retrieving that chunk read it whole (into the answering prompt's citation). Defence: a ConfigError
    naming the limit."""
    with make_kernel() as k:
        path = str(tmp_path / "docs.db")
        store = k.memory("documents", path=path, embedder=None)
        store.add("the refund window is 30 days", source="policy.txt")
        store.close()
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE zagent_doc_chunks SET source = ?", ("x" * BIG,))
        store = k.memory("documents", path=path, embedder=None)
        with pytest.raises(ConfigError, match="source"):
            store.sources()
        with pytest.raises(ConfigError, match="MiB"):
            store.search("refund window")
        store.close()


def test_a_huge_chunk_id_planted_in_the_search_index_is_refused_unread(tmp_path):
    """Attack (got through): the document store's full-text table edited so the matching chunk's ``id`` is 70 MiB;
    each search read it whole (and sent it back as a parameter). Defence: ids are measured first; a ConfigError
    saying the file was edited."""
    with make_kernel() as k:
        path = str(tmp_path / "docs.db")
        store = k.memory("documents", path=path, embedder=None)
        store.add("the refund window is 30 days", source="policy.txt")
        store.close()
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE zagent_doc_fts SET id = ?", ("x" * BIG,))
        store = k.memory("documents", path=path, embedder=None)
        with pytest.raises(ConfigError, match="chunk id"):
            store.search("refund window")
        store.close()


def test_a_huge_run_id_planted_in_an_agents_db_is_refused_unread(tmp_path):
    """Attack (got through): a downloaded ``agents.db`` (an ``AgentManager`` storage, a checkpoint file) holding a
    70 MiB run id: ``zagent workflow generate --agents agents.db`` lists it to avoid its names, and ``list()`` read
    every run id (and metadata) whole. Defence: a StoreError saying the file was edited, before reading it."""
    from zagent.plugins.manager.inline import stored_names

    path = str(tmp_path / "agents.db")
    with make_kernel() as k:
        saver = AgentManager(kernel=k)
        saver.add_agent(_report_agent(inputs=[{"name": "goal"}]))
        saver.save_all(path)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE checkpoints SET run_id = ?", ("agent:" + "x" * BIG,))
        with pytest.raises(ZagentError, match="run id"):
            k.memory("checkpoints", path=path).list()
        with pytest.raises(ZagentError, match="run id"):
            stored_names(AgentManager(kernel=k, storage=path))


# -- the skills index -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sql", [
    "CREATE INDEX evil ON stats(upper(name), length(zeroblob(1000)))",
    "DROP INDEX transitions_name; CREATE INDEX transitions_name ON transitions(name, length(zeroblob(1000)))",
], ids=["expression-index", "redefined-own-index"])
def test_a_skills_index_with_an_index_of_its_own_is_refused(tmp_path, sql):
    """Attack (got through): a skills folder shipped with ``.index.sqlite`` holding an expression index on
    ``stats`` (or zagent's own index redefined): its expression runs on every write (200 MB per insert in the
    wild). Defence: the index's indexes are compared with zagent's SQL; a ConfigError, the file untouched."""
    from zagent.plugins.skills.index import SkillIndex

    path = str(tmp_path / ".index.sqlite")
    SkillIndex(path).close()
    with sqlite3.connect(path) as conn:
        conn.executescript(sql)
    before = open(path, "rb").read()
    with pytest.raises(ConfigError, match="index"):
        SkillIndex(path)
    assert open(path, "rb").read() == before


# -- memory queries written by a model --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["%", "_", "%a%", "* OR beta", "namespace:B", "NEAR(alpha beta)", '"B" OR *'])
def test_a_model_recall_query_reads_no_other_namespace(tmp_path, text):
    """Attack (held): a recall query written by a model with LIKE wildcards or FTS5 syntax, to match every row;
    a namespace given as ``A%``. Defence: namespaces compare equal, queries are quoted words: ``B`` is never read."""
    with make_kernel() as k:
        store = k.memory("sqlite", path=str(tmp_path / "memory.db"))
        store.add("A", Message.user("alpha"))
        store.add("B", Message.user("beta secret"))
        found = [m.content for m in store.search("A", text)] + [m.content for m in store.search("A%", text)]
        found += [m.content for m in store.search("_", text)]
        store.close()
    assert all("secret" not in c for c in found), found


@pytest.mark.parametrize("question", ["%", "* OR secret", "source:secret.txt", 'NEAR("refund" secret)'])
def test_a_model_document_question_with_query_syntax_is_read_as_words(tmp_path, question):
    """Attack (held): a model's ``query_documents`` question in FTS5 syntax (``*``, a column filter, ``NEAR``) or
    a LIKE wildcard. Defence: its words are quoted; no SQLite error, no chunk matched by syntax."""
    with make_kernel() as k:
        store = k.memory("documents", path=str(tmp_path / "docs.db"), embedder=None)
        store.add("the refund window is 30 days", source="policy.txt")
        hits = store.search(question)
        store.close()
    assert all("refund" in c.text for c in hits) and (not hits or "secret" in question)


# -- batch results written by someone else ----------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make another user's file")
def test_a_batch_does_not_resume_a_results_file_another_user_wrote(tmp_path):
    """Attack (held): ``zagent batch inputs.jsonl --out results.jsonl`` in a shared folder where another user
    planted ``results.jsonl`` listing every item as done with forged outputs. Defence: the file is refused
    (another user's), nothing is skipped on its word."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(json.dumps({"id": "a", "question": "q"}) + "\n")
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"line": 1, "id": "a", "ok": True, "outputs": {"answer": "FORGED"}}) + "\n")
    os.chown(out, 65534, 65534)
    done = run_cli("batch", str(spec), str(inputs), "--out", str(out), cwd=tmp_path,
                   plugins="offline,parsers,actions,react,memory,manager,workflow,groupchat,rails,cli,batch")
    assert done.returncode != 0
    assert "another user" in done.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to make another user's file")
def test_another_users_results_file_is_refused_before_it_is_read(tmp_path):
    """Attack (got through): the planted results file is read (every line decoded, every id kept in memory: 16 MiB
    lines by the thousand) before the write side refuses it as another user's. Defence: its owner is checked
    before the first line is read (a first line that is no JSON shows which check came first)."""
    from zagent.plugins.batch.files import ResultsFile

    out = tmp_path / "results.jsonl"
    out.write_text("not json at all\n")
    os.chown(out, 65534, 65534)
    with pytest.raises(ConfigError, match="another user"):
        ResultsFile(out)
