"""Attack: a spec's redaction regex that backtracks exponentially (``(a+)+$``) hangs a worker on a 40-char reply.

Spec regexes are bounded (``zagent.agentkit.specregex``): patterns that can backtrack exponentially are refused when the
spec loads, with an error naming the key and the pattern; with google-re2 installed the others run in linear time.
"""

import sys

import pytest

from zagent import ConfigError, ToolBlocked, run_sync
from zagent.agentkit.specregex import compile_spec_regex, uses_linear_engine

EVIL = ["(a+)+$", "(a|aa)*$", r"(\w+\s?)*$", r"(x+x+)+y", "(a|a)*b", r"(.*a){12}", r"(\d)\1", r"(?:a+a)+$",
        r"(?i)(?:[a-z]+A)+$"]


def customize(rails):
    return {"name": "Evil", "prompt": "Answer: {question}", "inputs": [{"name": "question"}],
            "outputs": [{"name": "answer"}], "parse_mode": "str", "agent_config": {"rails": rails},
            "llm_config": {"model": "test:offline"}}


def react(rails):
    return {"type": "react", "name": "EvilReact", "rails": rails, "llm_config": {"model": "test:offline"}}


@pytest.mark.parametrize("make_spec", [customize, react], ids=["customize", "react"])
@pytest.mark.parametrize("pattern", EVIL)
def test_a_spec_with_an_exponential_redaction_regex_is_refused_at_load(make_spec, pattern, kernel):
    """kernel.agent(spec) refuses rails.redact patterns with nested quantifiers, quantified alternation or backreferences."""
    with pytest.raises(ConfigError) as err:
        kernel.agent(make_spec({"redact": [pattern], "redact_llm": True}))
    assert "rails.redact" in str(err.value) and repr(pattern) in str(err.value)


def test_the_rail_refuses_the_pattern_on_a_forty_char_reply_instead_of_hanging(kernel):
    """Rails set in code (agent_config) with '(a+)+$' and redact_llm: the reply of 40 'a's and a '!' does not hang:
    the rail refuses the pattern before matching anything, and the reply is withheld (fail closed)."""
    llm = kernel.llm("scripted:m", replies=["a" * 40 + "!"])
    ctx = kernel.context(agent="a", agent_config={"rails": {"redact": ["(a+)+$"], "redact_llm": True}})
    with pytest.raises(ToolBlocked, match=r"withheld") as err:
        run_sync(llm.asend(llm.request("hi"), ctx))
    assert isinstance(err.value.__cause__, ConfigError) and "'(a+)+$' is refused" in str(err.value)


@pytest.mark.parametrize("pattern", [r"sk-[A-Za-z0-9]{20,}", r"(?:\d{4}[- ]?){3}\d{4}", r"(?<![\w-])\d{16}(?![\w-])",
                                     pytest.param(r"(?>a+)+b", marks=pytest.mark.skipif(
                                         sys.version_info < (3, 11), reason="atomic groups need Python 3.11")),
                                     r"[ab]*c", r"(?:foo|bar)-\d+", r"[\w.+-]+@(?:[\w-]+\.)+\w+",
                                     r"(?:\d+[- ])+\d+"])
def test_ordinary_redaction_patterns_still_load_and_redact(pattern):
    """Card numbers, key prefixes, look-arounds, atomic groups, alternations outside a repeat and repeated groups
    delimited by a character their inner repeats cannot match (e-mail domains) are accepted."""
    compiled = compile_spec_regex(pattern, "rails.redact")
    assert compiled.pattern == pattern


def test_with_re2_installed_spec_regexes_run_on_a_linear_engine():
    """google-re2 (zagent[re2]) compiles the spec's pattern: RE2 matches in linear time."""
    pytest.importorskip("re2")
    compiled = compile_spec_regex(r"(?:\d{4}[- ]?){3}\d{4}", "rails.redact")
    assert uses_linear_engine(compiled) and compiled.sub("#", "card 1234 5678 9012 3456.") == "card #."
