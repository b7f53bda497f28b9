"""Round fourteen: resource exhaustion on the paths next to round thirteen's: caches keyed by untrusted strings,
per-kernel and per-process tables fed by specs and names, counts bounded per list or per chat but not per spec or
run, tools left running by a cancelled run, stream pieces. Work is measured by ``tracemalloc``, descriptor counts,
call counts and lengths, never by wall time.

Tried (32 attack cases; 30 got through on the code before this round, all fixed; 2 held). Got through: huge
words of a task or of MCP tool descriptions kept by the retrieval lexicon's process-wide cache; a spec's 512 KB
``selection.prompt`` or ``title_format`` kept by the placeholder cache and the shared output spec's instruction
memo, and a 512 KB field ``description`` by the process-wide field-spec cache; a 1 MB ``rails.redact`` pattern
(seconds to check, cached twice) and 3,000 patterns; a worker keeping an agent per shipped spec; rate windows of
agents named anew never dropped; a store (and its file descriptors) held by the kernel per ReAct spec naming
``checkpoints`` and per agent with ``long_term_memory``; 1,000 judges in one eval case; helper agents and
hand-over tools of specs registered on the kernel for ever; a tool name streamed in 20,000 pieces (quadratic);
group chats nested in group chats multiplying their rounds, and inline chats each listing 400 agents;
``memory_size: null``; an in-process store's ``max_messages: 10**9``; 1 MB batch ids in an inputs and a results
file; 100,000 streamed line breaks held by the think splitter; async tools swallowing a run's cancellation left
uncounted, and sync tools of cancelled runs keeping the tool threads busy; 50 workflow nodes of 40 inline
agents; a long-lived executor's manager keeping every run's agents; 16,384-number tool vectors cached as Python
floats; 200,000 stop keywords; ``n: 16``; a spec's fallback chain of 16 models with 10 retries each (176
requests a call). Held: a workflow loop re-running 20 nodes 1,000 times (this round's bound on worst-case
agent calls), 100,000 output fields (the 5,000-field bound).
"""

import gc
import json
import tracemalloc

import pytest

from zagent.errors import ConfigError

from .conftest import agent_spec, make_kernel


