"""Round fourteen, code from data: specs, replies and tool results that hang zagent, exhaust memory or end in
an error that does not say what went wrong.

Tried: output arrays nested deep (the example answer doubled per level), YAML aliases declaring 2**16 fields,
long runs of spaces or digits under regexes that split them (wrapped placeholders, placeholder echoes,
``<example>`` markers, generated headings, grounding numbers), and group chat, human agent and ``llm_config``
settings of the wrong type.
"""

import json

import pytest

from zagent import ConfigError

from .conftest import agent_spec, make_kernel



def _arrays(depth, inner=None):
    """An output field ``f{depth-1}``: an array of arrays ... ``depth`` levels deep, of strings at the bottom."""
    field = inner or {"name": "x", "type": "string"}
    for i in range(depth):
        field = {"name": f"f{i}", "type": "array", "items": field}
    return field


def _prompt_chars(llm):
    """Characters the scripted model was sent in all (system, user and repair prompts)."""
    return sum(len(m.content or "") for r in llm.requests for m in r.messages if isinstance(m.content, str))


# -- output fields nested as arrays of arrays: the example answer doubled per level ------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["json", "xml", "title"])
def test_output_arrays_nested_deep_do_not_make_an_exponential_example(kernel, mode):
    """Attack: an agent file declares one output, an array of arrays 30 levels deep (a spec may nest 100); the model
    answers ``ok``. Before: the repair prompt's example answer held two items per level, 2**30 strings: the run
    never ended (20 levels took 3 s, each level doubles it) and its memory grew without bound. Defence: the
    example holds one item below the top level (its size grows with the declaration, not 2**depth); the repair turn
    is sent and the run ends in a ``ParseError``."""
    from zagent.errors import ParseError

    agent = kernel.agent(agent_spec(outputs=[_arrays(30)], parse_mode=mode))
    agent.llm = kernel.llm("scripted:deep", replies=["ok", "ok", "ok"])
    with pytest.raises(ParseError):
        agent(question="q")
    assert len(agent.llm.requests) >= 2 and _prompt_chars(agent.llm) < 200_000


@pytest.mark.timeout(60)
def test_arrays_of_objects_holding_arrays_do_not_make_an_exponential_example(kernel):
    """Attack: the same doubling through objects: an array of objects whose one field is an array of objects ...
    15 levels deep (2**15 example objects, a repair prompt of a million characters). Defence: one item below the
    top level; the repair prompt stays small."""
    from zagent.errors import ParseError

    field = {"name": "x", "type": "string"}
    for i in range(15):
        field = {"name": f"f{i}", "type": "array", "items": {"name": "item", "type": "object", "fields": [field]}}
    agent = kernel.agent(agent_spec(outputs=[field], parse_mode="json"))
    agent.llm = kernel.llm("scripted:deep", replies=["ok", "ok", "ok"])
    with pytest.raises(ParseError):
        agent(question="q")
    assert _prompt_chars(agent.llm) < 200_000


@pytest.mark.timeout(60)
def test_the_offline_test_model_answers_output_arrays_nested_deep(kernel):
    """Attack: the nested-array output with the offline test model (``test:``), which the docs and the CLI's
    ``--model test`` use: it answered with the parsers' example, 2**30 values. Defence: the example is linear; the
    run ends (with an answer or a ``ParseError``)."""
    from zagent.errors import ParseError

    agent = kernel.agent(agent_spec(outputs=[_arrays(30)], parse_mode="json"))
    agent.llm = kernel.llm("test:deep")
    try:
        agent(question="q")
    except ParseError:
        pass


@pytest.mark.timeout(60)
def test_the_example_answer_is_linear_in_the_declaration():
    """Guard: the example values of a 30-deep array declaration hold two items at the top and one at each level
    below (about 2 x 30 brackets); a flat array of strings still shows two examples."""
    from zagent.agentkit.fieldspec import compile_fields
    from zagent.plugins.parsers.lenient import example_values

    deep = json.dumps(example_values(compile_fields([_arrays(30)])))
    assert deep.count("[") == 1 + 2 * 29 and len(deep) < 2_000
    flat = example_values(compile_fields([{"name": "tags", "type": "array", "items": {"name": "t"}}]))
    assert len(flat["tags"]) == 2


