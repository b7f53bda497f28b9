"""A long reply is parsed off the event loop, and the lenient JSON search is bounded in work.

The parse of a reply past ``OFF_LOOP_CHARS`` runs in a worker thread (the thread is recorded, not timed);
the lenient search decodes at most ``SEARCH_BUDGET`` times the text's length (the characters handed to
the decoder are counted), so a reply of 200,000 nested objects cannot re-decode itself at every start.
bench/hostile_limits.py (``nested_json``) shows the CPU seconds.
"""

from __future__ import annotations

import threading

from zagent.plugins.actions import offloop
from zagent.plugins.parsers import jsontext

from .conftest import qa_spec

OUTPUTS = [{"name": "title", "type": "string"}]


def test_a_long_reply_is_parsed_in_a_worker_thread(kernel):
    """A 200 KB json-mode reply is parsed in a thread other than the event loop's; the answer is read."""
    reply = '{"title": "' + "x" * (offloop.OFF_LOOP_CHARS * 3) + '"}'
    agent = kernel.agent(qa_spec(outputs=OUTPUTS, parse_mode="json"))
    agent.llm = kernel.llm("scripted:m", replies=[reply])
    seen = []
    action = agent.action()
    original = action.parse

    def spy(text):
        seen.append(threading.current_thread())
        return original(text)

    action.parse = spy
    loop_threads = []

    async def run():
        loop_threads.append(threading.current_thread())
        return await agent.acall(question="q")

    import asyncio

    result = asyncio.run(run())
    assert len(result.title) == offloop.OFF_LOOP_CHARS * 3
    assert seen and all(t is not loop_threads[0] for t in seen)


def test_the_lenient_search_of_deeply_nested_text_is_bounded_in_work():
    """200,000 nested objects: the search decodes at most 6 times the text's length (SEARCH_BUDGET is 4)."""
    n = 200_000
    text = 'Here: ' + '{"a": ' * n + "1" + "}" * n
    decoded = []

    def counting(chunk):
        decoded.append(len(chunk))
        return jsontext.decode_big(chunk)

    assert jsontext.first_object(text, {"title"}, decode=counting) is None
    assert sum(decoded) <= 6 * len(text), f"{sum(decoded)} characters decoded"