def _kept(fn):
    """Bytes still allocated after ``fn()`` returned and garbage was collected (what a long-lived process keeps)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _word(i, size=2**18):
    """A distinct lower-case word of ``size`` letters (one token for every word splitter)."""
    head = "".join(chr(ord("a") + int(d)) for d in str(i))
    return (head + "q" * size)[:size]


# -- caches keyed by untrusted strings ---------------------------------------------------------------------------


def test_tool_retrieval_keeps_no_huge_words_of_the_tasks_it_ranked(kernel):
    """Attack (got through): an agent offered more tools than its ``tool_limit`` ranks them against its task; a
    calling model (an agent called as a tool takes its task from the caller's model) sends tasks holding one
    256 KB word each. Each word was looked up in the lexicon's process-wide ``lru_cache`` (16,384 entries), which
    kept it after the run: 40 runs kept 10 MB, a full cache 4 GB. Defence: words longer than any lexicon word are
    not looked up (nor cached)."""
    from zagent.plugins.react import ReActLoop

    def runs():
        llm = kernel.llm("scripted:r", replies=["done"] * 40)
        for i in range(40):
            ReActLoop(kernel=kernel, llm=llm, tools=["word_count", "steal"], tool_limit=1).run(
                f"please count {_word(i)}")
            llm.requests.clear()  # the scripted model's own record of what it was sent

    assert _kept(runs) < 4 * 2**20


def test_tool_retrieval_keeps_no_huge_words_of_tool_descriptions(kernel):
    """Attack (got through): an MCP server lists tools whose descriptions hold long words, a new set each time
    its list changes; every word went through the same process-wide cache. Defence: as above."""
    from zagent import Tool
    from zagent.plugins.react.retrieval import select_tools

    def lists():
        for i in range(40):
            tools = [Tool(name=f"t{j}", description=f"{_word(i * 10 + j)} tool", handler=lambda: "x",
                          parameters={"type": "object", "properties": {}}) for j in range(2)]
            select_tools(tools, "count words", limit=1)
        from zagent.plugins.react import retrieval
        retrieval._indexes.clear()  # the 32 indexes hold their tools' text by design: measure the word cache

    assert _kept(lists) < 4 * 2**20


def test_a_spec_selection_prompt_is_not_kept_by_the_placeholder_cache(kernel):
    """Attack (got through): an app builds group chats from stored, untrusted specs; each spec's
    ``selection.prompt`` is 512 KB and differs. The parsed prompt went into ``placeholders``' process-wide cache
    (1,024 entries) and stayed after the chat was dropped: 30 specs kept 30 MB, a full cache 16 GB of 16 MiB
    specs. Defence: a text longer than ``MAX_CACHED_TEXT`` is parsed each time, never cached."""
    from zagent.plugins.groupchat import GroupChat

    llm = kernel.llm("scripted:sel", replies=["A"] * 10)

    def chats():
        for i in range(30):
            prompt = f"{i} " + "pick the next speaker " * 25_000 + "{roles} {transcript}"
            spec = {"name": f"c{i}", "agents": [{"name": "A", "type": "react"}, {"name": "B", "type": "react"}],
                    "selection": {"policy": "llm", "llm": "scripted:sel", "prompt": prompt},
                    "termination": {"max_rounds": 1}}
            GroupChat.from_dict(spec, kernel, llm=llm)

    assert _kept(chats) < 6 * 2**20


def test_a_spec_title_format_is_not_kept_by_the_placeholder_cache(kernel):
    """Attack (got through): stored agent specs whose ``title_format`` is 512 KB and differs per spec: each load
    parsed it into ``placeholders``' cache and wrote format instructions quoting it into the memo of the output
    spec the agents share (256 entries of any size): 30 specs kept 32 MB, 256 of 16 MiB 4 GB. Defence: texts over
    ``MAX_CACHED_TEXT`` are parsed each time, and instructions over 64 KiB built each time, never cached."""
    def agents():
        for i in range(30):
            kernel.agent(agent_spec(name=f"T{i}", parse_mode="title",
                                    title_format=f"{i} " + "section " * 65_000 + "## {title}"))

    assert _kept(agents) < 6 * 2**20


def test_a_spec_field_description_is_not_kept_by_the_field_spec_cache(kernel):
    """Attack (got through): stored agent specs whose output field has a 512 KB ``description``, different per
    spec. Each declaration was compiled into the process-wide field-spec cache (1,024 entries of any size) keyed
    by its whole encoding, with the format instructions quoting it: 30 specs kept 45 MB after their agents were
    gone, a full cache gigabytes. Defence: declarations encoding to more than 64 KiB are compiled for their agent
    only, never cached."""
    def agents():
        for i in range(30):
            kernel.agent(agent_spec(name=f"D{i}", outputs=[{"name": "answer",
                                                            "description": f"{i} " + "detail " * 75_000}]))

    assert _kept(agents) < 6 * 2**20


def test_a_megabyte_spec_regex_is_refused_before_it_is_compiled_or_cached(kernel):
    """Attack (got through): an untrusted agent spec's ``rails.redact`` holds a 1 MB pattern: checking and
    compiling it took seconds of CPU at every load, and the compiled pattern stayed in two process-wide caches
    (``specregex``'s 256 and ``re``'s 512 entries), so specs varying it kept hundreds of MB. Defence: a spec
    regex is at most ``MAX_PATTERN`` (10,000) characters; longer is a ``ConfigError`` naming the key and the
    limit, raised before any parsing."""
    pattern = "secret-" + "x" * 2**20
    with pytest.raises(ConfigError, match=r"rails\.redact.*10,000 characters"):
        kernel.agent(agent_spec(agent_config={"rails": {"redact": [pattern]}}))


def test_a_long_but_ordinary_spec_regex_still_loads(kernel):
    """The limit is above what people write: a 2,000-character alternation of words loads."""
    words = "|".join(f"word{i}" for i in range(300))
    kernel.agent(agent_spec(name="Ok", agent_config={"rails": {"redact": [f"(?:{words})"]}}))


# -- per-kernel tables fed by specs --------------------------------------------------------------------------------


def test_a_worker_keeps_a_bounded_number_of_agents_built_from_shipped_specs(kernel):
    """Attack (got through): a worker process serves batch items and workflow nodes; each payload ships its spec,
    and the worker built an agent per distinct spec and kept every one in ``kernel.stash`` for its life (generated
    workflows make a new inline agent per plan: 600 plans, 600 agents and their models). Defence: a worker keeps
    at most ``MAX_WORKER_AGENTS`` (256) agents, the least recently used going first."""
    from zagent.agentkit.units import WORKER_AGENTS, worker_agent

    for i in range(600):
        worker_agent(kernel, agent_spec(name=f"Gen{i}"), {})
    built = kernel.stash.get(WORKER_AGENTS)
    assert len(built) <= 256
    again = worker_agent(kernel, agent_spec(name="Gen599"), {})
    assert again is worker_agent(kernel, agent_spec(name="Gen599"), {})


def test_rate_windows_of_agents_that_ran_are_dropped_once_empty():
    """Attack (got through): agents built from untrusted specs, each named anew (``r-<uuid>``), each with a
    ``tool_rpm`` rule; the kernel's ``RateWindows`` kept one window per (agent, rule) for its life, empty or not:
    2,000 such agents calling a tool once a second, 2,000 windows. Defence: windows empty for a whole ``WINDOW``
    are dropped as calls are counted."""
    from zagent import ToolCall
    from zagent.plugins.rails.ratelimit import WINDOWS, RateWindows

    now = [0.0]
    k = make_kernel()
    try:
        windows = k.stash.get_or_create(WINDOWS, lambda: RateWindows(clock=lambda: now[0]))
        for i in range(2000):
            ctx = k.context(agent=f"r{i}", agent_config={"rails": {"tool_rpm": {"word_count": 5}}})
            result = k.run_tool(ToolCall(id=f"c{i}", name="word_count", arguments={"text": "a b"}), ctx)
            assert result.state == "success"
            now[0] += 1.0
        assert len(windows.calls) <= 200
    finally:
        k.close()


def _spec_files(tmp_path, count, make):
    """``count`` spec files in a downloaded folder, ``make(i)`` each."""
    folder = tmp_path / "dl" / "proj"
    folder.mkdir(parents=True)
    paths = []
    for i in range(count):
        path = folder / f"a{i}.json"
        path.write_text(json.dumps(make(i)))
        paths.append(str(path))
    return paths


def _open_fds():
    import os

    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_react_specs_naming_checkpoints_do_not_keep_a_store_open_per_load(tmp_path):
    """Attack (got through): an app builds an agent per request from a stored, untrusted ReAct spec naming
    ``checkpoints: cp.db``; each load opened a checkpoint store the kernel held (with its SQLite file
    descriptors) until it closed, after the agent was gone: 60 loads, 120 descriptors (the process's 1,024 in
    about 500 requests). Defence: the kernel holds the stores it hands out weakly; a store nobody uses is
    closed by the garbage collector, and ``Kernel.close`` still closes those alive."""
    paths = _spec_files(tmp_path, 60, lambda i: {"type": "react", "name": f"R{i}", "checkpoints": "cp.db"})
    k = make_kernel()
    try:
        before = _open_fds()
        for path in paths:
            k.agent(path)
        gc.collect()
        assert _open_fds() - before < 20
    finally:
        k.close()


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_agents_with_long_term_memory_do_not_keep_a_store_open_per_load(tmp_path):
    """Attack (got through): the same with declared agents using ``long_term_memory`` (one store, three to six
    descriptors, per agent answering once: 60 agents, ~350 descriptors). Defence: as above."""
    paths = _spec_files(tmp_path, 60, lambda i: {**agent_spec(name=f"M{i}"), "use_long_term_memory": True,
                                                 "long_term_memory": {"path": "mem.db"}})
    k = make_kernel()
    try:
        before = _open_fds()
        for i, path in enumerate(paths):
            agent = k.agent(path)
            agent.llm = k.llm(f"scripted:m{i}", replies=["ok"])
            agent(question="q")
        del agent
        gc.collect()
        assert _open_fds() - before < 100  # was ~350: a few stay with the threads that used them last
    finally:
        k.close()


# -- fan-out a data file controls ------------------------------------------------------------------------------------


def test_a_cases_file_cannot_give_one_case_a_thousand_judges(tmp_path):
    """Attack (got through): an untrusted cases file lists 1,000 ``llm_judge`` scorers (or any scorer) for one case:
    each is a model call the user pays, 1,000 per case and 10**6 cases allowed. Defence: a case names at most
    ``MAX_CASE_SCORERS`` (32) scorers; more is a ``ConfigError`` naming the line, before the agent runs."""
    from zagent.plugins.evals import evaluate

    k = make_kernel(plugins=["zagent.plugins.batch", "zagent.plugins.evals"])
    judge = k.llm("scripted:judge", replies=['{"score": 1, "passed": true, "reason": "ok"}'] * 2000)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c", "inputs": {"question": "q"}, "expected": "Paris",
                                 "scorers": [{"name": "llm_judge", "criteria": f"c{i}"} for i in range(1000)]}) + "\n")
    try:
        agent = k.agent({"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
                         "outputs": [{"name": "answer"}], "parse_mode": "str"})
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        k.config["default_model"] = judge
        with pytest.raises(ConfigError, match=r"line 1.*1000 scorers.*at most 32"):
            evaluate(k, agent, str(cases), concurrency=1)
        assert len(judge.requests) == 0
    finally:
        k.close()


# -- agents offered as tools by spec files ----------------------------------------------------------------------------


def test_spec_files_naming_helper_agents_cannot_add_tools_for_ever(tmp_path, monkeypatch):
    """Attack (got through): an app loads stored, untrusted ReAct specs; each names a helper agent file whose
    agent has a fresh name. Every load registered the helper as a kernel tool (holding the helper, its memory and
    its stores) for the kernel's life: 80 loads, 80 tools (like the models of round thirteen). Defence: a kernel
    holds at most ``MAX_AGENT_TOOLS`` agents offered as tools (1,024; 40 here); the next is a ``ConfigError``
    naming the limit and what to do."""
    from zagent.plugins.actions import astool

    monkeypatch.setattr(astool, "MAX_AGENT_TOOLS", 40, raising=False)
    k = make_kernel()
    try:
        for i in range(80):
            folder = tmp_path / "dl" / f"p{i}"
            folder.mkdir(parents=True)
            (folder / "helper.json").write_text(json.dumps({"type": "react", "name": f"H{i}",
                                                            "description": "helps"}))
            (folder / "main.json").write_text(json.dumps({"type": "react", "name": f"Main{i}",
                                                          "agents": ["helper.json"]}))
            if i < 40:
                k.agent(str(folder / "main.json"))
                continue
            with pytest.raises(ConfigError, match=r"at most 40 agents offered as tools.*remove_tool"):
                k.agent(str(folder / "main.json"))
            break
        assert len([n for n in k.names("tools") if n.startswith("H")]) == 40
    finally:
        k.close()


# -- streams -----------------------------------------------------------------------------------------------------------


def test_a_tool_name_streamed_in_twenty_thousand_pieces_is_refused_early():
    """Attack (got through): an OpenAI-compatible server streams one tool call's *name* in 20,000 pieces of 50
    characters (5 MB of events, under the 32 MiB limit). The pieces were joined by ``+=`` (each copy the whole
    name so far: ~10 GB of copying, quadratic), and a 1 MB name reached the run. Defence: a streamed name longer
    than ``MAX_TOOL_NAME`` (1,024 characters; providers allow 64-128) is a ``ProtocolError`` naming the call's index."""
    from tests.servers.hostile import HostileServer, _chunk, _head
    from tests.servers.openai_server import chunk, sse

    from zagent.errors import ProtocolError

    pieces = [chunk({"role": "assistant", "content": None}),
              chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                     "function": {"name": "w", "arguments": ""}}]})]
    pieces += [chunk({"tool_calls": [{"index": 0, "function": {"name": "x" * 50}}]})] * 20_000
    pieces += [chunk({}, "tool_calls"), sse(b"[DONE]")]
    body = b"".join(_chunk(p) for p in pieces) + b"0\r\n\r\n"
    sent = {"bytes": 0}

    async def behave(request, writer):
        writer.write(_head(200, "text/event-stream"))
        for i in range(0, len(body), 65536):
            writer.write(body[i:i + 65536])
            sent["bytes"] += min(65536, len(body) - i)
            await writer.drain()
        return True

    kernel = make_kernel(plugins=["zagent.plugins.openai"])
    with kernel, HostileServer(behave) as server:
        llm = kernel.llm("openai:gpt-x", base_url=server.url + "/v1", api_key="sk-r14-limits-0123456789",
                         max_retries=0)
        with pytest.raises(ProtocolError, match=r"tool call at index 0.*name.*1,024 characters"):
            list(llm.stream("go"))


