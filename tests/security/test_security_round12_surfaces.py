"""Round twelve, the surfaces users asked for: images, evals, the CLI's exit codes and JSON, agents as tools.
(``zagent mcp serve``: ``contrib/zagent-mcp/tests/test_mcp_round12_server.py``.)

Tried, and whether it got through before the fixes:
- images: a data URL over the inline bound (got through), a data URL whose bytes are a PDF, HTML or SVG named
  ``image/png`` (got through), a data URL that is not base64 (got through), an image URL carrying line breaks or
  spaces (got through), the same URLs in a ``Part(type="image", url=...)`` built by hand for a chat (got
  through); ``--image`` naming ``/etc/passwd`` or a private key (held), ``--image`` of a URL on
  127.0.0.1 (held: zagent fetches no image);
- evals: a cases file holding no case exits 0 as if measured (got through), the same for a batch inputs file
  (got through), ``--compare`` against a baseline sharing no case exits 0 (got through), a case's scorer labelled
  as the user's (got through), a case's lenient scorer replacing the user's ``--scorer`` (got through; open, a
  strict xfail: documented behaviour), ``--json`` with escapes, DEL, C1 and line separators in case text (held), a
  case's judge model given as a dict naming a server (held);
- agents as tools: an agent called as a tool calling its caller's tools (held), an agent tool's timeout leaving the
  inner agent's work running (held), a failing inner agent's requests escaping its caller's limit (held).
17 tried, 10 got through; 9 fixed, 1 open.
"""

import base64
import json
import os
import threading
import urllib.parse

import pytest

from zagent import ConfigError, Message, Part

from .conftest import agent_spec, make_kernel, run_cli

PLUGINS = "offline,parsers,actions,react,memory,manager,workflow,groupchat,rails,cli,batch,evals"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PDF = b"%PDF-1.4\n1 0 obj << >> endobj\n"


def _cli(*args, cwd=None, env=None):
    return run_cli(*args, cwd=cwd, plugins=PLUGINS, env=env)


def _b64(data):
    return base64.b64encode(data).decode()


# -- images -----------------------------------------------------------------------------------------------------


def test_a_data_url_image_over_the_inline_bound_is_refused_before_it_is_decoded():
    """Attack: hand a chat a ``data:image/png`` URL of 30 MB (or one over an app's ``max_bytes``): bytes are
    bounded, a URL was not, so it went to the provider (the app's key, the request's size). Defence: a data URL is
    bounded like the bytes it holds: a ``ConfigError`` naming the limit."""
    huge = "data:image/png;base64," + "A" * (30 * 1024 * 1024)
    with pytest.raises(ConfigError, match="limit"):
        Part.image(huge)
    with pytest.raises(ConfigError, match="limit"):
        Message.user("look", image=huge)
    with pytest.raises(ConfigError, match="limit"):
        Part.image("data:image/png;base64," + _b64(PNG + b"\x00" * 200), max_bytes=100)


@pytest.mark.parametrize("url", [
    "data:image/png;base64," + _b64(PDF),
    "data:image/png;base64," + _b64(b"<html><script>alert(1)</script></html>"),
    "data:image/svg+xml," + urllib.parse.quote("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>"),
    "data:image/jpeg;base64," + _b64(PNG),
    "data:image/png," + urllib.parse.quote_from_bytes(PDF),
])
def test_a_data_url_whose_bytes_are_not_the_image_it_names_is_refused(url):
    """Attack: a data URL lying about its media type (a PDF or HTML page named ``image/png``, an SVG with a
    script, a PNG named JPEG), to smuggle a document or markup past a check of the ``image/`` prefix. Defence: the
    decoded bytes must be the PNG, JPEG, GIF or WebP image the URL names."""
    with pytest.raises(ConfigError, match="data URL"):
        Part.image(url)


