"""Round thirteen, code from data: a spec file, a model's reply or an eval cases file making zagent run code, hang,
exhaust memory or die on an error that does not say what went wrong.

Tried (session 2026-12-07): numbers Python cannot print (a Python-call reply's ``0xfff...`` of 90,000 digits; a
YAML spec's hex and base-60 numbers, which YAML 1.1 reads in quadratic time; a cases file's 400-digit expected
value); YAML specs of a million values; a streamed JSON reply nested 200,000 deep; a string of escaped quotes that
never closes in every text tool-call format and the ``json`` mode; an ``xml`` reply's ``&#xD800;``; import paths
in keys that name registered things (``tool_format``, ``parse_mode``, ``type``, a memory backend, a field type,
a model provider); ``1e999`` in a Python-call reply; ``[[[...`` 100,000 deep in a ``pipe`` call, a chat router's
and a skills re-rank model's reply, a skill file's header and an eval output scored as JSON.
"""

import json
import os
import sys
import time

import pytest

from zagent import ConfigError
from zagent.types import ToolCall

from .conftest import agent_spec, make_kernel

FORMATS = ["tool_call", "hermes", "mistral", "llama3", "fenced", "pipe", "pycall"]


def counter(**over):
    """A declared agent offered ``word_count``, reading text tool calls in ``tool_format`` (``over``)."""
    return {"name": "Counter", "description": "counts", "prompt": "Count: {text}", "inputs": [{"name": "text"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str", "tools": ["word_count"], **over}


def _yaml_spec(tmp_path, name, body):
    """``tmp_path/name.yaml``: a one-input agent spec with ``body`` (YAML lines) added."""
    path = tmp_path / f"{name}.yaml"
    path.write_text("name: Evil\nprompt: 'Answer: {question}'\ninputs: [{name: question}]\n"
                    "outputs: [{name: answer}]\nparse_mode: str\n" + body)
    return path


# -- numbers no one can print ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0x" + "f" * 90_000, "-0b" + "1" * 90_000, "0o" + "7" * 60_000])
def test_a_python_call_reply_with_a_number_python_cannot_print_is_a_call_error(kernel, value):
    """Attack: a model on the pycall format answers ``[word_count(text=0xfff...)]``, 90,000 hex digits (bases that
    are powers of two escape Python's 4,300-digit limit when read; ``str()`` of the number raises later). Before:
    the run died with a bare ``ValueError: Exceeds the limit (4300 digits)`` from the argument conversion.
    Defence: ``pycall`` reads only numbers a 64-bit integer holds; the call is a malformed call the model is told
    about, and the run goes on."""
    agent = kernel.agent(counter(tool_format="pycall"))
    agent.llm = kernel.llm("scripted:big", replies=[f"[word_count(text={value})]", "done"],
                           profile={"native_tools": False})
    result = agent(text="x")
    assert kernel.spy.ran == [] and result.output.answer == "done"
    found = kernel.tool_format("pycall").extract(f"[word_count(text={value})]")
    assert found.calls == [] and "out of range (not a 64-bit integer)" in found.errors[0].message


def test_a_python_call_reply_with_a_big_integer_for_an_integer_tool_is_a_call_error():
    """Attack: the same number given to a tool taking an ``int`` (no conversion to text on the way: it reached the
    call grounding's ``str()``). Defence: the same call error; the tool never runs."""
    k = make_kernel()
    ran = []

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append((a, b))
        return a + b

    k.add_tool(add)
    agent = k.agent(counter(tools=["add"], tool_format="pycall"))
    agent.llm = k.llm("scripted:add", replies=["[add(a=0x" + "f" * 9_000 + ", b=1)]", "done"],
                      profile={"native_tools": False})
    assert agent(text="x").output.answer == "done" and ran == []
    k.close()


def test_a_python_call_reply_with_ordinary_numbers_still_calls():
    """Guard: 64-bit numbers, negative ones and floats still read."""
    k = make_kernel()
    found = k.tool_format("pycall").extract("[f(a=0xff, b=-9223372036854775808, c=18446744073709551615, d=1.5)]")
    assert found.calls[0].arguments == {"a": 255, "b": -2**63, "c": 2**64 - 1, "d": 1.5}
    k.close()


def test_a_python_call_reply_with_an_infinite_number_never_reaches_the_tool(kernel):
    """Attack (held): ``[scale(x=1e999)]`` reads as infinity, which passes every range check of a tool. Defence:
    the tool runner refuses non-finite arguments (``limits.non_finite``)."""
    ran = []

    def scale(x: float) -> float:
        """Scale a number."""
        ran.append(x)
        return x

    kernel.add_tool(scale)
    agent = kernel.agent(counter(tools=["scale"], tool_format="pycall"))
    agent.llm = kernel.llm("scripted:inf", replies=["[scale(x=1e999)]", "[scale(x=-1e999)]", "done"],
                           profile={"native_tools": False})
    result = agent(text="x")
    assert ran == [] and [r.state for r in result.tool_results] == ["error", "error"]


@pytest.mark.parametrize("body", ["max_steps: 0x" + "f" * 20_000 + "\n",
                                  "inputs: [{name: question, default: 0x" + "f" * 20_000 + "}]\n",
                                  "description: 1" + ":59" * 20_000 + "\n"])
def test_a_yaml_spec_with_a_number_python_cannot_print_is_a_config_error(tmp_path, kernel, body):
    """Attack: a YAML spec writes ``max_steps`` (or an input's default, or its description) as a hex number of
    20,000 digits or a YAML 1.1 base-60 number (``1:59:59:...``). Before: ``k.agent(path)`` died with a bare
    ``ValueError: Exceeds the limit (4300 digits)`` from the size check or the field compiler. Defence: the YAML
    loader refuses a number written with more than 100 characters, naming file, line and column."""
    path = _yaml_spec(tmp_path, "bignum", body)
    with pytest.raises(ConfigError, match=r"bignum\.yaml:\d+:\d+: .*a number written with [\d,]+ characters"):
        kernel.agent(str(path))


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_a_yaml_base_60_number_is_refused_before_its_quadratic_read(tmp_path, kernel):
    """Attack: ``max_steps: 1:59:59:...`` with 200,000 groups (600 KB; a 16 MiB spec file would take hours): YAML
    1.1 reads base-60 numbers by multiplying a growing integer. Before: 9 s for this file, then the same bare
    ``ValueError``. Defence: refused by its length before it is read as a number."""
    path = _yaml_spec(tmp_path, "sexagesimal", "max_steps: 1" + ":59" * 200_000 + "\n")
    with pytest.raises(ConfigError, match="a number written with 600,001 characters"):
        kernel.agent(str(path))


def test_an_ordinary_yaml_spec_with_numbers_still_loads(tmp_path, kernel):
    """Guard: ordinary numbers (a 64-bit seed, hex, a float) still load."""
    path = _yaml_spec(tmp_path, "fine", "max_steps: 0x10\nllm_config: {model: 'test:offline', seed: 9223372036854775807, "
                                        "temperature: 0.5}\n")
    agent = kernel.agent(str(path))
    assert agent.spec.max_steps == 16


# -- YAML of a million values ----------------------------------------------------------------------------------


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_a_yaml_spec_of_a_million_values_is_refused_early(tmp_path, kernel):
    """Attack: a 2 MB YAML spec holding a flow list of a million numbers (a 16 MiB one would hold eight million):
    PyYAML builds a node object for each before any value. Before: 24 s and 670 MiB for this file, then a refusal
    by the spec limits. Defence: the loader counts nodes as it reads and stops past 50,000, naming the line."""
    path = _yaml_spec(tmp_path, "million", "notes: [" + "1," * 1_000_000 + "]\n")
    with pytest.raises(ConfigError, match=r"million\.yaml:6:\d+: not valid YAML: more than 50,000 values"):
        kernel.agent(str(path))


def test_a_yaml_alias_bomb_is_refused_by_its_nodes(tmp_path):
    """Attack (held, new file kind): a billion-laughs YAML of 40 levels of two aliases each. Defence: refused (the
    aliases count as nodes; the spec limits catch the shared values)."""
    from zagent.speckit import load_spec_file

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 41)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="more than"):
        load_spec_file(str(path))


# -- a streamed JSON reply nested deep ---------------------------------------------------------------------------


@pytest.mark.timeout(120)  # a hang guard: fails only if it never ends
@pytest.mark.parametrize("depth", [3_000, 200_000])
def test_a_streamed_json_reply_nested_deep_ends_in_the_answer_not_a_recursion_error(kernel, depth):
    """Attack: a ``json`` agent's model streams ``{"answer": [[[[...`` 3,000 or 200,000 deep. Before: the stream's
    partial reader raised a bare ``RecursionError`` out of ``agent.stream`` (3,000), and read each prefix in time
    quadratic in the depth (30,000 took 7 s; 200,000 did not end in two minutes). Defence: partial objects stop at
    ``MAX_DEPTH`` (100) levels; the whole reply goes to the parser, whose repair turn gets the answer."""
    agent = kernel.agent(agent_spec(parse_mode="json"))
    agent.llm = kernel.llm("scripted:deep", replies=['{"answer": ' + "[" * depth, '{"answer": "ok"}'])
    items = list(agent.stream(question="q"))
    assert items[-1].type == "result" and items[-1].result.output.answer == "ok"


@pytest.mark.timeout(180)  # a hang guard: fails only if it never ends
def test_a_reply_streamed_in_small_pieces_nested_deep_stays_linear(kernel):
    """Attack: the same nesting streamed as 20,000 small pieces (``[ `` each), each read by the partial reader.
    Defence: each read stops at the hundredth level; the stream ends quickly."""
    agent = kernel.agent(agent_spec(parse_mode="json"))
    agent.llm = kernel.llm("scripted:pieces", replies=['{"answer": ' + "[ " * 20_000, '{"answer": "ok"}'])
    items = list(agent.stream(question="q"))
    assert items[-1].result.output.answer == "ok"


def test_partial_objects_of_ordinary_streamed_json_still_show():
    """Guard: a shallow half-written object still reads."""
    from zagent.agentkit.partialjson import partial_object

    assert partial_object('{"answer": [1, [2, {"b": "te') == {"answer": [1, [2, {"b": "te"}]]}


# -- strings that never close ------------------------------------------------------------------------------------


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_string_of_escaped_quotes_that_never_closes_does_not_hang_a_tool_call_reader(kernel, fmt):
    """Attack: a reply ``{"name": "`` followed by 100,000 ``\\"`` (200 KB): the bracket scanner's string regex
    tried each quote again to the end of the text. Before: over 20 s in every text format (about 50 ms at 4,000
    quotes, growing with the square). Defence: ``parsers.quoted.QuotedScan``, the same matches in linear time (a
    quote that never closes is plain text, and so is each later quote it would have held)."""
    reply = '{"name": "' + '\\"' * 100_000
    found = kernel.tool_format(fmt).extract(reply)
    assert found.calls == []


@pytest.mark.parametrize("reply", ['<tool_call>{"name": "word_count", "arguments": {"text": "' + '\\"' * 24_000,
                                   "{'name': 'word_count', 'arguments': {'text': '" + "\\'" * 100_000,
                                   "[{\"name\": \"word_count\", \"arguments\": {\"text\": '\\\"'}}, " * 20_000])
@pytest.mark.timeout(120)  # a hang guard: fails only if it never ends
def test_other_strings_that_never_close_do_not_hang_the_readers(kernel, reply):
    """Attack: an almost-JSON call in a ``<tool_call>`` block (the repair that closes brackets scanned it), single
    quotes that never close, and single-quoted strings holding escaped double quotes, one after another. Defence:
    linear scans; the run reads what it can quickly."""
    agent = kernel.agent(counter(tool_format="hermes"))
    agent.llm = kernel.llm("scripted:quotes", replies=[reply, "done"], profile={"native_tools": False})
    agent(text="x")
    assert "steal" not in kernel.spy.ran


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_a_json_answer_with_a_string_that_never_closes_does_not_hang_the_parser(kernel):
    """Attack: a ``json`` agent's answer ``{"answer": "`` then 100,000 ``\\"``; the lenient repair ran the same
    string regex. Defence: a ``ParseError`` (the repair turn) quickly, then the model's next answer."""
    agent = kernel.agent(agent_spec(parse_mode="json"))
    agent.llm = kernel.llm("scripted:json", replies=['{"answer": "' + '\\"' * 100_000, '{"answer": "ok"}'])
    assert agent(question="q").output.answer == "ok"


def test_the_linear_scan_finds_what_the_strict_regex_found():
    """Guard: on 20,000 random texts of quotes, backslashes, brackets and newlines, ``QuotedScan`` gives exactly the
    matches of the regex that requires closing quotes (with start and end positions too)."""
    import random
    import re

    from zagent.plugins.parsers.quoted import QuotedScan

    strict = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}\[\]]', re.DOTALL)
    scan = QuotedScan(r"[{}\[\]]")
    rng = random.Random(13)
    for _ in range(20_000):
        text = "".join(rng.choice(['"', "'", "\\", "{", "]", "\n", "a", " "]) for _ in range(rng.randint(0, 16)))
        pos = rng.randint(0, len(text))
        end = rng.randint(pos, len(text))
        assert [m.span() for m in scan.finditer(text, pos, end)] == [m.span() for m in strict.finditer(text, pos, end)]