# -- nested group chats ------------------------------------------------------------------------------------------------


class _ModelCalls:
    """A plugin counting model calls (``llm_start`` events) of every model of the kernel."""

    def __init__(self):
        self.calls = 0

    def zagent_event(self, event):
        if event.type == "llm_start":
            self.calls += 1


def _nested_chat(levels, rounds):
    """A group chat spec whose first member is a group chat, ``levels`` deep, each of ``rounds`` rounds."""
    members = [{"name": "A", "type": "react"}, {"name": "B", "type": "react"}]
    for level in range(1, levels + 1):
        members = [{"type": "groupchat", "name": f"g{level}", "agents": members,
                    "termination": {"max_rounds": rounds}}, {"name": f"C{level}", "type": "react"}]
    return {"name": "outer", "agents": members, "termination": {"max_rounds": rounds}}


def test_group_chats_nested_in_group_chats_cannot_multiply_their_rounds(monkeypatch):
    """Attack (got through): a chat file's first member is an inline group chat whose first member is another,
    three deep, each with ``max_rounds: 8`` (1,000 allowed): one run made ~680 model calls; five levels of 1,000
    rounds would make ~10**14. ``max_rounds`` bounded each chat, not the run. Defence: one run takes at most
    ``max_chat_turns`` group chat turns (Kernel config, 1,000; 40 here) at any depth; the chat then ends with
    ``stopped_by="max_chat_turns"``, and so does every chat around it."""
    from zagent.plugins.groupchat import GroupChat, drive

    monkeypatch.setattr(drive, "MAX_CHAT_TURNS", 40, raising=False)
    counter = _ModelCalls()
    k = make_kernel(plugins=[counter])
    try:
        result = GroupChat.from_dict(_nested_chat(3, 8), k).run("talk")
    finally:
        k.close()
    assert counter.calls <= 40 and result.stopped_by == "max_chat_turns"
    assert "max_chat_turns" in result.detail