@pytest.mark.timeout(60)
def test_a_yaml_agent_file_whose_aliases_expand_into_many_fields_is_refused(tmp_path, kernel):
    """Attack: a 2 KB YAML agent file where each level's object holds two arrays of the level below, the second
    through an alias (``items: *f15``): 2**16 output fields (the node count sees each alias once; the data check
    stays under a million values). Before: building the agent compiled every field, 10 s of CPU for one load, and
    its parser's example doubled again. Defence: a declaration holds at most ``MAX_FIELDS`` fields in all, nested at most
    ``MAX_FIELD_DEPTH`` levels; the load is a ``ConfigError`` saying so."""
    def level(i):
        if i == 0:
            return "&f0 {name: leaf, type: string}"
        return (f"&f{i} {{name: n{i}, type: object, fields: [{{name: a, type: array, items: {level(i - 1)}}}, "
                f"{{name: b, type: array, items: *f{i - 1}}}]}}")

    path = tmp_path / "aliases.yaml"
    path.write_text("name: Evil\nprompt: 'Answer: {question}'\ninputs: [{name: question}]\nparse_mode: json\n"
                    f"outputs: [{level(16)}]\n")
    assert path.stat().st_size < 3_000
    with pytest.raises(ConfigError, match="fields"):
        kernel.agent(str(path))


def test_output_fields_nested_past_the_limit_are_refused_at_load(kernel):
    """Attack: an array of arrays 60 levels deep (the spec check allows 100). Defence: a ``ConfigError`` at load
    naming the limit (``MAX_FIELD_DEPTH``), not a run that builds 60 levels of result types and prompts."""
    with pytest.raises(ConfigError, match="nested more than"):
        kernel.agent(agent_spec(outputs=[_arrays(60)], parse_mode="json"))


def test_ordinary_nested_outputs_still_load(kernel):
    """Guard: an object with an array of objects, four levels, loads and parses."""
    inner = {"name": "row", "type": "object", "fields": [{"name": "cells", "type": "array", "items": {"name": "c"}}]}
    spec = agent_spec(outputs=[{"name": "table", "type": "object", "fields": [
        {"name": "rows", "type": "array", "items": inner}]}], parse_mode="json")
    agent = kernel.agent(spec)
    agent.llm = kernel.llm("scripted:ok", replies=['{"table": {"rows": [{"cells": ["a", "b"]}]}}'])
    assert agent(question="q").output.table.rows[0].cells == ["a", "b"]


# -- regexes over a model's answer: long runs of spaces --------------------------------------------------------------