def test_ordinary_text_calls_with_quotes_still_read(kernel):
    """Guard: calls whose strings hold escaped quotes and brackets still read in each JSON format."""
    call = ToolCall(id="c1", name="word_count", arguments={"text": 'say "hi" [x] {y}'})
    for fmt in ("tool_call", "hermes", "mistral", "llama3", "fenced"):
        found = kernel.tool_format(fmt).extract(kernel.tool_format(fmt).render_calls([call]))
        assert [c.arguments for c in found.calls] == [{"text": 'say "hi" [x] {y}'}], fmt


# -- characters and numbers a parser makes -----------------------------------------------------------------------


@pytest.mark.parametrize("ftype", ["string", "integer"])
def test_an_xml_answer_with_a_surrogate_character_reference_is_kept_as_text(kernel, ftype):
    """Attack: an ``xml`` agent's model answers ``<answer>&#xD800;</answer>``; the reference decoded to a lone
    surrogate, which no UTF-8 text can hold. Before: the run died with a bare ``UnicodeEncodeError``. Defence: a
    reference to a surrogate (or past U+10FFFF, or NUL) stays as written; a string field gets that text, an
    integer field a parse error the repair turn fixes."""
    agent = kernel.agent(agent_spec(parse_mode="xml", outputs=[{"name": "answer", "type": ftype}]))
    agent.llm = kernel.llm("scripted:xml", replies=["<answer>&#xD800;</answer>", "<answer>7</answer>"])
    answer = agent(question="q").output.answer
    assert answer == ("&#xD800;" if ftype == "string" else 7)
    json.dumps(answer, ensure_ascii=False).encode()