def test_the_cap_on_chat_turns_is_a_kernel_setting():
    """``max_chat_turns`` in the kernel's config sets the cap (a single chat of 1,000 rounds fits the default)."""
    from zagent.plugins.groupchat import GroupChat

    counter = _ModelCalls()
    k = make_kernel(config={"max_chat_turns": 5}, plugins=[counter])
    try:
        result = GroupChat.from_dict({"name": "duo", "agents": [{"name": "A", "type": "react"},
                                                                {"name": "B", "type": "react"}],
                                      "termination": {"max_rounds": 50}}, k).run("talk")
    finally:
        k.close()
    assert result.stopped_by == "max_chat_turns" and result.rounds == 5 and counter.calls == 5


# -- short-term memory a spec switches off -------------------------------------------------------------------------


def test_a_spec_cannot_make_an_agent_keep_every_message_for_ever(kernel):
    """Attack (got through): an untrusted agent spec sets ``memory_size: null`` (the bound checks let ``null``
    through as "not set"): its short-term memory then kept every message of every call for the agent's life (an
    agent offered as a tool lives as long as the kernel): 300 calls, 600 messages, and on. Defence: a spec's
    ``memory_size`` must be a whole number (0-100,000); ``null`` is a ``ConfigError`` naming the key (Python
    code may still pass ``None``)."""
    with pytest.raises(ConfigError, match=r"memory_size must be a whole number from 0 to 100000, got None"):
        agent = kernel.agent(agent_spec(memory_size=None))
        agent.llm = kernel.llm("scripted:mem", replies=["x" * 1000] * 300)
        for i in range(300):
            agent(question=f"q{i}")
        assert len(agent._memory) <= 200


