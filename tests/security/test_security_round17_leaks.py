"""Round seventeen, leaks the earlier rounds left open (one attack per test).

Attacks tried:

- a structured agent's ``ParseError`` (message masked in round sixteen) keeping the echoed key in its ``raw``,
  ``attempts`` and ``invalid`` attributes, which an app logs to debug a reply: GOT THROUGH -- fixed
"""

import json

import pytest

from zagent import Kernel, ZagentError

pytestmark = pytest.mark.timeout(60)

KEY = "sk-r17-PARSEKEY-14142135623"

QA = {"type": "customize", "name": "QA", "description": "answers", "prompt": "Answer: {question}",
      "inputs": [{"name": "question", "type": "string"}], "outputs": [{"name": "answer", "type": "integer"}],
      "parse_mode": "json"}


def leaked(text, *secrets):
    return [s for s in (secrets or (KEY,)) if s in text or s[:16] in text]


def _answering(content):
    from tests.servers.loopback import Reply

    def reply(request):
        auth = request.headers.get("authorization") or ""
        return Reply.json({"id": "r1", "object": "chat.completion", "model": "gpt-x", "choices": [{
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content(auth)}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    return reply


@pytest.mark.parametrize("content", [
    lambda auth: json.dumps({"answer": auth}),
    lambda auth: '{"%s": 1, "%s": 2}' % (auth, auth),
    lambda auth: f"not json at all: {auth}",
], ids=["wrong-type", "duplicate-key", "no-json"])
def test_a_parse_errors_raw_reply_and_attempts_are_masked(content):
    """Attack (got through): the server echoes the ``Authorization`` it got into a structured agent's reply; the
    ``ParseError``'s message was masked, but ``raw``, ``attempts`` and ``invalid`` kept the key for any app that
    logs them. Defence: those attributes are masked with the model's secrets where the error leaves the agent."""
    from tests.servers.loopback import LoopbackServer

    k = Kernel(["zagent.plugins.openai", "zagent.plugins.parsers", "zagent.plugins.actions"], entry_points=False)
    try:
        with LoopbackServer(_answering(content)) as server:
            agent = k.agent({**QA, "llm_config": {"model": "openai:gpt-4o", "base_url": server.url, "api_key": KEY,
                                                  "max_retries": 0}})
            with pytest.raises(ZagentError) as err:
                agent(question="2+2?")
        assert KEY in (server.requests[0].headers.get("authorization") or "")
    finally:
        k.close()
    chain, found = [], err.value
    while found is not None:
        chain.append(found)
        found = found.__cause__ or found.__context__
    kept = repr([(getattr(e, "raw", ""), getattr(e, "attempts", []), getattr(e, "invalid", {})) for e in chain])
    assert any(getattr(e, "raw", "") for e in chain)  # the reply is still there to debug, only masked
    assert leaked(kept) == []