def test_xml_character_references_still_decode():
    """Guard: ordinary references still decode."""
    from zagent.plugins.parsers.xmltext import xml_text

    assert xml_text("&lt;a&gt; &#65;&#x42; &#x1F600;") == "<a> AB \U0001F600"


@pytest.mark.parametrize("case", [{"expected": 10**400}, {"expected": 1, "scorers": [{"name": "numeric",
                                                                                     "tolerance": 10**400}]}])
def test_a_cases_files_number_too_big_for_a_float_is_a_config_error(tmp_path, case):
    """Attack: an eval cases file's expected value, or its ``numeric`` scorer's tolerance, is a 400-digit number.
    Before: the scorer died with a bare ``OverflowError: int too large to convert to float``. Defence: it is not a
    number to the scorer: a ``ConfigError`` saying which value."""
    from zagent.plugins.evals.run import read_cases
    from zagent.plugins.evals.scorers import scorer_of

    kernel = make_kernel(plugins=["zagent.plugins.evals"])
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"id": "c1", "inputs": {"question": "q"}, **case}) + "\n")
    (loaded,) = read_cases(str(path))
    with pytest.raises(ConfigError, match="not a number|must be numbers"):
        _, score = scorer_of(kernel, (loaded.scorers or [{"name": "numeric"}])[0])
        score("1", loaded.expected, loaded)
    kernel.close()