# -- batch ids -------------------------------------------------------------------------------------------------------

QA = {"name": "QA", "prompt": "Answer: {question}", "inputs": [{"name": "question", "type": "string"}],
      "outputs": [{"name": "answer", "type": "string"}], "parse_mode": "str"}


def _peak(fn):
    """``(value, peak bytes allocated while fn ran)``."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_batch_keeps_no_megabyte_ids_of_its_inputs(tmp_path):
    """Attack (got through): an inputs file whose 40 lines each carry a 1 MB ``id`` (a line may be 16 MiB). The
    batch kept every id to find repeats (and wrote each into its results line and run tags): 40 MB held for 40
    lines, gigabytes for a large file. Defence: an item ``id`` is at most ``MAX_ITEM_ID`` (4,096) characters; a
    longer one fails that item, naming its line and the limit (the id is not echoed)."""
    k = make_kernel(plugins=["zagent.plugins.batch"])
    inputs, out = tmp_path / "inputs.jsonl", tmp_path / "out.jsonl"
    inputs.write_text("".join(json.dumps({"id": f"{i}" + "i" * 2**20, "question": "q"}) + "\n" for i in range(40)))
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:qa", replies=["Paris"] * 40)
        report, peak = _peak(lambda: k.batch(agent, str(inputs), out=out))
    finally:
        k.close()
    assert report.summary.failed == 40 and peak < 16 * 2**20
    first = json.loads(out.read_text().splitlines()[0])
    assert "4,096 characters" in first["error"]["message"] and len(out.read_text()) < 100_000


def test_resuming_a_batch_keeps_no_megabyte_ids_of_its_results_file(tmp_path):
    """Attack (got through): a results file (shared, or edited) of 40 records whose ids are 1 MB each; resuming the
    batch kept every id (40 MB) though no input can carry such an id. Defence: results ids longer than
    ``MAX_ITEM_ID`` are not kept."""
    k = make_kernel(plugins=["zagent.plugins.batch"])
    out = tmp_path / "out.jsonl"
    try:
        agent = k.agent(QA)
        agent.llm = k.llm("scripted:qa", replies=["Paris"])
        made_by = k.batch(agent, []).summary.made_by  # records the same agent made (others are refused)
        out.write_text("".join(json.dumps({"id": f"{i}" + "r" * 2**20, "line": i + 1, "ok": True, "output": {},
                                           "made_by": made_by}) + "\n" for i in range(40)))
        report, peak = _peak(lambda: k.batch(agent, [{"id": "new", "question": "q"}], out=out))
    finally:
        k.close()
    assert report.summary.done == 1 and peak < 16 * 2**20


# -- leading whitespace of a streamed reply ------------------------------------------------------------------------


def test_streamed_leading_whitespace_is_not_held_and_rebuilt_without_bound():
    """Attack (got through): a server streams 100,000 deltas of one line break before its answer. The kit's think
    splitter held leading whitespace back (it goes if a ``<think>`` span follows) by joining it with ``+=`` on every
    delta: all 100,000 characters held, the string rebuilt each time (quadratic: ~5 * 10**9 characters copied at
    this size, ~10**11 within the 32 MiB body limit). Defence: at most ``MAX_LEAD`` (4,096) characters are held;
    past that the whitespace is the answer's and is released."""
    from zagent.providerkit import ThinkStream

    stream = ThinkStream()
    held, out = 0, []
    for _ in range(100_000):
        out += stream.feed("\n")
        held = max(held, len(stream.lead))
    out += stream.feed("hello")
    out += stream.flush()
    assert held <= 4096
    assert "".join(t for kind, t in out if kind == "text").endswith("hello")


def test_leading_whitespace_before_a_think_span_still_goes():
    """The usual case is unchanged: a few line breaks, a ``<think>`` span, then the answer without them."""
    from zagent.providerkit import ThinkStream

    stream = ThinkStream()
    out = []
    for delta in ["\n", "\n", "<think>", "plan", "</think>", "\n\nanswer"]:
        out += stream.feed(delta)
    out += stream.flush()
    assert "".join(t for kind, t in out if kind == "text") == "answer"
    assert "".join(t for kind, t in out if kind == "reasoning") == "plan"


# -- tools left running by a cancelled run -----------------------------------------------------------------------


class _Stuck:
    """A tool body that blocks (or, async, swallows cancellations) until ``stop`` is set or 8 s pass."""

    def __init__(self):
        import threading

        self.stop = threading.Event()
        self.running = 0

    def block(self):
        self.running += 1
        try:
            self.stop.wait(8)
        finally:
            self.running -= 1
        return "late"

    async def swallow(self):
        import asyncio

        self.running += 1
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            while not self.stop.is_set() and loop.time() - start < 8:
                try:
                    await asyncio.sleep(0.01)
                except asyncio.CancelledError:
                    pass
        finally:
            self.running -= 1
        return "late"


