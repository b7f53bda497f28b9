"""Tool results that cannot be turned into text, and lone surrogates, end as results the model reads.

The value is rendered inside the tool path's error handling: a value that cannot be rendered is an
``error`` result naming why; lone surrogates become U+FFFD, so providers and checkpoints (a real SQLite
file, a real loopback OpenAI server) take the result.
"""

from __future__ import annotations

import json

from zagent import Kernel, tool

from tests.servers.openai_server import completion

SURROGATE = "caf\ud800e"


class _BadRepr:
    def __repr__(self):
        raise ValueError("no repr for you")


def _self_referencing():
    d = {"name": "loop"}
    d["self"] = d
    return d


def _deep():
    v = []
    for _ in range(100_000):
        v = [v]
    return v


def _run(value_factory):
    k = Kernel(entry_points=False)
    k.add_tool(tool(lambda: value_factory(), name="give", inline=False))
    try:
        return k.run_tool({"name": "give", "arguments": {}})
    finally:
        k.close()


def test_a_self_referencing_dict_is_rendered_not_raised():
    """A dict containing itself is shown to the model (as repr with ``{...}``), no RecursionError."""
    result = _run(_self_referencing)
    assert result.state == "success" and "{...}" in result.content and "loop" in result.content


def test_a_value_whose_repr_raises_is_an_error_result():
    """A value neither JSON nor repr can render is an error result naming the repr failure."""
    result = _run(_BadRepr)
    assert result.state == "error" and "repr() fails" in result.content and "no repr for you" in result.content


def test_an_int_too_long_to_print_is_an_error_result():
    """``10**5000`` (past Python's digit limit) is an error result, not a ValueError out of run_tool."""
    result = _run(lambda: 10**5000)
    assert result.state == "error" and "int" in result.content


def test_a_value_nested_past_the_depth_limit_is_an_error_result():
    """A list nested 100,000 levels deep is an error result saying it is nested too deeply."""
    result = _run(_deep)
    assert result.state == "error" and "nested too deeply" in result.content


def test_lone_surrogates_in_a_text_result_become_replacement_characters():
    """A str result with a lone surrogate reaches the model as valid UTF-8, U+FFFD in its place."""
    result = _run(lambda: SURROGATE)
    assert result.content == "caf\ufffde"
    result.content.encode("utf-8")


def test_lone_surrogates_inside_a_structured_result_are_replaced_in_its_json():
    """A dict holding a surrogate string is still JSON for the model, the surrogate replaced."""
    result = _run(lambda: {"word": SURROGATE, SURROGATE: 1})
    assert result.state == "success" and json.loads(result.content) == {"word": "caf\ufffde", "caf\ufffde": 1}


def test_lone_surrogates_in_a_tool_error_message_are_replaced():
    """An exception whose message holds a surrogate gives an error result that encodes as UTF-8."""
    def boom():
        raise RuntimeError(SURROGATE)

    result = _run(lambda: boom())
    assert result.state == "error" and "caf\ufffde" in result.content
    result.content.encode("utf-8") and result.error.encode("utf-8")


def test_a_checkpointed_react_run_takes_a_surrogate_tool_result(kernel, tmp_path):
    """A ReAct run checkpointed to a real SQLite file finishes when a tool returns a lone surrogate."""
    from zagent.plugins.react import ReActLoop

    kernel.add_tool(tool(lambda: SURROGATE, name="word"))
    store = kernel.memory("checkpoints", path=str(tmp_path / "runs.db"))
    llm = kernel.llm("scripted:m", replies=[{"tool_calls": [{"name": "word", "arguments": {}}]}, "done"])
    result = ReActLoop(kernel=kernel, llm=llm, tools=["word"], checkpoints=store, max_iterations=4).run("go")
    assert result.content == "done"
    store.close()


def test_the_openai_provider_sends_a_surrogate_tool_result(kernel, server):
    """A tool result with a lone surrogate goes to a real OpenAI-compatible server, not a UnicodeEncodeError."""
    kernel.add_tool(tool(lambda: SURROGATE, name="word"))
    server.then(completion(tool_calls=[{"id": "c1", "name": "word", "arguments": "{}"}]), completion("done"))
    from zagent.plugins.react import ReActLoop

    llm = kernel.llm("openai:gpt-test", base_url=server.url, api_key="sk-right", retry_backoff=0)
    assert ReActLoop(kernel=kernel, llm=llm, tools=["word"], max_iterations=4).run("go").content == "done"
    assert "caf\ufffde" in server.requests[-1].body.decode("utf-8")
