"""Almost-JSON tool calls: a made-up output/result member, open brackets, several calls, fences."""

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ARGS = st.dictionaries(st.text(min_size=1, max_size=6), st.integers() | st.text(max_size=8) | st.booleans(),
                       max_size=3)


def test_made_up_output_and_missing_brace_is_repaired(kernel):
    """Two <tool_call> blocks, the first with a made-up "output" and no closing brace: both calls are read."""
    text = ('<tool_call>\n{"name": "spotify.play", "arguments": {"artist": "Taylor Swift", "duration": 20}, '
            '"output": {"status": "playing"}\n<tool_call>\n'
            '{"name": "spotify.play", "arguments": {"artist": "Maroon 5", "duration": 15}}\n</tool_call>')
    found = kernel.parser("tool_call").extract(text)
    assert [c.arguments["artist"] for c in found.calls] == ["Taylor Swift", "Maroon 5"] and not found.errors


def test_bare_call_with_a_trailing_result_key_is_repaired(kernel):
    """A bare call cut off after a made-up "result": the call itself is read."""
    found = kernel.parser("tool_call").extract('{"name": "f", "arguments": {"a": 1}, "result": ')
    assert [(c.name, c.arguments) for c in found.calls] == [("f", {"a": 1})]


def test_several_calls_in_one_fenced_array(kernel):
    """A ```json fence holding a list of calls gives every call."""
    text = '```json\n[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]\n```'
    assert [c.name for c in kernel.parser("tool_call").extract(text).calls] == ["a", "b"]


def test_a_cut_off_string_stays_an_error(kernel):
    """Repair closes brackets only: a call whose string value was cut off is a malformed call, not a guess."""
    found = kernel.parser("tool_call").extract('<tool_call>{"name": "f", "arguments": {"q": "unfinis')
    assert not found.calls and found.errors


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(name=st.from_regex(r"[a-z][a-z_.]{0,10}", fullmatch=True), args=ARGS,
       made_up=st.sampled_from(["output", "result", "response"]), cut=st.integers(0, 2))
def test_open_calls_with_made_up_members_read_back(kernel, name, args, made_up, cut):
    """A call with a made-up result member and 0-2 closing braces missing reads back as the call."""
    body = msgspec.json.encode({"name": name, "arguments": args, made_up: {"ok": True}}).decode()
    text = "<tool_call>\n" + (body[:-cut] if cut else body)
    calls = kernel.parser("tool_call").extract(text).calls
    assert [(c.name, c.arguments) for c in calls] == [(name, args)]