def _cancel_calls(k, name, count, body, then=None):
    """Start ``count`` calls of tool ``name`` as runs of their own, cancel each once its body runs, then (on the
    same event loop, the cancelled calls' tasks still there) call tool ``then``: its result."""
    import asyncio

    from zagent import ToolCall, run_sync

    async def main():
        for i in range(count):
            before = body.running
            run = asyncio.ensure_future(k.arun_tool(ToolCall(id=f"c{i}", name=name, arguments={})))
            for _ in range(500):  # until the tool runs (a loaded machine may take a while)
                await asyncio.sleep(0.01)
                if body.running > before or run.done():
                    break
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)
        return await k.arun_tool(ToolCall(id="next", name=then, arguments={})) if then else None

    return run_sync(main())


def test_async_tools_ignoring_a_runs_cancellation_are_counted_and_capped():
    """Attack (got through): an app cancels runs (a client went away) while an async tool that swallows
    ``CancelledError`` runs. Past its timeout such a call is left running counted against
    ``tool_threads_abandoned_per_tool``; cancelled with its run it was left running uncounted: six cancelled
    runs, six stuck tasks, and the seventh call ran as well. Defence: a call cancelled with its run is counted
    like one past its timeout until its task ends; the next call is refused once the cap is reached."""
    from zagent import tool

    k = make_kernel(config={"tool_threads_abandoned_per_tool": 2})
    body = _Stuck()

    @tool(timeout=30)
    async def hang() -> str:
        """Hang."""
        return await body.swallow()

    k.add_tool(hang)
    try:
        refused = _cancel_calls(k, "hang", 6, body, then="hang")
        assert refused.state == "error" and "tool_threads_abandoned_per_tool" in refused.content
        assert body.running <= 2 and k.tool_executor().tasks == {"hang": 2}
    finally:
        body.stop.set()
        k.close()


def test_sync_tools_left_running_by_cancelled_runs_do_not_take_the_tool_threads():
    """Attack (got through): with two tool threads, two runs cancelled while a sync tool blocks: the threads stayed
    counted as serving, so every later sync call of the kernel waited in the queue until its own timeout (a tool
    that never returns takes the kernel's tools down). Past a timeout such a thread is abandoned and a fresh one
    serves. Defence: a call cancelled with its run abandons its thread the same way (counted, capped)."""
    from zagent import tool

    k = make_kernel(config={"tool_threads": 2})
    body = _Stuck()

    @tool(timeout=30)
    def block() -> str:
        """Block."""
        return body.block()

    @tool(timeout=3)
    def quick() -> str:
        """Answer at once."""
        return "ok"

    k.add_tool(block)
    k.add_tool(quick)
    try:
        assert _cancel_calls(k, "block", 2, body, then="quick").state == "success"
        assert body.running == 2
    finally:
        body.stop.set()
        k.close()


# -- workflows: agents across nodes, agents across runs ------------------------------------------------------------