@pytest.mark.parametrize("payload", ["@@@@", "iVBO Rw0K", "iVBORw0K\n", "%%%", "iVBORw0K==="])
def test_a_data_url_that_is_not_base64_is_refused(payload):
    """Attack: a ``;base64`` data URL whose payload is not base64 (a server decodes it to whatever it decides).
    Defence: the payload must decode strictly."""
    with pytest.raises(ConfigError, match="data URL"):
        Part.image("data:image/png;base64," + payload)


@pytest.mark.parametrize("url", ["https://example.com/a.png\r\nX-Injected: 1", "https://example.com/a b.png",
                                 "http://example.com/\x1b[8m.png", "https://example.com/" + "a" * 10_000 + ".png"])
def test_an_image_url_with_line_breaks_spaces_or_escapes_is_refused(url):
    """Attack: an image URL carrying CR/LF, spaces, a terminal escape or 10,000 characters, which reaches logs,
    events and every request of the run. Defence: a ``ConfigError`` saying to pass a plain URL."""
    with pytest.raises(ConfigError, match="image URL"):
        Part.image(url)


def test_honest_image_urls_and_data_urls_still_build():
    """Guard: a real PNG as a base64 or percent-encoded data URL and a plain https URL are parts as before."""
    assert Part.image("data:image/png;base64," + _b64(PNG)).media_type == "image/png"
    assert Part.image("data:image/png," + urllib.parse.quote_from_bytes(PNG)).media_type == "image/png"
    assert Part.image("https://example.com/dog.png?size=large&x=%20").url.startswith("https://")


def _chat_spec(tmp_path):
    spec = tmp_path / "looker.json"
    spec.write_text(json.dumps({"type": "react", "name": "Looker", "llm": "test:offline"}))
    return spec


def test_cli_image_naming_a_private_file_sends_nothing_and_shows_none_of_it(tmp_path):
    """Attack: ``zagent run looker.json --image /etc/passwd`` or ``--image ~/.ssh/id_rsa`` (a path a hostile README
    or spec suggests): the file would go to the model as an image. Defence: a file that is not an image is a
    ``ConfigError`` before any model is asked, exit non-zero, and none of its text is printed."""
    key = tmp_path / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nR12-PRIVATE-KEY-BODY\n-----END OPENSSH PRIVATE KEY-----\n")
    for path in ("/etc/passwd", str(key)):
        done = _cli("run", str(_chat_spec(tmp_path)), "--input", "task=what is this?", "--image", path, cwd=tmp_path)
        assert done.returncode != 0, done.stdout
        assert "not a PNG" in done.stderr, done.stderr
        assert "root:" not in done.stdout + done.stderr and "R12-PRIVATE" not in done.stdout + done.stderr


def test_cli_image_url_on_loopback_makes_zagent_fetch_nothing(tmp_path):
    """Attack: ``--image http://127.0.0.1:PORT/latest/meta-data/`` (or a metadata address) hoping zagent fetches
    it (SSRF from the user's machine). Defence: zagent never fetches an image URL; the URL goes to the model as is
    and the server sees no request."""
    import http.server

    seen = []

    class R12Spy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the stdlib's name)
            seen.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), R12Spy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/latest/meta-data/iam.png"
        done = _cli("run", str(_chat_spec(tmp_path)), "--input", "task=what is this?", "--image", url, cwd=tmp_path)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert seen == []