# -- import paths in keys that name registered things -------------------------------------------------------------


@pytest.fixture
def r13mark(tmp_path, monkeypatch, forget_modules):
    """A module ``r13mark`` on ``sys.path`` whose import leaves ``r13mark.ran``."""
    forget_modules.append("r13mark")
    (tmp_path / "code").mkdir()
    mark = tmp_path / "code" / "r13mark.ran"
    (tmp_path / "code" / "r13mark.py").write_text(f"open({str(mark)!r}, 'w').write('ran')\n"
                                                  "def tool(text: str) -> str:\n    return text\n"
                                                  "class P:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    return mark


@pytest.mark.parametrize("over", [
    {"tool_format": "r13mark:tool"}, {"parse_mode": "r13mark:tool"}, {"type": "r13mark:P"},
    {"use_long_term_memory": True, "long_term_memory": {"name": "r13mark:P"}},
    {"outputs": [{"name": "answer", "type": "r13mark:P"}]}, {"llm": "r13mark:tool"},
    {"llm_config": {"model": "r13mark:tool"}}])
def test_an_import_path_in_a_key_naming_a_registered_thing_imports_nothing(kernel, r13mark, over):
    """Attack (held): an import path where a spec names a registered parser, tool format, agent type, memory
    backend, field type or model provider. Defence: those keys look names up in the kernel's registries only; a
    ``ConfigError`` lists what is registered, and nothing is imported."""
    with pytest.raises(ConfigError, match="registered|installed|unknown|not a memory backend"):
        kernel.agent(agent_spec(**over))
    assert not r13mark.exists() and "r13mark" not in sys.modules


def test_yaml_specs_of_the_examples_still_load(tmp_path):
    """Guard: a spec file of ordinary size and shape loads as YAML as before."""
    from zagent.speckit import load_spec_file

    path = tmp_path / "agent.yaml"
    path.write_text("name: A\nprompt: 'Say {q}'\ninputs: [{name: q}]\noutputs:\n  - name: a\n    type: integer\n"
                    "tools: [" + ", ".join(f"t{i}" for i in range(1000)) + "]\n")
    assert len(load_spec_file(str(path))["tools"]) == 1000 and os.path.getsize(path) < 20_000


# -- model replies and files nested past the decoder's limit --------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_pipe_format_argument_nested_deep_is_no_recursion_error(kernel):
    """Attack: a model on the ``pipe`` format writes ``TOOL: word_count | text=[[[[...`` 100,000 deep. Before: the
    reader's JSON decode raised a bare ``RecursionError`` out of the run. Defence: the value stays text; the call
    runs with it (the tool runner bounds what it holds)."""
    agent = kernel.agent(counter(tool_format="pipe"))
    agent.llm = kernel.llm("scripted:pipe", replies=["TOOL: word_count | text=" + DEEP, "done"],
                           profile={"native_tools": False})
    assert agent(text="x").output.answer == "done"


def test_a_chat_router_reply_nested_deep_keeps_the_tools_on_offer(kernel):
    """Attack: in ``agent.chat``, the model asked whether the request needs tools answers ``{"use_react": [[[...``
    100,000 deep. Before: a bare ``RecursionError`` ended the chat. Defence: no decision was read, so the tools
    stay on offer (as for any unreadable answer)."""
    agent = kernel.agent(counter())
    agent.llm = kernel.llm("scripted:router", replies=['{"use_react": ' + DEEP + "}", "done", "done"])
    assert agent.chat("count these words").content == "done"


def test_a_skill_rerank_reply_nested_deep_chooses_nothing(tmp_path):
    """Attack: the skills re-rank model answers ``{"skill": [[[...`` 100,000 deep. Before: a bare
    ``RecursionError`` out of ``match``. Defence: no choice read; no skill is chosen by the model."""
    from zagent import Kernel
    from zagent.plugins.skills import SkillMatcher, skills_for

    k = Kernel(plugins=["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.memory", "zagent.plugins.skills"], entry_points=False, strict=True,
               config={"skills": {"folder": str(tmp_path / "skills")}})
    skills = skills_for(k)
    skills.registry.register({"name": "price-totals", "description": "Total price of items", "when_to_use": "prices",
                              "instructions": "Add the prices."})
    matcher = SkillMatcher(registry=skills.registry, rerank_llm=k.llm("scripted:rerank", replies=[
        '{"skill": ' + DEEP + "}"]), threshold=0.2)
    found = matcher.match("the total price of the items")
    assert found is None or found.method != "llm"
    k.close()


def test_a_skill_file_with_a_header_value_nested_deep_is_skipped_with_a_warning(tmp_path, caplog):
    """Attack: a skill file in a shared skills folder whose ``examples`` header is ``[[[...`` 100,000 deep. Before:
    the registry's load raised a bare ``RecursionError``, so no skill of the folder loaded and the agent using
    them failed. Defence: that file is skipped with a warning naming it, its line and the key; the others load."""
    from zagent.plugins.skills import SkillRegistry

    folder = tmp_path / "skills"
    folder.mkdir(mode=0o700)
    (folder / "deep.md").write_text("---\nname: deep\ndescription: d\nexamples: " + DEEP + "\n---\nDo it.\n")
    (folder / "fine.md").write_text("---\nname: fine\ndescription: f\n---\nDo it.\n")
    registry = SkillRegistry(folder, clock=time.time).load()
    assert registry.names() == ["fine"]
    assert "deep.md:4: the value of 'examples' is nested deeper" in caplog.text


def test_a_json_subset_score_of_an_output_nested_deep_is_a_failed_score(tmp_path):
    """Attack: the agent's text output an eval scores with ``json_subset`` is ``[[[...`` 100,000 deep. Before: a
    bare ``RecursionError`` stopped the whole eval. Defence: that case fails its score, saying why."""
    from zagent.plugins.evals.scorers import scorer_of

    k = make_kernel(plugins=["zagent.plugins.evals"])
    _, score = scorer_of(k, {"name": "json_subset"})
    verdict = score(DEEP, {"a": 1}, None)
    assert not verdict.passed and "nested too deeply" in verdict.reason
    k.close()


def test_no_module_of_zagent_unpickles_evaluates_or_loads_unsafe_yaml():
    """Guard (held): no module of the kernel or the plugins imports ``pickle``, ``marshal``, ``shelve`` or ``dill``,
    calls ``eval``/``exec``, or calls ``yaml.load`` with any loader but the bounded safe one (``yaml.safe_load``,
    ``unsafe_load`` and ``full_load`` included): data is never code."""
    import ast
    from pathlib import Path

    import zagent
    import zagent.plugins

    roots = [Path(zagent.__file__).parent, Path(zagent.plugins.__file__).parent]
    found, files = [], {p for root in roots for p in root.rglob("*.py")}
    assert len(files) > 200
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path}: import {n}" for n in names
                      if n.split(".")[0] in ("pickle", "marshal", "shelve", "dill", "cloudpickle", "jsonpickle")]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
                found.append(f"{path}:{node.lineno}: {node.func.id}()")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml" and \
                    node.func.attr in ("load", "load_all", "unsafe_load", "full_load", "safe_load"):
                loader = next((kw.value for kw in node.keywords if kw.arg == "Loader"), None)
                if not (isinstance(loader, ast.Call) and getattr(loader.func, "id", "") == "_bounded_loader"):
                    found.append(f"{path}:{node.lineno}: yaml.{node.func.attr}")
    assert found == []


def test_a_model_listing_nested_deep_is_a_protocol_error():
    """Attack: a server answers ``GET /models`` (``zagent models``) with ``[[[...`` 100,000 deep (under the
    200,000-container cap). Before: a bare ``RecursionError``. Defence: a ``ProtocolError`` saying the server did
    not answer with JSON it can read."""
    import asyncio

    from tests.servers.hostile import HostileServer, reply
    from zagent.errors import ProviderError

    k = make_kernel(plugins=["zagent.plugins.openai"])
    with HostileServer(reply(200, DEEP.encode())) as server:
        llm = k.llm("openai:m", base_url=server.url, api_key="sk-r13-own-key", max_retries=0)
        with pytest.raises(ProviderError, match="did not answer with JSON"):
            asyncio.run(llm.alist_models())
    k.close()