@pytest.mark.timeout(60)
def test_an_earlier_nodes_answer_of_spaces_does_not_stall_a_wrapped_placeholder(kernel):
    """Attack: workflow node ``a``'s model answers ``<`` and 300,000 spaces; node ``b``'s prompt puts that answer in
    ``<draft>{y}</draft>``, so it is made inert (``&lt;/draft>``) first. Before: the inerting regex
    ``<(?=\\s*/?\\s*draft\\b)`` split the run of spaces every way, quadratic: 16,000 spaces took 2 s, this run minutes.
    Defence: one whitespace run before the tag name; linear."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    def agent(name, prompt, given, made):
        return {"name": name, "prompt": prompt, "inputs": [{"name": given}], "outputs": [{"name": made}],
                "parse_mode": "str"}

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}],
         "agents": [agent("One", "Draft: {x}", "x", "y")]},
        {"name": "b", "description": "b", "inputs": [{"name": "y"}], "outputs": [{"name": "z"}],
         "agents": [agent("Two", "Review <draft>{y}</draft>", "y", "z")]}],
        "edges": [{"source": "a", "target": "b"}]})
    llm = kernel.llm("scripted:wf", replies=["<" + " " * 300_000 + "x </draft> done", "fine"])
    result = WorkFlowExecutor(kernel=kernel, llm=llm).run(graph, {"x": "hi"})
    assert result.outputs["z"] == "fine"
    assert "&lt;/draft> done" in llm.requests[1].messages[-1].content


@pytest.mark.timeout(60)
def test_a_json_answer_of_many_strings_like_format_labels_is_read_in_linear_time(kernel):
    """Attack: a ``json`` agent's array answer holds 10,000 strings ``string, required, required, ... x`` (19
    ``, required`` and 400 spaces each, under the 800-character check). Before: the placeholder-echo check's
    regex ended in ``[^\\n]{0,400}?[>)]?\\s*$``, 400**2 steps for each ``, required``: 25 ms a string, over two
    minutes for the answer (27 s for 2,000). Defence: the check runs on stripped text without the trailing
    ``\\s*``; the answer is read."""
    item = "string" + ", required" * 19 + " " * 400 + "x"
    agent = kernel.agent(agent_spec(outputs=[{"name": "answer", "type": "array", "items": {"name": "i"}}],
                                    parse_mode="json"))
    agent.llm = kernel.llm("scripted:labels", replies=[json.dumps({"answer": [item] * 10_000})])
    assert len(agent(question="q").output.answer) == 10_000


@pytest.mark.timeout(60)
def test_an_answer_with_example_and_a_long_run_of_spaces_is_read_in_linear_time(kernel):
    """Attack: a ``json`` answer's text value holds ``example>`` (so the copied ``<example>`` markers are looked
    for) and 300,000 spaces before its last word. Before: ``\\s*</example>\\s*$`` was searched from every space
    of the run, quadratic (20,000 spaces took 2 s). Defence: the markers are cut with string operations."""
    value = "see example> " + " " * 300_000 + "x"
    agent = kernel.agent(agent_spec(parse_mode="json"))
    agent.llm = kernel.llm("scripted:echo", replies=[json.dumps({"answer": value})])
    assert agent(question="q").output.answer.endswith("x")


@pytest.mark.timeout(60)
def test_a_generated_agent_prompt_with_a_heading_full_of_spaces_does_not_stall_the_generator(kernel):
    """Attack: the workflow generator's model writes an agent whose prompt has a heading ``# Notes`` then 5,000
    spaces and a word (under the 20,000-character prompt limit). Before: the heading regex that renames output
    sections split the run of spaces three ways, cubic: 800 spaces took 0.6 s, this one hours. Defence: the
    heading line is matched whole and its title cut in code; the output heading is still renamed."""
    from zagent.plugins.workflow import AgentGenerator, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "goal"}], "nodes": [
        {"name": "research", "description": "find facts", "inputs": [{"name": "goal"}],
         "outputs": [{"name": "facts"}]}], "edges": []})
    raw = {"name": "FactFinder", "description": "Finds facts", "inputs": [{"name": "goal"}],
           "outputs": [{"name": "fact list"}], "tool_names": [],
           "prompt": "Research {goal}.\n\n# Notes" + " " * 5_000 + "x\n\n## Fact List:\nOne fact per line."}
    llm = kernel.llm("scripted:gen", replies=["```json\n" + json.dumps({"generated_agents": [raw]}) + "\n```"])
    [spec] = AgentGenerator(kernel=kernel, llm=llm).generate("solar report", graph.node("research"))
    assert "## facts\nOne fact per line." in spec["prompt"]


@pytest.mark.timeout(60)
def test_a_tool_result_with_a_long_run_of_digits_does_not_stall_the_next_call(kernel):
    """Attack: a text-mode agent (``native_tools: False``) calls ``fetch``, which returns a page holding 100,000
    digits (a hex dump, pi); the model then calls ``fetch`` again. Before the second call runs, its arguments are
    checked against what was said, and that text was searched for numbers with a scale word or a percent sign from
    every digit of the run, quadratic: 20,000 digits took 10 s, this call minutes, and every later step again.
    Defence: a number is tried from its first digit only."""
    pages = []

    def fetch(url: str) -> str:
        """Fetch a page."""
        pages.append(url)
        return "pi = 3." + "1" * 100_000

    kernel.add_tool(fetch)
    spec = {"name": "Reader", "description": "reads", "prompt": "Read {text}", "inputs": [{"name": "text"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["fetch"], "tool_format": "hermes"}
    agent = kernel.agent(spec)
    call = '<tool_call>{"name": "fetch", "arguments": {"url": "https://example.org/pi"}}</tool_call>'
    agent.llm = kernel.llm("scripted:digits", replies=[call, call, "done"], profile={"native_tools": False})
    agent(text="https://example.org/pi")
    assert pages == ["https://example.org/pi"] * 2


def test_copied_example_markers_are_still_cut():
    """Guard: ``<example>`` ... ``</example>`` around a value (any case, with spaces) is still removed."""
    from zagent.plugins.parsers.lenient import unwrap
    from zagent.agentkit.fieldspec import compile_fields

    spec = compile_fields([{"name": "answer"}])
    assert unwrap({"answer": " <EXAMPLE>\n Paris \n</example> "}, spec) == {"answer": "Paris"}
    assert unwrap({"answer": "a <example> b"}, spec) == {"answer": "a <example> b"}


# -- group chat settings of the wrong type ------------------------------------------------------------------------


def _speaker(name):
    return {"name": name, "description": name, "prompt": "T: {task} {transcript}",
            "inputs": [{"name": "task"}, {"name": "transcript"}], "outputs": [{"name": "reply"}], "parse_mode": "str"}


def _chat(**over):
    """A two-speaker group chat spec (A, B) on the offline test model, ``over`` merged in."""
    return {"type": "groupchat", "name": "g", "agents": [_speaker("A"), _speaker("B")], "llm": "test:chat",
            "max_rounds": 3, **over}


def _load_and_run(kernel, spec):
    """Build ``spec`` and run it on a task (an error at the load or in the run propagates)."""
    chat = kernel.agent(spec)
    return chat.run("hello")


@pytest.mark.parametrize("selection", [
    {"policy": "rules", "rules": {"A": "B"}, "first": ["A"]},
    {"policy": "rules", "rules": {"A": "B"}, "first": 5},
    {"policy": "rules", "rules": {"A": "B"}, "first": {"x": 1}},
    {"policy": "rules", "rules": ["A"]},
    {"policy": "rules", "rules": [["A", "B", "C"]]},
])
def test_group_chat_selection_rules_of_the_wrong_type_are_a_config_error(kernel, selection):
    """Attack: a group chat file's ``selection.first`` is a list, a number or a mapping; its ``rules`` a list of
    names or of lists. Before: a bare ``TypeError: unhashable type``/``sequence item 0: expected str`` or
    ``ValueError: dictionary update sequence element`` from the selector's constructor. Defence: a ``ConfigError``
    naming the setting and the form it takes."""
    with pytest.raises(ConfigError, match="selection"):
        _load_and_run(kernel, _chat(selection=selection))


@pytest.mark.parametrize("selection", [{"policy": 5}, {"policy": {"name": "rules"}}, {"policy": ["llm"]},
                                       {"policy": "round_robin", "first": ["A"]}])
def test_group_chat_selection_policy_or_first_of_the_wrong_type_is_not_silently_ignored(kernel, selection):
    """Attack: ``selection.policy`` a number, mapping or list, or a round robin's ``first`` a list. Before: the
    value was taken as a selector object (code's form) and the chat silently ran round robin from the first speaker,
    whatever the file said. Defence: a ``ConfigError`` naming the setting."""
    with pytest.raises(ConfigError, match="selection"):
        _load_and_run(kernel, _chat(selection=selection))


def test_group_chat_selection_prompt_that_is_not_text_is_a_config_error(kernel):
    """Attack: ``selection.prompt`` is a list. Before: ``TypeError: unhashable type: 'list'`` from the placeholder
    cache. Defence: a ``ConfigError`` naming ``selection.prompt``."""
    with pytest.raises(ConfigError, match="selection.prompt"):
        _load_and_run(kernel, _chat(selection={"policy": "llm", "model": "test:sel", "prompt": ["pick"]}))


@pytest.mark.parametrize("termination", [{"keywords": 5}, {"keywords": [{"a": 1}]}, {"keyword": ["DONE"]},
                                         {"keywords": ["DONE", 5]}, {"judge": _speaker("J"), "judge_every": None}])
def test_group_chat_termination_of_the_wrong_type_is_a_config_error_at_load(kernel, termination):
    """Attack: ``termination.keywords`` a number or a list holding a mapping or a number, ``keyword`` a list,
    ``judge_every`` null. Before: ``TypeError: 'int' object is not iterable`` at load, or the chat started and died
    after its first turn on ``AttributeError: 'dict' object has no attribute 'lower'`` (the speakers' calls made and
    paid for), or ``int() argument must be ... not 'NoneType'``. Defence: a ``ConfigError`` at load naming the
    setting."""
    with pytest.raises(ConfigError, match="termination"):
        _load_and_run(kernel, _chat(termination=termination))


def test_ordinary_group_chat_settings_still_run(kernel):
    """Guard: rules with a first speaker, keywords and a judge every two rounds still run."""
    spec = _chat(selection={"policy": "rules", "rules": {"A": "B", "B": "A"}, "first": "B"},
                 termination={"keywords": ["DONE"], "judge": _speaker("J"), "judge_every": 2})
    assert _load_and_run(kernel, spec).rounds >= 1


# -- human agent files of the wrong shape -------------------------------------------------------------------------


def _human(**over):
    return {"type": "human", "name": "Ed", "prompt": "Review {draft}", "inputs": [{"name": "draft"}],
            "outputs": [{"name": "verdict"}], **over}


@pytest.mark.parametrize("over", [{"inputs": 5}, {"outputs": 5}, {"outputs": "abc"}, {"outputs": {"verdict": 1}},
                                  {"prompt": ["Review {draft}"]}, {"description": {"a": 1}}])
def test_a_human_agent_file_of_the_wrong_shape_is_a_config_error(kernel, over):
    """Attack: a human agent file's ``inputs``/``outputs`` are a number, a string or a mapping, its ``prompt`` a
    list. Before: ``TypeError: 'int' object is not iterable``; ``outputs: "abc"`` silently declared three fields
    ``a``, ``b``, ``c`` (a mapping its keys), and a list prompt was shown to the person as its Python repr.
    Defence: a ``ConfigError`` naming the key and the form it takes."""
    with pytest.raises(ConfigError, match="human agent"):
        kernel.agent(_human(**over))


def test_a_human_agent_yaml_file_with_a_number_as_a_key_is_a_config_error(tmp_path, kernel):
    """Attack: a YAML human agent file with a line ``1: 2`` (or ``yes: 1``, a boolean key). Before: the unknown-key
    message joined the keys and died on ``TypeError: sequence item 0: expected str instance, int found``.
    Defence: the ``ConfigError`` names the unknown key."""
    path = tmp_path / "ed.yaml"
    path.write_text("type: human\nname: Ed\nprompt: 'Review {draft}'\ninputs: [{name: draft}]\n"
                    "outputs: [{name: verdict}]\n1: 2\nyes: 1\n")
    with pytest.raises(ConfigError, match="unknown key"):
        kernel.agent(str(path))


def test_an_ordinary_human_agent_file_still_loads(kernel):
    """Guard: the example's shape loads."""
    assert kernel.agent(_human(description="reviews")).name == "Ed"


# -- a cases file's scorer options of the wrong type --------------------------------------------------------------


@pytest.mark.parametrize("scorer", [{"name": "exact", "field": ["answer"]}, {"name": "json_subset", "field": {"a": 1}},
                                    {"name": "contains", "field": 5}, {"name": "exact", "case_sensitive": "false"},
                                    {"name": "contains", "case_sensitive": "yes"}, {"name": "numeric", "field": [1]}])
def test_a_cases_files_scorer_option_of_the_wrong_type_is_a_config_error(tmp_path, scorer):
    """Attack: an eval cases file (data, whoever trusts the agent) gives its own scorer a ``field`` that is a list,
    mapping or number, or ``case_sensitive`` as the text ``"false"``. Before: the eval ran the agent on every case
    and each score failed as ``the scorer failed: TypeError: unhashable type: 'list'`` (or, for a number, compared
    nothing), and ``"false"`` meant case-sensitive. Defence: a ``ConfigError`` naming the case and the option
    when the cases file is read."""
    from zagent.plugins.evals.run import evaluate

    k = make_kernel(plugins=["zagent.plugins.evals", "zagent.plugins.batch"])
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "1", "inputs": {"question": "q"}, "expected": "Hi", "scorers": [scorer]}) + "\n")
    try:
        with pytest.raises(ConfigError, match="scorer option"):
            evaluate(k, k.agent(agent_spec(llm="test:x")), str(cases))
    finally:
        k.close()


