"""Round twelve: code from data (session 2026-12-07, redteam12; 39 attacks tried, 20 got through, all fixed).

Here the "code" is mostly a regular expression a spec, a server or a model writes and zagent runs on a
backtracking engine: a pattern that backtracks exponentially is the data-driven way to make zagent spin forever. Each attack measures the refusal, never the hang: the texts are
sized so that the pattern, had it run, takes a fraction of a second (the attack got through if no error came).

Tried, and whether it got through before this round's fixes:

- ``rails.redact`` with an exponential body inside an atomic group (``(?>(a+)+b)``, ``(?>(a|a)*b)``) or inside a
  possessive repeat (``(?:(?:a+)+b)*+``): GOT THROUGH (3), in a declared agent's and a ReAct spec's rails, and
  on a model's reply of 22 ``a``\\ s -- fixed: ``specregex`` checks what an atomic group or a possessive repeat
  holds (they stop backtracking into them from outside, not inside them)
- ``rails.redact`` with a repeated group whose rounds end with a newline under DOTALL (``(?s)(?:.+?\\n)+x``, and
  the scoped ``(?s:...)``): GOT THROUGH (2) -- fixed: under DOTALL ``.`` matches the newline too
- ``rails.redact`` whose rounds end with a class that overlaps the inner repeat only past U+3000, away from the
  ranges' ends (``(?:\\w+?[^\\W\\d\\x00-\\u2fff])+!`` on CJK text): GOT THROUGH -- fixed: the overlap check
  samples the whole of Unicode
- ``rails.redact`` with many unbounded repeats: ``(?:.*){10}x`` (a group repeated 10 times passed the nesting
  rule), ten ``.*`` in a row, ``(?:(?:a*){3}){3}x``: a failing match tries every split of the text among them (6 s
  on 20 characters): GOT THROUGH (3, and on a model's reply) -- fixed: at most ``MAX_UNBOUNDED_REPEATS`` (6)
  unbounded repeats, a group repeated k times counting its own k times; alternatives that start with different
  characters (``(ab|cd)*``) are now taken inside a repeat (one way to go on), as the offline model needs
- ``rails.redact`` with 22 ``a?`` in a row, or bounded repeats in bounded repeats (``(?:.{1,10}){1,10}x``,
  ``(?:[^b]{1,10}){10}``): 2**22 and more ways to try, none nested past 10: GOT THROUGH (3) -- fixed: at most
  2**``MAX_CHOICE_BITS`` (2**20) ways among optional parts, bounded repeats and overlapping alternatives
- a tool's input schema (an MCP server's, untrusted) with ``"pattern": "^(a|a)*\\bx"``; the offline test model
  compiles it and searches its own candidates, which the ``\\b`` makes fail: GOT THROUGH -- fixed: the offline
  model's pattern generator takes only bounded patterns (``compile_spec_regex``, backreferences allowed)
- the same server's ``^(?:.*){4}x$`` with ``minLength`` 120 (400: 32 s): candidates padded to that length fail the
  ``$`` and each failing search splits them four ways: GOT THROUGH -- fixed: a candidate whose search is
  estimated at more than 10**8 steps (``specregex.ambiguity``) is never searched
- held (already stopped, kept as guards of kinds not tested before): a trusted module re-exporting ``eval``,
  ``pickle.loads``, ``subprocess.Popen``, ``operator.methodcaller``, a ``partial``/``lru_cache``/``update_wrapper``
  of ``eval``, a class whose ``__call__`` is ``eval``, a ``staticmethod(exec)`` -- named as output validators,
  guardrails or workflow reducers (refused, naming the module the code is really from); an untrusted spec's
  ``llm_config.response_format`` carrying a pattern for the offline model (an unknown option: refused)
"""

import sys

import pytest

from zagent import ConfigError, Tool, ToolBlocked, run_sync
from zagent.agentkit.specregex import compile_spec_regex

from .conftest import agent_spec

#: patterns that backtrack exponentially on a backtracking engine, each with a text that shows it
ATOMIC = [r"(?>(a+)+b)", r"(?>(a|a)*b)", r"(?:(?:a+)+b)*+"]
DOTALL = [r"(?s)(?:.+?\n)+x", r"(?s:(?:.+\n)+)x"]
WIDE = r"(?:\w+?[^\W\d\x00-\u2fff])+!"
POWER = [r"(?:.*){10}x", r".*.*.*.*.*.*.*.*.*.*x", r"(?:(?:a*){3}){3}x"]
CHOICES = ["a?" * 22 + "a" * 22 + "$", r"(?:.{1,10}){1,10}x", r"(?:[^b]{1,10}){10}\s"]
#: atomic groups and possessive repeats are Python 3.11+ syntax (3.10 refuses them as invalid regexes)
NEEDS_311 = pytest.mark.skipif(sys.version_info < (3, 11), reason="atomic groups and possessive repeats: Python 3.11+")
PHONE = r"\+?\d{1,3}?[-.\s]?\(?\d{1,3}?\)?[-.\s]?\d{1,4}[-.\s]?\d{1,4}[-.\s]?\d{1,9}"