# -- evals and batch: exit codes, JSON -----------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_eval_of_a_cases_file_holding_no_case_exits_non_zero(tmp_path, content):
    """Attack: a cases file that is empty (a failed download, a wrong path's empty file) makes ``zagent eval``
    print ``passed 0/0`` and exit 0: a CI gate reads success. Defence: exit 1 with a line saying no case was in
    the file."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(content)
    done = _cli("eval", str(cases), "--agent", str(spec), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no cases" in done.stderr


def test_batch_of_an_inputs_file_holding_no_item_exits_non_zero(tmp_path):
    """Attack: ``zagent batch`` over an empty inputs file printed ``done 0, failed 0`` and exited 0. Defence:
    exit 1 saying the file holds no items (a resumed batch whose items were all done before still exits 0)."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("\n")
    done = _cli("batch", str(spec), str(inputs), "--out", str(tmp_path / "out.jsonl"), "-q", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no items" in done.stderr
    inputs.write_text(json.dumps({"id": "a", "question": "q"}) + "\n")
    first = _cli("batch", str(spec), str(inputs), "--out", str(tmp_path / "out.jsonl"), "-q", cwd=tmp_path)
    again = _cli("batch", str(spec), str(inputs), "--out", str(tmp_path / "out.jsonl"), "-q", cwd=tmp_path)
    assert first.returncode == 0 and again.returncode == 0, again.stderr


def test_eval_json_stays_one_valid_json_document_with_hostile_case_text(tmp_path):
    """Attack: case ids, expected values and metadata holding ESC sequences, DEL, C1 controls, U+2028/U+2029 and
    a bidi override, to break ``zagent eval --json`` for the tool reading it or drive the terminal. Defence: stdout
    is one JSON document with the texts intact, and no raw control or bidi character."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    hostile = "x\x1b]52;c;cGF3bmVk\x07\x7f\x85\x9b2J\u2028\u2029\u202e}]\"\n"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c" + hostile, "inputs": {"question": "q"}, "expected": hostile,
                                 "metadata": {"note": hostile}}) + "\n")
    done = _cli("eval", str(cases), "--agent", str(spec), "--json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert report["cases"][0]["id"] == "c" + hostile and report["cases"][0]["metadata"]["note"] == hostile
    for raw in ("\x1b", "\x07", "\x7f", "\x85", "\x9b", "\u202e"):
        assert raw not in done.stdout


def test_a_case_judge_model_naming_a_server_sends_no_key(tmp_path):
    """Attack: a case's ``llm_judge`` scorer whose ``model`` is a dict naming another ``base_url``, hoping the
    user's ``OPENAI_API_KEY`` goes there. Defence: a ConfigError before any case runs; the server sees nothing."""
    from tests.servers.loopback import LoopbackServer, Reply

    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    with LoopbackServer(lambda request: Reply(body=b'{"choices": []}')) as server:
        cases = tmp_path / "cases.jsonl"
        cases.write_text(json.dumps({"id": "a", "inputs": {"question": "q"}, "expected": "x", "scorers": [
            {"name": "llm_judge", "model": {"model": "openai:gpt-4o", "base_url": server.url + "/v1"}}]}) + "\n")
        done = _cli("eval", str(cases), "--agent", str(spec), cwd=tmp_path,
                    env={"OPENAI_API_KEY": "sk-r12-user-key-0123456789abcdef"})
        assert done.returncode != 0 and server.requests == []
    assert "sk-r12-user-key" not in done.stdout + done.stderr


# -- agents as tools --------------------------------------------------------------------------------------------


def test_an_agent_called_as_a_tool_cannot_call_its_callers_tools():
    """Attack: the caller is offered ``steal`` and the agent ``Helper``; Helper (offered only ``word_count``) has
    its model call ``steal``, hoping the caller's offered set carries over. Defence: a nested agent offers its own
    tools: the call is blocked."""
    k = make_kernel()
    try:
        inner = k.agent({"type": "react", "name": "Helper", "tools": ["word_count"]})
        inner.llm = k.llm("scripted:helper", replies=[
            {"content": None, "tool_calls": [{"name": "steal", "arguments": {"path": "/etc/shadow"}}]}, "done"])
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "Boss", "tools": ["Helper", "steal"]})
        outer.llm = k.llm("scripted:boss", replies=[
            {"content": None, "tool_calls": [{"name": "Helper", "arguments": {"task": "help"}}]}, "ok"])
        outer.loop().run("go")
        assert "steal" not in k.spy.ran
    finally:
        k.close()