def _graph(name, nodes, agents_per_node, prefix="w"):
    """A chain of ``nodes`` nodes (``v0`` -> ``v1`` -> ...), each with ``agents_per_node`` inline agents named
    apart."""
    from zagent.plugins.workflow import WorkFlowGraph

    return WorkFlowGraph.from_dict({"name": name, "goal": "g", "inputs": [{"name": "v0"}], "nodes": [
        {"name": f"n{i}", "description": "d", "inputs": [{"name": f"v{i}"}], "outputs": [{"name": f"v{i + 1}"}],
         "agents": [{**QA, "name": f"{prefix}{i}_{j}", "inputs": [{"name": f"v{i}"}],
                     "outputs": [{"name": f"v{i + 1}"}], "prompt": f"Echo: {{v{i}}}"}
                    for j in range(agents_per_node)]} for i in range(nodes)],
        "edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(nodes - 1)]})


def test_a_workflow_cannot_list_a_thousand_agents_in_every_node():
    """Attack (got through): a workflow file of 50 nodes each listing 40 inline agents (2,000 agent builds when it
    runs); the bound on a spec's lists (1,000 agents) held per list, so 1,000 nodes of 1,000 agents (10**6 agents)
    passed. Defence: the lists of one key count together across the spec: at most 1,000 agents in all."""
    with pytest.raises(ConfigError, match=r"agents lists hold 1,0\d\d entries in all, more than 1,000"):
        _graph("many", 50, 40)
    _graph("fits", 10, 40)  # 400 agents in all still load


def test_a_long_lived_workflow_executor_keeps_a_bounded_number_of_agents(monkeypatch):
    """Attack (got through): an app runs many workflow files (or generated plans) on one ``WorkFlowExecutor``; each
    run's inline agents were added to its manager, named apart, and kept for the executor's life: 60 runs, 60
    agents (and their memory). Defence: a manager holds at most ``MAX_AGENTS`` (4,096; 40 here) agents; the next
    is a ``ConfigError`` naming the limit and ``remove_agent``."""
    from zagent.plugins.manager import inline as managing
    from zagent.plugins.workflow import WorkFlowExecutor

    monkeypatch.setattr(managing, "MAX_AGENTS", 40, raising=False)
    k = make_kernel()
    try:
        ex = WorkFlowExecutor(kernel=k, llm=k.llm("scripted:wf", replies=["ok"] * 100))
        refused = None
        for i in range(60):
            try:
                ex.run(_graph(f"g{i}", 1, 1, prefix=f"r{i}_"), {"v0": "hi"})
            except Exception as exc:  # the refusal, as the run's failure
                refused = exc
                break
        assert len(ex.manager) <= 40 and refused is not None and "remove_agent" in str(refused)
    finally:
        k.close()


def test_a_group_chat_cannot_nest_a_thousand_agents_in_each_inline_chat(kernel):
    """Attack (got through): a group chat file whose members are three inline group chats listing 400 inline agents
    each (1,203 agents built at load; three levels of 1,000 would be 10**9): each list was bounded alone. Defence:
    inline members are counted with the spec, at most 1,000 agents in all."""
    from zagent.plugins.groupchat import GroupChat

    inner = [{"type": "groupchat", "name": f"g{c}", "termination": {"max_rounds": 2},
              "agents": [{"name": f"a{c}_{i}", "type": "react"} for i in range(400)]} for c in range(3)]
    with pytest.raises(ConfigError, match=r"agents lists hold 1,\d{3} entries in all, more than 1,000"):
        GroupChat.from_dict({"name": "outer", "agents": inner, "termination": {"max_rounds": 2}}, kernel)


# -- tool vectors a lying embedder returns ---------------------------------------------------------------------------


class _WideEmbedder:
    """An embedder whose server answers the widest vectors zagent takes (16,384 numbers) for every text."""

    model = "wide"

    async def aembed(self, texts):
        return [[0.5 + (i % 7) / 100] * 16_384 for i, _ in enumerate(texts)]


def test_cached_tool_vectors_of_a_wide_embedder_are_kept_compactly_and_bounded():
    """Attack (got through): tool retrieval caches each tool's vector per embedding model, up to 4,096 vectors; an
    embedding server answering 16,384 numbers a text (the most ``checked_vectors`` takes) made each cached vector a
    list of 16,384 Python floats (~512 KB): 120 MCP tools kept ~60 MB, a full cache ~2 GB per model, 8 models.
    Defence: vectors are cached as the checked float32 arrays (64 KB here), at most ``MAX_CACHED_NUMBERS``
    (2**24) numbers per model."""
    from zagent import Tool, run_sync
    from zagent.plugins.react import retrieval

    tools = [Tool(name=f"t{i}", description=f"tool number {i}", handler=lambda: "x",
                  parameters={"type": "object", "properties": {}}) for i in range(120)]
    retrieval._embedding_caches.clear()
    try:
        kept = _kept(lambda: run_sync(retrieval.aselect_tools(tools, "count words", limit=2, embedder=_WideEmbedder())))
        assert kept < 16 * 2**20
        cache = next(iter(retrieval._embedding_caches.values()))
        assert sum(len(v) for v in cache.values()) <= 2**24
    finally:
        retrieval._embedding_caches.clear()


def test_specs_with_handoffs_cannot_add_transfer_tools_for_ever(monkeypatch):
    """Attack (got through): an app serves ReAct specs (untrusted) whose ``handoffs`` name agents with fresh names;
    each first chat registered a ``transfer_to_<name>`` tool per agent of the group on the kernel, kept (with the
    latest group's agents in its handler) for the kernel's life: 60 specs, 120 tools. Defence: a kernel holds at
    most ``MAX_HANDOFF_TOOLS`` (1,024; 40 here) transfer tools; the next group is a ``ConfigError`` naming the
    limit and what to do."""
    from zagent.plugins.react import handoff

    monkeypatch.setattr(handoff, "MAX_HANDOFF_TOOLS", 40, raising=False)
    k = make_kernel()
    refused = None
    try:
        for i in range(60):
            agent = k.agent({"type": "react", "name": f"Desk{i}",
                             "handoffs": [{"type": "react", "name": f"Expert{i}", "description": "knows"}]})
            agent.llm = k.llm(f"scripted:h{i}", replies=["done"] * 5)
            try:
                agent.chat("hello")
            except ConfigError as exc:
                refused = exc
                break
        assert len([n for n in k.names("tools") if n.startswith("transfer_to_")]) <= 40
        assert refused is not None and "at most 40 hand-over tools" in str(refused)
    finally:
        k.close()


def test_a_workflows_loops_cannot_rerun_its_nodes_without_a_run_bound():
    """Attack (held, by this round's bound on a workflow's worst-case agent calls): a chain of 20 nodes whose last
    node's router (a model choosing, in a real file) always sends the run back to the first, ``max_loops: 1000``:
    20,020 node runs, each a model call (a chain of 1,000 nodes: 10**6). The run is refused before any node runs,
    naming the count."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    nodes = [{"name": f"n{i}", "description": "d", "inputs": [{"name": "v", "required": False}],
              "outputs": [{"name": "v"}]} for i in range(20)]
    graph = WorkFlowGraph.from_dict({
        "name": "spin", "goal": "g", "inputs": [{"name": "v", "required": False}], "nodes": nodes,
        "edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(19)],
        "conditional_edges": [{"source": "n19", "router": "zagent.plugins.workflow.routing:append",
                               "targets": ["n0"], "max_loops": 1000}]})
    graph.conditional_edges[0].router = lambda values: "n0"
    ran = [0]

    def step(v=None):
        ran[0] += 1
        return {"v": "x"}

    for n in graph.nodes:
        n.agents = [step]
    k = make_kernel()
    try:
        with pytest.raises(Exception, match=r"20,020 times or more"):
            WorkFlowExecutor(kernel=k).run(graph, {"v": "a"})
    finally:
        k.close()
    assert ran[0] == 0


# -- spec lists no bound covered ------------------------------------------------------------------------------------


def test_a_spec_cannot_declare_a_hundred_thousand_outputs(kernel):
    """Attack (held): an agent spec declaring 100,000 output fields (every request would carry format instructions
    naming each). The field declaration's own bound (5,000 fields) refuses it at load."""
    outputs = [{"name": f"f{i}"} for i in range(100_000)]
    with pytest.raises(ConfigError, match=r"more than 5,000 fields"):
        kernel.agent(agent_spec(name="Wide", outputs=outputs, parse_mode="json"))


def test_a_group_chat_cannot_stop_on_two_hundred_thousand_keywords(kernel):
    """Attack (got through): a group chat file whose ``termination.keywords`` lists 200,000 phrases: every message
    of every round was searched for each (10**10 character comparisons a round at 10 KB a message). Defence: a
    ``keywords`` list holds at most 1,000 phrases."""
    from zagent.plugins.groupchat import GroupChat

    spec = {"name": "talk", "agents": [{"name": "A", "type": "react"}, {"name": "B", "type": "react"}],
            "termination": {"max_rounds": 3, "keywords": [f"stop now {i}" for i in range(200_000)]}}
    with pytest.raises(ConfigError, match=r"keywords lists 200,000 entries, more than 1,000"):
        GroupChat.from_dict(spec, kernel)


def test_a_spec_cannot_make_in_process_memory_keep_every_message(kernel):
    """Attack (got through): an agent spec's ``long_term_memory: {"name": "inprocess", "max_messages": 10**9}``: the
    store kept every message of every call in the process (an agent offered as a tool lives as long as the kernel;
    the default keeps 1,000 a namespace). Only the SQLite store's numbers were bounded. Defence: ``max_messages``
    is a spec count like ``memory_size`` (1-100,000)."""
    with pytest.raises(ConfigError, match=r"max_messages must be a whole number from 1 to 100000"):
        kernel.agent(agent_spec(name="Hoard", use_long_term_memory=True,
                                long_term_memory={"name": "inprocess", "max_messages": 10**9}))


def test_a_spec_cannot_list_thousands_of_redaction_patterns(kernel):
    """Attack (got through): an untrusted agent spec's ``rails.redact`` lists 3,000 patterns (each passes the
    regex checks): all were checked and compiled at load, and every tool result, reply and request of the agent
    was searched 3,000 times (the 16 MiB a spec may hold fits ~1,600 patterns of 10,000 characters: minutes of CPU
    a call). Defence: a spec lists at most ``MAX_SPEC_PATTERNS`` (100) redaction patterns; more is a
    ``ConfigError`` naming the key."""
    patterns = [f"secret-{i}-[0-9]{{4}}" for i in range(3000)]
    with pytest.raises(ConfigError, match=r"rails\.redact lists 3,000 patterns, more than 100"):
        kernel.agent(agent_spec(name="Redacts", agent_config={"rails": {"redact": patterns}}))


def test_a_spec_cannot_ask_for_sixteen_choices_zagent_never_reads(monkeypatch):
    """Attack (got through): an untrusted spec's ``llm_config`` sets ``n: 16``: the server writes (and bills)
    sixteen answers per request while zagent reads only the first (round eleven), so every call of the agent cost
    16 times its output for nothing. Defence: a spec's ``n`` is at most 1 (``LLM_NUMBERS``); Python code may still
    ask for more."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r14-limits-test")
    k = make_kernel(plugins=["zagent.plugins.openai"])
    try:
        with pytest.raises(ConfigError, match=r"\bn must be a whole number from 1 to 1, got 16"):
            k.agent(agent_spec(name="Many", llm_config={"model": "openai:gpt-4o", "n": 16}))
        k.agent(agent_spec(name="One", llm_config={"model": "openai:gpt-4o", "n": 1}))
    finally:
        k.close()


def test_a_spec_fallback_chain_cannot_multiply_retries_by_its_models(monkeypatch):
    """Attack (got through): an untrusted spec's model is a fallback chain of 16 entries, each with
    ``max_retries: 10`` (both within their own bounds): one call of a failing or throttling server could make
    176 requests, each waiting up to ``retry_max_wait`` and its ``deadline`` (days for one call). Defence: a spec's
    chain makes at most ``MAX_CHAIN_REQUESTS`` (48) requests a call in all (its models times their tries); more is
    a ``ConfigError`` naming the count."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r14-limits-test")
    k = make_kernel(plugins=["zagent.plugins.openai", "zagent.plugins.fallback"])
    chain = ",".join(f"openai:gpt-{i}" for i in range(16))
    try:
        with pytest.raises(ConfigError, match=r"176 requests.*at most 48"):
            k.agent(agent_spec(name="Chain", llm_config={"model": f"fallback:{chain}", "max_retries": 10}))
        k.agent(agent_spec(name="Short", llm_config={"model": "fallback:openai:gpt-a,openai:gpt-b",
                                                     "max_retries": 5}))
    finally:
        k.close()