def declared(rails):
    """A declared agent whose agent_config carries ``rails``."""
    return agent_spec(agent_config={"rails": rails}, llm_config={"model": "test:offline"})


def react(rails):
    return {"type": "react", "name": "EvilReact", "rails": rails, "llm_config": {"model": "test:offline"}}


@NEEDS_311
@pytest.mark.parametrize("make_spec", [declared, react], ids=["declared", "react"])
@pytest.mark.parametrize("pattern", ATOMIC)
def test_an_exponential_body_inside_an_atomic_group_or_possessive_repeat_is_refused(make_spec, pattern, kernel):
    """Attack: rails.redact hides '(a+)+b' inside '(?>...)' or '(...)*+', which the check took as safe (they only
    stop backtracking into them from outside). Defence: ConfigError at load naming rails.redact and the pattern."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(make_spec({"redact": [pattern], "redact_llm": True}))
    assert "rails.redact" in str(err.value) and repr(pattern) in str(err.value)
    assert "exponential" in str(err.value) and "Rewrite it" in str(err.value)


@NEEDS_311
def test_the_atomic_pattern_set_in_code_withholds_the_reply_instead_of_spinning(kernel):
    """Attack end to end: rails in code (agent_config) with '(?>(a+)+b)' and redact_llm, the model replies 22
    'a's and a 'c' (each 'a' more doubles the time). Defence: the rail refuses the pattern before matching; the
    reply is withheld (fail closed) with the reason."""
    llm = kernel.llm("scripted:m", replies=["a" * 22 + "c"])
    ctx = kernel.context(agent="a", agent_config={"rails": {"redact": ["(?>(a+)+b)"], "redact_llm": True}})
    with pytest.raises(ToolBlocked, match=r"withheld") as err:
        run_sync(llm.asend(llm.request("hi"), ctx))
    assert isinstance(err.value.__cause__, ConfigError) and "'(?>(a+)+b)' is refused" in str(err.value)


@pytest.mark.parametrize("pattern", DOTALL)
def test_rounds_ending_in_a_newline_under_dotall_are_refused(pattern, kernel):
    """Attack: '(?s)(?:.+?\\n)+x': the check took '\\n' as a delimiter '.' cannot match, but DOTALL makes it
    match; 'a\\n' * n splits 2**n ways. Defence: ConfigError at load naming the pattern."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(declared({"redact": [pattern]}))
    assert repr(pattern) in str(err.value) and "exponential" in str(err.value)


def test_rounds_ending_in_a_class_overlapping_past_u3000_are_refused(kernel):
    """Attack: each round ends with '[^\\W\\d\\x00-\\u2fff]' (a word character past U+2FFF), which overlaps the
    inner '\\w+?' only on CJK text, away from the ranges' ends the check sampled. Defence: ConfigError at load."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(declared({"redact": [WIDE]}))
    assert repr(WIDE) in str(err.value) and "exponential" in str(err.value)


@pytest.mark.parametrize("pattern", POWER)
def test_many_unbounded_repeats_one_after_another_are_refused(pattern, kernel):
    """Attack: '(?:.*){10}x' passed (a group repeated 10 times, not more) and so did ten '.*' in a row; a failing
    match tries every way of splitting the text among them, the text's length to the 10th power: 6 s on 20
    characters. Defence: ConfigError at load naming the count and how to rewrite it."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(declared({"redact": [pattern]}))
    assert repr(pattern) in str(err.value) and "unbounded repeats" in str(err.value) and "power" in str(err.value)