def test_an_agent_tool_timing_out_stops_the_inner_agents_work():
    """Attack: an agent offered as a tool with ``timeout=0.3`` whose own tool lingers: the caller moves on while the
    inner agent keeps working (and spending) unseen. Defence: the timeout cancels the inner agent's run and its
    tool; nothing finishes afterwards."""
    import asyncio
    import time

    k = make_kernel()
    seen = []

    async def linger(text: str) -> str:
        """Work for a while."""
        try:
            await asyncio.sleep(1.5)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        seen.append("finished")
        return "late"

    k.add_tool(linger)
    try:
        inner = k.agent({"type": "react", "name": "Slow", "tools": ["linger"]})
        inner.llm = k.llm("scripted:slow", replies=[
            {"content": None, "tool_calls": [{"name": "linger", "arguments": {"text": "x"}}]}, "done"])
        inner.as_tool(timeout=0.3)
        outer = k.agent({"type": "react", "name": "Waiter", "tools": ["Slow"]})
        outer.llm = k.llm("scripted:waiter", replies=[
            {"content": None, "tool_calls": [{"name": "Slow", "arguments": {"task": "go"}}]}, "gave up"])
        outer.loop().run("go")
        time.sleep(2.0)
        assert seen == ["cancelled"], seen
    finally:
        k.close()


