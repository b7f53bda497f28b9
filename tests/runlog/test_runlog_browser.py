"""The timeline page in a real headless Chromium: the bars render, match the run, and a screenshot is saved."""

import re

import pytest

from zagent import Kernel
from zagent.plugins.cli import main

from .browser import find_chromium, read_png, run_chromium
from .conftest import PLUGINS, run_scenario

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/steps/35-chromium.sh installs "
                                                          "Debian's chromium package)")
LLM_ORANGE, TOOL_GREEN = (0xE6, 0x91, 0x38), (0x6A, 0xA8, 0x4F)


def page_for(make_logged, log_path, tmp_path, scenario):
    run_scenario(make_logged, scenario)
    out = tmp_path / f"{scenario}.html"
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(["logs", "show", "latest", "--db", log_path, "--html", str(out)], kernel=k) == 0
    finally:
        k.close()
    return out


def near(pixel, colour, slack=40):
    return all(abs(p - c) <= slack for p, c in zip(pixel, colour))


def test_chromium_renders_one_bar_per_llm_and_tool_call_of_a_react_run(make_logged, log_path, tmp_path):
    """Chromium's DOM of the ReAct page has 2 LLM and 2 tool bars; the screenshot shows both colours painted."""
    page = page_for(make_logged, log_path, tmp_path, "react_two_tools")
    dom, err, code = run_chromium(CHROMIUM, tmp_path, "--dump-dom", page.as_uri())
    assert code == 0 and "</html>" in dom, err[-500:]
    kinds = re.findall(r'class="bar bar-(\w+)', dom)
    assert kinds.count("llm") == 2 and kinds.count("tool") == 2
    shot = tmp_path / "react.png"
    _out, err, code = run_chromium(CHROMIUM, tmp_path, "--window-size=1400,600", f"--screenshot={shot}", page.as_uri())
    assert code == 0 and shot.exists(), err[-500:]
    width, height, rows = read_png(shot)
    pixels = [p for row in rows for p in row]
    assert width == 1400 and sum(near(p, LLM_ORANGE, 12) for p in pixels) > 100
    assert sum(near(p, TOOL_GREEN, 12) for p in pixels) > 100


def test_chromium_renders_parallel_workflow_nodes_and_group_chat_turns(make_logged, log_path, tmp_path):
    """The workflow page has three node bars and three LLM bars; the chat page two turn bars, one per speaker."""
    wf = page_for(make_logged, log_path, tmp_path, "three_node_workflow")
    dom, err, code = run_chromium(CHROMIUM, tmp_path, "--dump-dom", wf.as_uri())
    assert code == 0, err[-500:]
    assert sorted(re.findall(r'class="bar bar-node[^"]*" data-kind="node" data-name="(\w+)"', dom)) == [
        "left", "outline", "right"]
    assert len(re.findall(r'class="bar bar-llm', dom)) == 3
    chat = page_for(make_logged, log_path, tmp_path, "group_chat")
    dom, err, code = run_chromium(CHROMIUM, tmp_path, "--dump-dom", chat.as_uri())
    assert re.findall(r'data-kind="turn" data-name="(\w+)"', dom) == ["A", "B"]
    shot = tmp_path / "chat.png"
    run_chromium(CHROMIUM, tmp_path, "--window-size=1400,500", f"--screenshot={shot}", chat.as_uri())
    assert shot.exists() and read_png(shot)[0] == 1400


def _failed_react_run(log_path):
    """A ReAct run whose model server refuses connections: it fails with a ProviderError."""
    from zagent.plugins.react.loop import ReActLoop

    k = Kernel(PLUGINS + ["zagent.plugins.openai"], entry_points=False, strict=True, config={"log": log_path})
    llm = k.llm("openai:gpt-test", base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(Exception):
        ReActLoop(kernel=k, llm=llm, tools=[], agent="helper", allow_clarification=False).run("What is 2+3?")
    k.close()


def visible_text(page, tmp_path):
    """What Chromium lays out as visible text (``innerText``: no hover, nothing opened), read back with --dump-dom."""
    probe = tmp_path / f"visible-{page.name}"
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.body.setAttribute('data-visible', document.body.innerText)</script></body>"))
    dom, err, code = run_chromium(CHROMIUM, tmp_path, "--dump-dom", probe.as_uri())
    assert code == 0, err[-500:]
    found = re.search(r'data-visible="([^"]*)"', dom)
    assert found, dom[-500:]
    import html

    return html.unescape(found.group(1))


def test_a_failed_react_run_shows_its_outcome_and_error_text_without_hovering(make_logged, log_path, tmp_path):
    """The timeline of a failed ReAct run shows 'failed' in its header and the error's text on the page."""
    _failed_react_run(log_path)
    page = tmp_path / "failed.html"
    k = Kernel(PLUGINS, entry_points=False, strict=True)
    try:
        assert main(["logs", "show", "latest", "--db", log_path, "--html", str(page)], kernel=k) == 0
    finally:
        k.close()
    text = visible_text(page, tmp_path)
    assert "failed" in text.split("\n")[0]
    assert "could not reach openai at http://127.0.0.1:9/v1" in text
    shot = tmp_path / "failed.png"
    _out, err, code = run_chromium(CHROMIUM, tmp_path, "--window-size=1400,600", f"--screenshot={shot}", page.as_uri())
    assert code == 0 and shot.exists(), err[-500:]


def test_model_and_tool_steps_open_to_their_prompt_reply_arguments_and_result(make_logged, log_path, tmp_path):
    """Folded, a step shows only its summary; the page holds the prompt, reply, arguments and result to open."""
    page = page_for(make_logged, log_path, tmp_path, "react_two_tools")
    text = visible_text(page, tmp_path)
    assert re.search(r"prompt \(\d+ messages\) and reply", text) and "arguments and result" in text
    assert "the quick brown fox" not in text  # folded until opened
    opened = tmp_path / "opened.html"
    opened.write_text(page.read_text().replace("<details class='more'>", "<details class='more' open>"))
    text = visible_text(opened, tmp_path)
    assert "[user] How many words are in 'the quick brown fox'?" in text and "result: 4" in text