# -- llm_config headers and keys that are not text ----------------------------------------------------------------


@pytest.fixture
def openai_kernel():
    k = make_kernel(plugins=["zagent.plugins.openai"])
    yield k
    k.close()


def _call_through(kernel, server, **llm_config):
    """Build an agent file's spec naming ``server`` with ``llm_config`` and call it once."""
    spec = agent_spec(llm="openai:gpt-x", llm_config={"base_url": server.url + "/v1", "max_retries": 0,
                                                      "timeout": 10, **llm_config})
    return kernel.agent(spec)(question="q")


@pytest.mark.parametrize("headers", [{"X-Trace": 5}, {"X-Trace": None}, {"X-Trace": {"id": 1}}, {"X-Trace": ["a"]},
                                     {7: "x"}])
def test_llm_config_headers_that_are_not_text_are_a_config_error(openai_kernel, headers):
    """Attack: an agent file's ``llm_config.headers`` holds a number, null, a mapping or a list as a value, or a
    number as a name (YAML ``7: x``). Before: the agent loaded and its first call died on httpx's bare
    ``TypeError: Header value must be str or bytes`` (``AttributeError: 'int' object has no attribute 'encode'``
    for the name). Defence: a ``ConfigError`` at load naming ``llm_config.headers`` and the header."""
    from tests.servers.loopback import LoopbackServer
    from tests.servers.openai_server import completion

    with LoopbackServer(lambda request: completion("hi")) as server:
        with pytest.raises(ConfigError, match="headers"):
            _call_through(openai_kernel, server, headers=headers)
        assert server.requests == []