@pytest.mark.parametrize("pattern", CHOICES, ids=["22 optional", "bounded in bounded", "ten bounded"])
def test_too_many_ways_among_optional_parts_and_bounded_repeats_are_refused(pattern, kernel):
    """Attack: 22 'a?' then 22 'a' (each '?' at the top, none nested: 2 s on 30 'a's and a '!', doubling with each
    'a?'), or '(?:.{1,10}){1,10}' (nested, but each repeat bounded to 10): a failing match tries every choice.
    Defence: ConfigError at load saying about how many ways there are and how to rewrite the pattern."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(declared({"redact": [pattern]}))
    assert repr(pattern) in str(err.value) and "ways" in str(err.value) and "Spec regexes are bounded" in str(err.value)


def test_a_tenth_power_pattern_set_in_code_withholds_the_reply(kernel):
    """Attack end to end: rails in code with '(?:.*){10}x' and redact_llm; the reply is 14 'a's. Defence: the
    reply is withheld with the refusal (fail closed), nothing is matched."""
    llm = kernel.llm("scripted:m", replies=["a" * 14])
    ctx = kernel.context(agent="a", agent_config={"rails": {"redact": [POWER[0]], "redact_llm": True}})
    with pytest.raises(ToolBlocked, match=r"withheld") as err:
        run_sync(llm.asend(llm.request("hi"), ctx))
    assert isinstance(err.value.__cause__, ConfigError) and "unbounded repeats" in str(err.value)


@pytest.mark.parametrize("pattern", [*(pytest.param(p, marks=NEEDS_311) for p in (r"(?>a+)+b", r"(?:\w++\s)+",
                                                                                r"(?>\w+\s?)*$", r"(?:a++){8}b")),
                                     r"(?s)(?:[^\n]+\n)+x",
                                     r"(?:[\w-]+\.)+\w+", r"(?:[\u4e00-\u9fff]+,)+", r"(?:\d+[- ])+\d+",
                                     r"(?:.+\n)+x", r"(ab|cd)*$", r"(?:\d{2}|x)+", r".*.*.*.*.*.*x",
                                     r"(?i)\b(?:api[_-]?key|secret|token)\s*[:=]\s*['\"]?[\w-]{16,}['\"]?", PHONE,
                                     r"(?:\d{4}[- ]?){3}\d{4}"])
def test_ordinary_atomic_possessive_and_delimited_patterns_still_load(pattern):
    """The defences above keep what cannot blow up: an atomic or possessive repeat of a plain repeat, rounds
    delimited by a character none of their repeats can match (a newline without DOTALL, a comma after CJK),
    alternatives that start with different characters ('(ab|cd)*'), six unbounded repeats, a key pattern, a phone
    number pattern with nine optional or bounded parts, a card number."""
    assert compile_spec_regex(pattern, "rails.redact").pattern == pattern


def _server_tool(kernel, schema):
    """The tool an MCP server's listing becomes (``srv.lookup`` of toolset ``srv``, the server's input schema)."""
    ran = []

    def lookup(**arguments):
        ran.append(arguments)
        return "ok"

    kernel.add_tool(Tool.from_function(lookup, name="srv.lookup", description="Look up.", parameters=schema,
                                       toolset="srv"))
    return ran


@pytest.mark.timeout(60)  # a hang guard: fails only if it never ends
def test_a_servers_schema_pattern_does_not_spin_the_offline_model(kernel):
    """Attack: a server's tool schema says 'q' matches '^(a|a)*\\bx' with minLength 22; the offline test model
    builds candidates and searches each with the pattern, and the '\\b' it cannot honour makes every search fail
    the slow way. Defence: the pattern is refused as a spec regex (ConfigError naming the tool, the parameter and
    the pattern) before any search; the tool never runs."""
    from zagent.plugins.react import ReActLoop

    ran = _server_tool(kernel, {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string", "pattern": r"^(a|a)*\bx", "minLength": 22}}})
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("test:offline"), tools=["srv.lookup"])
    with pytest.raises(ConfigError) as err:
        loop.run("look it up")
    text = str(err.value)
    assert "srv.lookup" in text and "'q'" in text and repr(r"^(a|a)*\bx") in text and "exponential" in text
    assert ran == []


def test_a_servers_long_min_length_does_not_make_the_offline_model_search_for_minutes(kernel):
    """Attack: the schema's pattern '^(?:.*){4}x$' passes the spec check (four unbounded repeats), and its
    minLength 120 makes the model pad candidates that fail the '$': each failing search splits the text four ways
    (32 s at minLength 400). Defence: a candidate whose search could take that long is never searched; a
    ConfigError says why (naming the tool and the parameter); the tool never runs."""
    from zagent.plugins.react import ReActLoop

    ran = _server_tool(kernel, {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string", "pattern": r"^(?:.*){4}x$", "minLength": 120}}})
    loop = ReActLoop(kernel=kernel, llm=kernel.llm("test:offline"), tools=["srv.lookup"])
    with pytest.raises(ConfigError) as err:
        loop.run("look it up")
    assert "srv.lookup" in str(err.value) and "'q'" in str(err.value) and "could take minutes" in str(err.value)
    assert ran == []


def test_a_servers_ordinary_schema_pattern_still_gets_a_matching_value(kernel):
    """The defence above keeps the offline model useful: a plain pattern ('^[a-z]{3}-\\d{2}$') gets a value
    matching it, and the tool runs with it."""
    import re

    from zagent.plugins.react import ReActLoop

    ran = _server_tool(kernel, {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string", "pattern": r"^[a-z]{3}-\d{2}$"}}})
    ReActLoop(kernel=kernel, llm=kernel.llm("test:offline"), tools=["srv.lookup"]).run("look it up")
    assert len(ran) == 1 and re.fullmatch(r"[a-z]{3}-\d{2}", ran[0]["q"])


def test_an_untrusted_specs_response_format_pattern_never_reaches_the_offline_model(kernel):
    """Held: a spec's llm_config carries a response_format whose schema pattern would spin the offline model.
    Expected: an option the model does not take is refused when the agent is built."""
    schema = {"type": "string", "pattern": r"^(a|a)*\bx", "minLength": 22}
    spec = agent_spec(llm_config={"model": "test:offline", "response_format": {
        "type": "json_schema", "json_schema": {"schema": schema}}})
    with pytest.raises(ConfigError, match="response_format"):
        kernel.agent(spec)


# -- held: code of another module re-exported by a trusted one, named by new keys --------------------------------

APP = '''
import functools, operator, pickle, subprocess
from builtins import eval as check
from pickle import loads as parse_blob


def own(output):
    """The app's own validator."""
    return None


