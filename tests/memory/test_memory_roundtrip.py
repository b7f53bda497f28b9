"""Property: any Message survives storage in every backend unchanged (hypothesis)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zagent import Message, ToolCall

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
json_scalar = st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.floats(allow_nan=False) | text
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(text, inner, max_size=3), max_leaves=8)
tool_calls = st.lists(st.builds(ToolCall, id=text.filter(bool), name=text.filter(bool),
                                arguments=st.dictionaries(text, json_value, max_size=3) | text), max_size=2)
messages = st.builds(Message, role=st.sampled_from(["system", "user", "assistant", "tool"]),
                     content=st.none() | text, tool_calls=tool_calls, tool_call_id=st.none() | text,
                     name=st.none() | text, metadata=st.dictionaries(text, json_value, max_size=3))

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_sqlite_round_trips_any_message(kernel, tmp_path):
    """Messages read back from the sqlite backend equal the ones stored, in order."""
    mem = kernel.memory("sqlite", path=str(tmp_path / "roundtrip.db"), synchronous="normal")

    @SETTINGS
    @given(batch=st.lists(messages, min_size=1, max_size=4))
    def check(batch):
        mem.clear("prop/s")
        mem.add("prop/s", batch)
        assert mem.last("prop/s", len(batch)) == batch

    check()


def test_inprocess_round_trips_any_message(kernel):
    """Messages read back from the in-process backend equal the ones stored, in order."""

    @SETTINGS
    @given(batch=st.lists(messages, min_size=1, max_size=4))
    def check(batch):
        mem = kernel.memory("inprocess")
        mem.add("prop/s", batch)
        assert mem.last("prop/s", len(batch)) == batch

    check()


def test_any_query_text_is_safe_to_search(kernel, tmp_path):
    """Whatever the query text, search returns a list and never raises a syntax error."""
    mem = kernel.memory("sqlite", path=str(tmp_path / "query.db"), synchronous="normal")
    mem.add("prop/q", Message.user("some stored words"))

    @settings(max_examples=100, deadline=None)
    @given(query=text)
    def check(query):
        assert isinstance(mem.search("prop/q", query), list)

    check()
