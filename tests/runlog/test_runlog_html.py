"""``zagent logs show RUN --html``: a self-contained page, one bar per span, hostile text escaped."""

import re

from zagent import Kernel
from zagent.plugins.cli import main
from zagent.plugins.runlog.html import render_html

from .conftest import PLUGINS, run_scenario


def write_html(log_path, out):
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(["logs", "show", "latest", "--db", log_path, "--html", str(out)], kernel=k) == 0
    finally:
        k.close()
    return out.read_text()


def test_the_page_has_one_bar_per_llm_and_tool_call_and_needs_no_network(make_logged, log_path, tmp_path):
    """The ReAct run's page: 2 LLM bars, 2 tool bars; no http(s) URL, no script, no external stylesheet."""
    run_scenario(make_logged, "react_two_tools")
    page = write_html(log_path, tmp_path / "run.html")
    assert page.count("data-kind='llm'") == 2 and page.count("data-kind='tool'") == 2
    assert not re.search(r"https?://|<script|<link|@import|url\(", page)


def test_text_from_the_run_is_escaped(tmp_path):
    """A tool named with markup and an error holding <script>: rendered as text, never as markup."""
    rows = [{"run_id": "r", "span_id": "s1", "parent_id": None, "kind": "tool", "name": "<img src=x onerror=1>",
             "agent": None, "started": 1.0, "duration": 0.5, "outcome": "error", "input_tokens": 0,
             "output_tokens": 0, "data": {"end": {"error": "<script>alert(1)</script>' \""}}}]
    page = render_html(rows)
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;" in page


def test_group_chat_turns_are_coloured_by_speaker_with_a_legend(make_logged, log_path, tmp_path):
    """Turn bars of different speakers get different colours, and the legend names each speaker."""
    run_scenario(make_logged, "group_chat")
    page = write_html(log_path, tmp_path / "chat.html")
    colours = dict(re.findall(r"data-kind='turn' data-name='(\w+)'.*?background:(#[0-9a-f]{6})", page, re.S))
    assert set(colours) == {"A", "B"} and colours["A"] != colours["B"]
    assert "speaker A" in page and "speaker B" in page


def test_an_opened_tool_step_shows_its_secret_arguments_masked(make_logged, log_path, tmp_path):
    """A tool called with token=...: the page's folded arguments show it as ***, the other values in clear."""
    from zagent.plugins.react.loop import ReActLoop

    k = make_logged()

    def login(user: str, token: str) -> str:
        """Log in.

        Args:
            user: who.
            token: the credential.
        """
        return "logged in"

    k.add_tool(login)
    call = {"content": None, "tool_calls": [{"name": "login", "arguments": {"user": "ann", "token": "tok-SECRET-1"}}]}
    llm = k.llm("scripted:s", replies=[call, "done"])
    ReActLoop(kernel=k, llm=llm, tools=["login"], agent="helper", allow_clarification=False).run("log ann in")
    k.close()
    page = write_html(log_path, tmp_path / "run.html")
    assert "<summary>arguments and result</summary>" in page and "ann" in page and "logged in" in page
    assert "SECRET" not in page and "***" in page
