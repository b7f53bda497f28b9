"""Progress while a slow local model computes (issue 22, finding 4): the CLI shows the elapsed time and who is
waiting during a model call, not only between calls."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

import pytest

from tests.servers.openai_server import completion

from .conftest import EXAMPLES


def _slow(seconds, reply):
    def answer(request):
        time.sleep(seconds)  # the server computing; the client waits
        return reply
    return answer


def test_cli_shows_elapsed_time_while_the_model_call_runs(server, zagent, monkeypatch):
    """A 1.5 s reply with a 0.2 s interval: stderr gets 'waiting for the model' lines naming the agent and step."""
    monkeypatch.setenv("ZAGENT_PROGRESS_INTERVAL", "0.2")
    server.then(_slow(1.5, completion("## answer\nok")))
    code, out, err = zagent("run", str(EXAMPLES / "qa_agent.json"), "--input", "question=q")
    assert code == 0 and out.strip() == "ok"
    waiting = [line for line in err.splitlines() if "waiting for the model" in line]
    assert len(waiting) >= 2
    assert "Answerer, step 1" in waiting[-1] and waiting[-1].endswith(" s")


def test_quiet_turns_the_ticker_off(server, zagent, monkeypatch):
    """--quiet: no waiting lines."""
    monkeypatch.setenv("ZAGENT_PROGRESS_INTERVAL", "0.1")
    server.then(_slow(0.6, completion("## answer\nok")))
    code, _out, err = zagent("run", str(EXAMPLES / "qa_agent.json"), "--input", "question=q", "--quiet")
    assert code == 0 and "waiting" not in err


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _event(kind, agent="A", **data):
    return SimpleNamespace(type=kind, run_id="r", agent=agent, data=data)


def test_tty_ticker_rewrites_one_line_and_erases_it_when_the_reply_comes():
    """On a terminal the line is rewritten in place (\\r) and erased at llm_end; node names are shown."""
    from zagent.plugins.cliticker import WaitTicker

    stream = _Tty()
    ticker = WaitTicker(stream)
    assert ticker.tty and ticker.interval == 1.0
    ticker.zagent_event(_event("node_start", node="summarize"))
    ticker.zagent_event(_event("step_start", step=2))
    ticker.zagent_event(_event("llm_start"))
    started = ticker._calls[("r", "A")]
    text = ticker.tick(started + 12)
    assert text == "… waiting for the model: A, step 2: 12 s (running: summarize)"
    ticker.zagent_event(_event("llm_end"))
    assert stream.getvalue() == "\r\x1b[K" + text + "\r\x1b[K"
    assert ticker.tick(started + 13) is None


def test_timeout_error_text_names_the_cli_flag():
    """The CLI's text for a ProviderTimeout names --timeout, ZAGENT_TIMEOUT and max_tokens."""
    from zagent.errors import ProviderTimeout
    from zagent.plugins.clierrors import describe

    text = describe(ProviderTimeout("openai did not answer in time", provider="openai"))
    assert "--timeout SECONDS" in text and "ZAGENT_TIMEOUT" in text and "max_tokens" in text


@pytest.mark.timeout(60)
def test_timeout_error_names_the_cli_flag(server, zagent, monkeypatch):
    """A model call that outlasts the read timeout ends in exit 1 naming --timeout and ZAGENT_TIMEOUT."""
    from tests.servers.loopback import Reply

    monkeypatch.setenv("ZAGENT_TIMEOUT", "0.5")
    server.then(*[Reply(hang=True)] * 4)
    code, out, err = zagent("run", str(EXAMPLES / "qa_agent.json"), "--input", "question=q",
                            "--quiet", "--timeout", "0.5")
    assert code == 1 and out == ""
    assert "--timeout SECONDS" in err and "ZAGENT_TIMEOUT" in err
