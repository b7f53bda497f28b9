"""The timeline page's contents (no browser): its outcome header, errors in full, folded step details, escaping."""

from zagent.plugins.runlog.html import render_html


def _rows(outcome="error", error="ProviderError: the server said no", result="4"):
    run = {"run_id": "r1", "span_id": "s1", "parent_id": None, "kind": "run", "name": "helper", "agent": "helper",
           "started": 100.0, "duration": 2.0, "outcome": outcome,
           "data": {"start": {}, "end": {"error": error} if error else {}}}
    llm = {"run_id": "r1", "span_id": "s2", "parent_id": "s1", "kind": "llm", "name": "m", "agent": "helper",
           "started": 100.1, "duration": 1.0, "outcome": "ok", "input_tokens": 3, "output_tokens": 2,
           "data": {"start": {}, "end": {}, "request": {"messages": [{"role": "user", "content": "count <b>"}]},
                    "reply": {"content": "", "tool_calls": [{"name": "word_count", "arguments": {"text": "a"}}]}}}
    tool = {"run_id": "r1", "span_id": "s3", "parent_id": "s1", "kind": "tool", "name": "word_count",
            "agent": "helper", "started": 101.2, "duration": 0.1, "outcome": "ok",
            "data": {"start": {}, "end": {}, "arguments": {"text": "a"}, "result": result}}
    return [run, llm, tool]


def test_the_header_says_how_the_run_ended():
    """A run with outcome error is 'failed' in the header; an ok one 'finished'."""
    assert "<span class='outcome failed'>failed</span>" in render_html(_rows())
    assert "<span class='outcome finished'>finished</span>" in render_html(_rows(outcome="ok", error=None))


def test_an_error_is_shown_in_full_under_its_row():
    """The error's whole text is in a visible block, not only in a hover title."""
    page = render_html(_rows(error="ProviderError: " + "x" * 500))
    assert "<div class='errtext'>run helper failed: ProviderError: " + "x" * 500 + "</div>" in page


def test_steps_fold_their_prompt_reply_arguments_and_result():
    """A model call folds its messages and reply, a tool call its arguments and result, HTML-escaped."""
    page = render_html(_rows(result="<script>alert(1)</script>"))
    assert "<summary>prompt (1 messages) and reply</summary>" in page and "[user] count &lt;b&gt;" in page
    assert "calls word_count({&quot;text&quot;: &quot;a&quot;})" in page
    assert "<summary>arguments and result</summary>" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
