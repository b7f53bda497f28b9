"""Attack: run text that is markup (``</script><script>``, ``<img onerror>``, ``javascript:`` links, a quote
closing an attribute) in the HTML timeline of ``zagent logs show --html``.

A real ReAct run is logged whose agent name, model reply, tool output and error text are the payload; the
page is parsed (only the page's own tags, no event-handler attribute, no link), and when Chromium is
installed it opens the page and no script runs (the payload would set the title to ``PWNED``).
"""

import html.parser
import re

import pytest

from zagent import Kernel
from zagent.errors import ProviderError
from zagent.plugins.cli import main
from zagent.plugins.runlog.html import render_html

PWN = "document.title='PW'+'NED'"
PAYLOAD = (f"</pre></details></div></script><script>{PWN}</script><img src=x onerror=\"{PWN}\">"
           f"<a href=\"javascript:{PWN}\">x</a><svg onload=\"{PWN}\"></svg>' onmouseover='{PWN}' \" x=\"")
PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.react",
           "zagent.plugins.runlog", "zagent.plugins.cli"]
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "div", "span", "i", "details", "summary", "pre"}


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)


def hostile_page(tmp_path):
    """The HTML timeline of a logged ReAct run whose every run-controlled text is ``PAYLOAD``."""
    from zagent.plugins.react.loop import ReActLoop

    log = str(tmp_path / "logs.db")
    k = Kernel(PLUGINS, entry_points=False, strict=True, config={"log": log})

    def fetch(url: str) -> str:
        """Fetch a page."""
        return PAYLOAD

    def explode(url: str) -> str:
        """Fail."""
        raise RuntimeError(PAYLOAD)

    k.add_tool(fetch)
    k.add_tool(explode)
    llm = k.llm("scripted:xss", replies=[
        {"content": PAYLOAD, "tool_calls": [{"name": "fetch", "arguments": {"url": PAYLOAD}},
                                            {"name": "explode", "arguments": {"url": "x"}}]},
        ProviderError(PAYLOAD, provider="scripted")])
    with pytest.raises(ProviderError):
        ReActLoop(kernel=k, llm=llm, tools=["fetch", "explode"], agent="a" + PAYLOAD,
                  allow_clarification=False).run(PAYLOAD)
    k.close()
    out = tmp_path / "run.html"
    viewer = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(["logs", "show", "latest", "--db", log, "--html", str(out)], kernel=viewer) == 0
    finally:
        viewer.close()
    return out


def assert_inert(page):
    parsed = Tags()
    parsed.feed(page)
    assert parsed.tags <= PAGE_TAGS, parsed.tags - PAGE_TAGS
    assert not [a for a, _ in parsed.attrs if a.startswith("on") or a in ("href", "src", "x")]
    assert not [v for _, v in parsed.attrs if v and "javascript:" in v.lower() and "PW" not in v]


def test_a_hostile_run_renders_inert_markup(tmp_path):
    """Agent name, model reply, tool output, arguments and error holding markup: only the page's own tags."""
    page = hostile_page(tmp_path).read_text()
    assert_inert(page)
    assert page.count("&lt;/script&gt;&lt;script&gt;") >= 4  # shown, as text, in each place


def test_a_hostile_log_row_renders_inert_markup():
    """A logs.db edited so kind, name, outcome, status and speaker hold markup and quotes still renders inert."""
    rows = [{"run_id": PAYLOAD, "span_id": "s1", "parent_id": None, "kind": "groupchat" + PAYLOAD, "name": PAYLOAD,
             "agent": PAYLOAD, "started": 1.0, "duration": 2.0, "outcome": PAYLOAD, "input_tokens": 0,
             "output_tokens": 0, "data": {"end": {"status": PAYLOAD, "error": PAYLOAD}}},
            {"run_id": "r", "span_id": "s2", "parent_id": "s1", "kind": "turn", "name": PAYLOAD, "agent": None,
             "started": 1.5, "duration": 0.5, "outcome": "ok", "input_tokens": 0, "output_tokens": 0,
             "data": {"arguments": PAYLOAD, "result": {"x": PAYLOAD}}}]
    assert_inert(render_html(rows))


def test_no_script_runs_in_chromium(tmp_path):
    """Headless Chromium opens the hostile page (every fold open): no payload script runs."""
    from tests.runlog.browser import find_chromium, run_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium not installed (.ci/steps/35-chromium.sh installs Debian's chromium package)")
    page = hostile_page(tmp_path)
    page.write_text(page.read_text().replace("<details class='more'>", "<details class='more' open>"))
    dom, err, code = run_chromium(chromium, tmp_path, "--dump-dom", page.as_uri())
    assert code == 0 and "</html>" in dom, err[-500:]
    assert "PWNED" not in dom and not re.search(r"<(script|img|svg|a)\b", dom)