part = functools.partial(eval)
cached = functools.lru_cache(eval)
wrapped = functools.update_wrapper(functools.partial(eval), own)
caller = operator.methodcaller("system", "true")
popen = subprocess.Popen


class Evaluator:
    __call__ = eval


evaluator = Evaluator()


class Runner:
    run = staticmethod(exec)
'''

REEXPORTED = {"check": "builtins", "parse_blob": "pickle", "part": "builtins", "cached": "builtins",
              "wrapped": "builtins", "caller": "operator", "popen": "subprocess", "evaluator": "builtins",
              "Runner.run": "builtins"}


@pytest.fixture
def r12app(tmp_path, monkeypatch, forget_modules):
    """``r12app`` (the app's module, trusted by name) re-exporting code of other modules."""
    (tmp_path / "r12app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_modules.append("r12app")
    from .conftest import make_kernel

    k = make_kernel(config={"trusted_imports": ["r12app"]})
    yield k
    k.close()


@pytest.mark.parametrize("attr", sorted(REEXPORTED))
@pytest.mark.parametrize("key", ["output_validators", "guardrails"])
def test_a_trusted_module_re_exporting_eval_or_pickle_is_no_way_in(r12app, attr, key):
    """Held: trusted_imports ['r12app'] and a spec naming 'r12app:<attr>' as an output validator or guardrail,
    where <attr> is eval, pickle.loads, Popen... under another name or wrapped. Expected: ConfigError naming
    the module the code really belongs to; nothing is called."""
    value = [f"r12app:{attr}"] if key == "output_validators" else {"output": [f"r12app:{attr}"]}
    with pytest.raises(ConfigError) as err:
        r12app.agent(agent_spec(**{key: value}))
    assert "not trusted" in str(err.value) and REEXPORTED[attr] in str(err.value).replace("_pickle", "pickle")


def test_a_trusted_modules_own_validator_still_resolves(r12app):
    """The app's own function in the trusted module is taken."""
    r12app.agent(agent_spec(output_validators=["r12app:own"]))


def test_a_workflow_reducer_re_exporting_eval_is_refused(r12app):
    """Held: a workflow state field whose reducer is 'r12app:part' (a partial of eval). Expected: ConfigError when
    the executor resolves it, naming builtins."""
    from zagent.plugins.workflow import WorkFlowExecutor, WorkFlowGraph

    graph = WorkFlowGraph.from_dict({"name": "w", "goal": "g", "inputs": [{"name": "x"}], "nodes": [
        {"name": "a", "description": "a", "inputs": [{"name": "x"}], "outputs": [{"name": "y"}], "agents": ["one"]}],
        "edges": [], "state": [{"name": "y", "reducer": "r12app:part"}]})
    from .conftest import NodeAgent

    ex = WorkFlowExecutor(kernel=r12app)
    ex.manager.add_agent(NodeAgent("one", False))
    with pytest.raises(ConfigError) as err:
        ex.run(graph, {"x": "hi"})
    assert "builtins" in str(err.value) and "not trusted" in str(err.value)