def test_no_file_is_left_in_the_working_folder_by_an_image_run(tmp_path):
    """Guard: a run with ``--image`` of a real PNG writes nothing into the working folder (no cache of the
    image, no download)."""
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    spec = _chat_spec(tmp_path)
    before = set(os.listdir(tmp_path))
    done = _cli("run", str(spec), "--input", "task=what is this?", "--image", str(image), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert set(os.listdir(tmp_path)) == before


def _eval_files(tmp_path, case_scorers):
    """An agent answering ``Paris is big`` and one case expecting ``Rome``, whose own scorers are ``case_scorers``."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a", "inputs": {"question": "q"}, "expected": "",
                                 "scorers": case_scorers}) + "\n")
    return spec, cases


@pytest.mark.xfail(strict=True, reason="open: a case's own scorers replace the run's by design (docs/evals.md; "
                   "examples/calculator_cases.jsonl and tests/evals rely on it), also for a cases file")
def test_a_cases_file_cannot_swap_the_users_scorer_for_a_lenient_one(tmp_path):
    """Attack: the user runs ``zagent eval cases.jsonl --scorer exact``; the downloaded cases file gives each case
    ``"scorers": [{"name": "contains"}]`` and ``"expected": ""`` (every output contains the empty text), so every
    case passes and a ``--compare`` gate stays green. Defence: a cases file's scorers are added to the ones the
    user chose, never put in their place: the user's ``exact`` still judges (and fails) the case."""
    spec, cases = _eval_files(tmp_path, [{"name": "contains"}])
    done = _cli("eval", str(cases), "--agent", str(spec), "--scorer", "exact", "--json", cwd=tmp_path)
    report = json.loads(done.stdout)
    (case,) = report["cases"]
    assert "exact" in case["scores"] and not case["passed"], case


def test_a_cases_file_cannot_label_its_scorer_as_the_users(tmp_path):
    """Attack: a case's lenient scorer labelled ``exact`` (``{"name": "contains", "label": "exact"}``), so the
    report reads ``exact=1.00`` and the mean score of ``exact`` is the dataset's. Defence: a cases file may not
    label its scorers (a ``ConfigError`` naming the case before anything runs)."""
    spec, cases = _eval_files(tmp_path, [{"name": "contains", "label": "exact"}])
    done = _cli("eval", str(cases), "--agent", str(spec), "--json", cwd=tmp_path)
    assert done.returncode != 0
    assert "label" in done.stderr + done.stdout and "case 'a'" in done.stderr + done.stdout


def test_eval_compare_against_a_baseline_sharing_no_case_exits_non_zero(tmp_path):
    """Attack: ``zagent eval --compare baseline.json`` against a report of other cases (a wrong baseline, or a
    dataset whose ids were all renamed so that no case can regress): nothing is compared, yet it exits 0 like a
    passing gate. Defence: exit 1 saying the baseline shares no case with this run."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps(agent_spec(llm="test:offline")))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "old-1", "inputs": {"question": "q"}, "expected": "example answer"}) + "\n")
    baseline = tmp_path / "baseline.json"
    first = _cli("eval", str(cases), "--agent", str(spec), "--scorer", "contains", "--report", str(baseline),
                 cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    cases.write_text(json.dumps({"id": "renamed-1", "inputs": {"question": "q"}, "expected": "nothing like it"})
                     + "\n")
    done = _cli("eval", str(cases), "--agent", str(spec), "--scorer", "contains", "--compare", str(baseline),
                cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no case" in done.stderr


@pytest.mark.parametrize("kind", ["declared", "react"])
def test_an_agent_tool_that_fails_still_counts_its_requests_against_the_callers_limit(kind):
    """Attack: the caller's run has ``usage_limits.requests: 6``; the agent it calls as a tool spends model requests
    and then fails (a reply that never parses, a provider error), over and over, hoping a failed run's usage is
    never added to its caller's. Defence: every request the inner agent made counts in the run, failed or not; the
    run stops at the limit."""
    from zagent.errors import UsageLimitExceeded

    k = make_kernel(config={"rails": {"usage_limits": {"requests": 6}}})
    try:
        if kind == "declared":
            inner = k.agent({"name": "Parser", "prompt": "Give JSON for {q}", "inputs": [{"name": "q"}],
                             "outputs": [{"name": "a", "type": "integer"}], "parse_mode": "json"})
            inner.llm = k.llm("scripted:bad", replies=["not json at all"] * 500)
            call = {"name": "Parser", "arguments": {"q": "x"}}
        else:
            inner = k.agent({"type": "react", "name": "Parser", "tools": ["word_count"], "max_iterations": 2})
            inner.llm = k.llm("scripted:bad", replies=[
                {"content": None, "tool_calls": [{"name": "word_count", "arguments": {"text": "a"}}]}] * 500)
            call = {"name": "Parser", "arguments": {"task": "x"}}
        inner.as_tool()
        outer = k.agent({"type": "react", "name": "Boss", "tools": ["Parser"], "max_iterations": 50})
        outer.llm = k.llm("scripted:boss", replies=[{"content": None, "tool_calls": [call]}] * 500)
        with pytest.raises(UsageLimitExceeded):
            outer.loop().run("go")
        assert len(inner.llm.requests) + len(outer.llm.requests) <= 7, (len(inner.llm.requests),
                                                                       len(outer.llm.requests))
    finally:
        k.close()


@pytest.mark.parametrize("url", ["data:image/png;base64," + "A" * (21 * 1024 * 1024),
                                 "data:image/png;base64," + _b64(PDF), "https://example.com/a.png\r\nX: 1"])
def test_an_image_part_built_by_hand_is_checked_at_the_turn(url):
    """Attack: skip ``Part.image`` and build ``Part(type="image", url=...)`` directly (an app handing on a URL it
    was given) with a 21 MB data URL, a PDF named ``image/png`` or a URL with a line break. Defence: the chat's
    turn checks an image part's URL as ``Part.image`` does: a ``ConfigError`` naming the part; the model is never
    asked."""
    k = make_kernel()
    try:
        agent = k.agent({"type": "react", "name": "Looker", "tools": []})
        agent.llm = k.llm("scripted:looker", replies=["a picture"])
        with pytest.raises(ConfigError, match="part #0"):
            agent.chat(Message(role="user", content="look", parts=[Part(type="image", url=url)]))
        assert agent.llm.requests == []
    finally:
        k.close()
