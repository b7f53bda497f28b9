"""Context compression (``zagent.plugins.react.compression``): older turns become one summary message,
and tool-call pairs are never split."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zagent import Kernel, Message, ToolCall, run_sync
from zagent.plugins.react.compression import (
    SUMMARY_PREFIX, compress, estimate_tokens, needs_compression, validate_tool_pairs,
)


def scripted(*replies):
    k = Kernel(plugins=["zagent.plugins.offline"], entry_points=False, strict=True)
    return k, k.llm("scripted:m", replies=list(replies or ["summary text"]))


def batch(prefix, n, answered=None, order=None):
    """An assistant message with ``n`` tool calls and results for the first ``answered`` (in ``order``)."""
    calls = [ToolCall(id=f"{prefix}-{i}", name="lookup", arguments={"q": str(i)}) for i in range(n)]
    answered = n if answered is None else answered
    order = order or list(range(n))
    results = [Message.tool(f"result {prefix}-{i}", f"{prefix}-{i}", name="lookup") for i in order if i < answered]
    return [Message.assistant(None, calls)] + results


def conversation(turns=6):
    msgs = [Message.system("You are helpful.")]
    for t in range(turns):
        msgs += [Message.user(f"question {t}")] + batch(f"t{t}", 2) + [Message.assistant(f"answer {t}")]
    return msgs


def test_old_turns_become_one_summary_message():
    """Older turns are replaced by ONE user message starting "Summary of the earlier conversation: "."""
    _, llm = scripted("they asked six questions")
    out = run_sync(compress(conversation(), llm, keep_recent=4))
    summaries = [m for m in out if (m.content or "").startswith(SUMMARY_PREFIX)]
    assert len(summaries) == 1 and summaries[0].role == "user" and "six questions" in summaries[0].content


def test_system_prompt_is_kept_first():
    """The system prompt stays the first message, unchanged."""
    _, llm = scripted()
    msgs = conversation()
    assert run_sync(compress(msgs, llm, keep_recent=4))[0] == msgs[0]


def test_recent_messages_are_kept():
    """At least the last ``keep_recent`` messages are kept verbatim."""
    _, llm = scripted()
    msgs = conversation()
    assert run_sync(compress(msgs, llm, keep_recent=4))[-4:] == msgs[-4:]


def test_cut_never_separates_tool_results_from_their_call():
    """When the last ``keep_recent`` messages start inside a tool batch, the whole batch is kept."""
    _, llm = scripted()
    msgs = conversation()  # ... user, assistant(2 calls), tool, tool, assistant
    out = run_sync(compress(msgs, llm, keep_recent=2))  # would start at the second tool result
    validate_tool_pairs(out, allow_pending=False)
    assert out[-4:] == msgs[-4:] and out[-4].tool_calls and out[-5].content.startswith(SUMMARY_PREFIX)


def test_summary_request_goes_through_the_llm_with_the_old_turns():
    """The summariser gets one request holding the transcript of the summarised turns."""
    _, llm = scripted()
    run_sync(compress(conversation(), llm, keep_recent=4))
    (request,) = llm.requests
    assert [m.role for m in request.messages] == ["system", "user"]
    assert "question 0" in request.messages[1].content and "result t0-1" in request.messages[1].content


def test_nothing_to_summarise_calls_no_llm():
    """A history shorter than ``keep_recent`` comes back unchanged and the LLM is not called."""
    _, llm = scripted()
    msgs = conversation(1)
    assert run_sync(compress(msgs, llm, keep_recent=10)) == msgs and llm.requests == []


def test_pending_tool_calls_at_the_end_are_kept():
    """An assistant message whose tool calls are still unanswered is kept with its partial results."""
    _, llm = scripted()
    msgs = conversation(3) + batch("late", 3, answered=1)
    out = run_sync(compress(msgs, llm, keep_recent=0))
    assert out[-2:] == msgs[-2:] and out[-2].tool_calls


def test_previous_summary_is_summarised_again():
    """Compressing twice folds the first summary into the second."""
    _, llm = scripted("first summary", "second summary")
    once = run_sync(compress(conversation(), llm, keep_recent=8))
    twice = run_sync(compress(once + conversation(2)[1:], llm, keep_recent=4))
    assert "first summary" in llm.requests[1].messages[1].content
    assert sum((m.content or "").startswith(SUMMARY_PREFIX) for m in twice) == 1


def test_empty_summary_is_an_error():
    """An empty summary raises instead of silently dropping the history."""
    _, llm = scripted("  ")
    with pytest.raises(ValueError, match="empty summary"):
        run_sync(compress(conversation(), llm, keep_recent=2))


def test_needs_compression_by_message_count():
    """``needs_compression`` is true past ``max_messages``."""
    msgs = conversation(2)
    assert needs_compression(msgs, max_messages=len(msgs) - 1)
    assert not needs_compression(msgs, max_messages=len(msgs))


def test_needs_compression_by_token_estimate():
    """``needs_compression`` is true past ``max_tokens`` (about four characters a token)."""
    msgs = [Message.user("x" * 4000)]
    assert 1000 <= estimate_tokens(msgs) < 1100
    assert needs_compression(msgs, max_tokens=500) and not needs_compression(msgs, max_tokens=2000)


def test_needs_compression_without_limits_is_false():
    """With no limits set nothing needs compressing."""
    assert not needs_compression(conversation())


def test_validate_rejects_orphan_tool_message():
    """A tool message no preceding assistant asked for is an orphan."""
    with pytest.raises(ValueError, match="orphan"):
        validate_tool_pairs([Message.user("hi"), Message.tool("42", "c1")])


def test_validate_rejects_unanswered_calls_before_another_message():
    """Tool calls must all be answered before the next non-tool message."""
    with pytest.raises(ValueError, match="without results"):
        validate_tool_pairs(batch("a", 2, answered=1) + [Message.user("next")])


def test_validate_allows_pending_calls_only_at_the_end():
    """Unanswered calls at the very end pass, unless ``allow_pending=False``."""
    msgs = [Message.user("hi")] + batch("a", 2, answered=1)
    validate_tool_pairs(msgs)
    with pytest.raises(ValueError):
        validate_tool_pairs(msgs, allow_pending=False)


def test_validate_rejects_duplicate_results():
    """A second result for the same call is an orphan."""
    with pytest.raises(ValueError):
        validate_tool_pairs(batch("a", 1) + [Message.tool("again", "a-0")])


# -- property: for arbitrary valid conversations ------------------------------------------------

turn = st.one_of(
    st.builds(lambda i: ("user", i), st.integers(0, 99)),
    st.builds(lambda i: ("text", i), st.integers(0, 99)),
    st.tuples(st.just("batch"), st.integers(1, 3), st.randoms(use_true_random=False)),
)


@st.composite
def conversations(draw):
    msgs = [Message.system(f"system {i}") for i in range(draw(st.integers(0, 2)))]
    for n, t in enumerate(draw(st.lists(turn, max_size=25))):
        if t[0] == "user":
            msgs.append(Message.user(f"user {t[1]}"))
        elif t[0] == "text":
            msgs.append(Message.assistant(f"assistant {t[1]}"))
        else:
            order = list(range(t[1]))
            t[2].shuffle(order)
            msgs += batch(f"b{n}", t[1], order=order)
    pending = draw(st.integers(0, 3))
    if pending:
        msgs += batch("pending", pending, answered=draw(st.integers(0, pending - 1)))
    return msgs, bool(pending)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(0, 8))
def test_compression_never_breaks_tool_pairs(case, keep_recent):
    """For any valid conversation: no orphan tool message, no unanswered calls except pending ones at the
    end, the system prompts first and the last ``keep_recent`` messages kept verbatim."""
    msgs, has_pending = case
    validate_tool_pairs(msgs)  # the generator makes valid conversations
    _, llm = scripted()
    out = run_sync(compress(msgs, llm, keep_recent=keep_recent))
    validate_tool_pairs(out, allow_pending=has_pending)
    n_head = next((i for i, m in enumerate(msgs) if m.role != "system"), len(msgs))
    assert out[:n_head] == msgs[:n_head]
    tail = min(keep_recent, len(msgs) - n_head)
    assert out[len(out) - tail:] == msgs[len(msgs) - tail:]
    if has_pending:
        start = max(i for i, m in enumerate(msgs) if m.tool_calls and m.tool_calls[0].id.startswith("pending"))
        assert out[len(out) - (len(msgs) - start):] == msgs[start:]
    summaries = [m for m in out if (m.content or "").startswith(SUMMARY_PREFIX)]
    assert len(summaries) == len(llm.requests) <= 1
    if summaries:
        assert out[n_head] is summaries[0]
    else:
        assert out == msgs