@pytest.mark.parametrize("headers", [{"X-Trace": "a\r\nX-Admin: 1"}, {"X-Trace": "a\x00b"}, {"X Trace": "x"},
                                     {"": "x"}, {"X:Trace": "x"}])
def test_llm_config_headers_http_cannot_carry_are_a_config_error_not_a_network_error(openai_kernel, headers):
    """Attack: a header value with CR/LF or NUL (a header smuggled in), a header name with a space, a colon or
    none at all. Before: the load passed, and the call failed as ``ProviderError: could not reach openai ...; check
    the base URL and that the server is running`` (h11's ``Illegal header value``): the wrong cause and the wrong
    fix. Defence: a ``ConfigError`` at load naming the header and what HTTP allows."""
    from tests.servers.loopback import LoopbackServer
    from tests.servers.openai_server import completion

    with LoopbackServer(lambda request: completion("hi")) as server:
        with pytest.raises(ConfigError, match="headers"):
            _call_through(openai_kernel, server, headers=headers)
        assert server.requests == []


@pytest.mark.parametrize("key", [5, ["sk-a"], {"k": "v"}])
def test_an_llm_config_api_key_that_is_not_text_is_a_config_error(openai_kernel, key):
    """Attack: an agent file's ``llm_config.api_key`` is a number (YAML reads ``api_key: 12345`` as one), a list
    or a mapping. Before: the first call died on ``TypeError: can only concatenate str (not "int") to str``.
    Defence: a ``ConfigError`` at load naming ``api_key`` (never its value)."""
    from tests.servers.loopback import LoopbackServer
    from tests.servers.openai_server import completion

    with LoopbackServer(lambda request: completion("hi")) as server:
        with pytest.raises(ConfigError, match="api_key"):
            _call_through(openai_kernel, server, api_key=key)
        assert server.requests == []


