"""A batch against a real loopback OpenAI-compatible server: the provider's retry options apply to every item."""

import pytest
from zagent import Kernel

from tests.servers.loopback import Reply
from tests.servers.openai_server import OpenAIServer

KEY = "sk-batch-test"


def _error(status, message, **kw):
    return Reply.json({"error": {"message": message, "type": "x"}}, status, **kw)


@pytest.fixture
def server():
    with OpenAIServer(key=KEY) as s:
        yield s


def _spec(server, **llm):
    return {"name": "Echo", "prompt": "Say {text}", "inputs": [{"name": "text"}], "outputs": [{"name": "reply"}],
            "parse_mode": "str", "llm_config": {"model": "openai:gpt-test", "base_url": server.url, "api_key": KEY,
                                                "retry_backoff": 0.001, **llm}}


def test_429_with_retry_after_is_waited_out_per_item(server):
    """429s with Retry-After are retried by the provider (max_retries); every item still succeeds."""
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.batch"],
               entry_points=False)
    server.then(*[_error(429, "slow down", headers={"retry-after": "0"})] * 2)
    report = k.batch(_spec(server, max_retries=2), [{"text": f"t{i}"} for i in range(3)], concurrency=1)
    k.close()
    assert [r["ok"] for r in report.results] == [True, True, True]
    assert report.results[0]["output"]["reply"].startswith("echo: Say t0")
    assert len(server.requests) == 5
    assert report.summary.input_tokens == 3 * 11


def test_rate_limit_past_max_retries_fails_that_item_only(server):
    """A 429 the provider gives up on is that item's RateLimitError result; the other items run."""
    k = Kernel(plugins=["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions",
                        "zagent.plugins.batch"],
               entry_points=False)
    server.then(_error(429, "slow down", headers={"retry-after": "0"}))
    report = k.batch(_spec(server, max_retries=0), [{"text": "a"}, {"text": "b"}], concurrency=1)
    k.close()
    assert report.results[0]["error"]["type"] == "RateLimitError" and "slow down" in report.results[0]["error"]["message"]
    assert report.results[1]["ok"]