def test_ordinary_llm_config_headers_still_reach_the_server(openai_kernel):
    """Guard: a text header is sent."""
    from tests.servers.loopback import LoopbackServer
    from tests.servers.openai_server import completion

    with LoopbackServer(lambda request: completion("hi")) as server:
        assert _call_through(openai_kernel, server, headers={"X-Trace": "abc-1"}).output.answer == "hi"
        assert server.requests[0].headers.get("x-trace") == "abc-1"


@pytest.mark.parametrize("headers", [{"X-Trace": b"abc-1"}, [["X-Trace", "abc-1"]], "httpx"],
                         ids=["bytes-value", "pairs", "httpx-headers"])
def test_an_apps_own_header_forms_still_reach_the_server(openai_kernel, headers):
    """Guard: the forms the HTTP client takes from an app's code (bytes values, ``[name, value]`` pairs,
    ``httpx.Headers``) are checked, not refused, and sent."""
    import httpx

    from tests.servers.loopback import LoopbackServer
    from tests.servers.openai_server import completion

    headers = httpx.Headers({"X-Trace": "abc-1"}) if headers == "httpx" else headers
    with LoopbackServer(lambda request: completion("hi")) as server:
        assert _call_through(openai_kernel, server, headers=headers).output.answer == "hi"
        assert server.requests[0].headers.get("x-trace") == "abc-1"
