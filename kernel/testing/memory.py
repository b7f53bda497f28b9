"""Conformance suite for memory backends (``zagent_register_memory``): subclass ``MemoryBackendTests`` in a class
named ``Test...`` and define ``make_memory(self, tmp_path)``; a backend that keeps no timestamps sets
``supports_time_filters = False``. Each test states one rule of the memory interface (docs/hooks.md). Only zagent
and pytest are imported.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator

import pytest

from .. import ConfigError, Message, ToolCall
from ..contracts import MemoryStore


def _texts(messages: list[Message]) -> list[str]:
    return [m.content or "" for m in messages]


class MemoryBackendTests:
    """Rules every memory backend follows. Override ``make_memory``."""

    supports_time_filters = True

    def make_memory(self, tmp_path: Any) -> MemoryStore:  # pragma: no cover - the subclass provides it
        raise NotImplementedError("return a fresh memory backend instance from make_memory(tmp_path)")

    @pytest.fixture
    def memory(self, tmp_path: Any) -> Iterator[MemoryStore]:
        mem = self.make_memory(tmp_path)
        yield mem
        mem.close()

    # -- add and last -----------------------------------------------------------

    def test_last_returns_newest_messages_oldest_first(self, memory: MemoryStore) -> None:
        """last(ns, n) gives the newest n messages in the order they were added."""
        memory.add("a/s", [Message.user(f"m{i}") for i in range(5)])
        assert _texts(memory.last("a/s", 3)) == ["m2", "m3", "m4"]

    def test_last_with_more_than_stored_returns_all(self, memory: MemoryStore) -> None:
        """Asking for more messages than stored returns all of them."""
        memory.add("a/s", [Message.user("one"), Message.assistant("two")])
        assert _texts(memory.last("a/s", 50)) == ["one", "two"]

    def test_last_zero_is_empty(self, memory: MemoryStore) -> None:
        """last(ns, 0) is an empty list."""
        memory.add("a/s", Message.user("x"))
        assert memory.last("a/s", 0) == []

    def test_unknown_namespace_is_empty(self, memory: MemoryStore) -> None:
        """A namespace never written holds nothing (and is not an error)."""
        assert memory.last("nobody/never", 10) == []

    def test_add_accepts_one_message(self, memory: MemoryStore) -> None:
        """add() takes a single Message as well as a list."""
        memory.add("a/s", Message.user("single"))
        assert _texts(memory.last("a/s", 1)) == ["single"]

    def test_add_accepts_dicts(self, memory: MemoryStore) -> None:
        """add() validates plain dicts into Messages."""
        memory.add("a/s", [{"role": "user", "content": "from a dict"}])
        assert memory.last("a/s", 1) == [Message.user("from a dict")]

    def test_bad_message_is_config_error(self, memory: MemoryStore) -> None:
        """A message that is not a valid Message raises ConfigError and stores nothing."""
        with pytest.raises(ConfigError):
            memory.add("a/s", [Message.user("ok"), {"role": "wizard", "content": "x"}])
        assert memory.last("a/s", 10) == []

    def test_plain_text_instead_of_a_message_is_config_error(self, memory: MemoryStore) -> None:
        """add(ns, "text") is refused with a hint, not stored character by character."""
        with pytest.raises(ConfigError):
            memory.add("a/s", "hello")  # type: ignore[arg-type]  # the wrong type, on purpose
        assert memory.last("a/s", 10) == []

    def test_bad_namespace_is_config_error(self, memory: MemoryStore) -> None:
        """A namespace must be a non-empty string."""
        with pytest.raises(ConfigError):
            memory.add("", Message.user("x"))

    def test_messages_round_trip_whole(self, memory: MemoryStore) -> None:
        """Every field of a Message (tool calls, metadata) comes back unchanged."""
        msg = Message(role="assistant", content="calling", name="bot", metadata={"k": [1, 2.5, None, "v"]},
                      tool_calls=[ToolCall(id="c1", name="add", arguments={"a": 1, "b": {"c": [True]}})])
        tool = Message.tool("3", tool_call_id="c1", name="add")
        memory.add("a/s", [msg, tool])
        assert memory.last("a/s", 2) == [msg, tool]

    # -- namespaces ---------------------------------------------------------------

    def test_namespaces_are_isolated(self, memory: MemoryStore) -> None:
        """Messages of one namespace never show up in another's last() or search()."""
        memory.add("a/one", Message.user("apple pie"))
        memory.add("a/two", Message.user("apple tart"))
        assert _texts(memory.last("a/one", 10)) == ["apple pie"]
        assert _texts(memory.search("a/two", "apple")) == ["apple tart"]

    def test_namespaces_lists_non_empty_ones_sorted(self, memory: MemoryStore) -> None:
        """namespaces() lists every namespace holding messages, sorted."""
        for ns in ("b/x", "a/y", "a/x"):
            memory.add(ns, Message.user("hi"))
        assert memory.namespaces() == ["a/x", "a/y", "b/x"]

    def test_count_counts_one_namespace_or_all(self, memory: MemoryStore) -> None:
        """count(ns) is that namespace's size; count() covers every namespace."""
        memory.add("a/one", [Message.user("1"), Message.user("2")])
        memory.add("a/two", Message.user("3"))
        assert (memory.count("a/one"), memory.count("a/two"), memory.count()) == (2, 1, 3)

    def test_clear_removes_one_namespace_only(self, memory: MemoryStore) -> None:
        """clear(ns) deletes that namespace's messages, returns how many, and keeps the others."""
        memory.add("a/one", [Message.user("1"), Message.user("2")])
        memory.add("a/two", Message.user("3"))
        assert memory.clear("a/one") == 2
        assert memory.last("a/one", 10) == []
        assert _texts(memory.last("a/two", 10)) == ["3"]
        assert memory.namespaces() == ["a/two"]

    # -- search ---------------------------------------------------------------------

    def test_search_finds_messages_by_word(self, memory: MemoryStore) -> None:
        """search() returns the messages containing the query's words, best first."""
        memory.add("a/s", [Message.user("the cat sat"), Message.user("dogs bark loudly"),
                           Message.user("a cat and a dog")])
        found = _texts(memory.search("a/s", "dogs bark"))
        assert found[0] == "dogs bark loudly"
        assert "the cat sat" not in found

    def test_search_respects_limit(self, memory: MemoryStore) -> None:
        """search(limit=n) returns at most n messages."""
        memory.add("a/s", [Message.user(f"note number {i}") for i in range(8)])
        assert len(memory.search("a/s", "note", limit=3)) == 3

    def test_search_without_namespace_covers_all(self, memory: MemoryStore) -> None:
        """search(None, text) looks in every namespace."""
        memory.add("a/one", Message.user("zebra one"))
        memory.add("b/two", Message.user("zebra two"))
        assert sorted(_texts(memory.search(None, "zebra"))) == ["zebra one", "zebra two"]

    def test_search_filters_by_role(self, memory: MemoryStore) -> None:
        """The role filter keeps only messages of that role."""
        memory.add("a/s", [Message.user("weather question"), Message.assistant("weather answer")])
        assert _texts(memory.search("a/s", "weather", role="assistant")) == ["weather answer"]

    def test_search_filters_by_agent_and_session(self, memory: MemoryStore) -> None:
        """agent/session filters match the two halves of 'agent/session' namespaces."""
        memory.add("alice/s1", Message.user("budget plan"))
        memory.add("bob/s1", Message.user("budget review"))
        memory.add("alice/s2", Message.user("budget draft"))
        assert sorted(_texts(memory.search(None, "budget", agent="alice"))) == ["budget draft", "budget plan"]
        assert _texts(memory.search(None, "budget", agent="alice", session="s2")) == ["budget draft"]

    def test_search_filters_by_time_range(self, memory: MemoryStore) -> None:
        """since/until (Unix times, inclusive) bound when messages were added."""
        if not self.supports_time_filters:
            pytest.skip("backend keeps no timestamps")
        memory.add("a/s", Message.user("report early"), at=1000.0)
        memory.add("a/s", Message.user("report middle"), at=2000.0)
        memory.add("a/s", Message.user("report late"), at=3000.0)
        assert _texts(memory.search("a/s", "report", since=1500, until=2000)) == ["report middle"]

    def test_search_with_unknown_filter_is_config_error(self, memory: MemoryStore) -> None:
        """An unknown filter name is refused rather than silently ignored."""
        with pytest.raises(ConfigError):
            memory.search("a/s", "x", colour="blue")

    def test_search_with_empty_text_returns_newest(self, memory: MemoryStore) -> None:
        """Empty text returns the newest messages passing the filters, newest first."""
        memory.add("a/s", [Message.user("first"), Message.assistant("second"), Message.user("third")])
        assert _texts(memory.search("a/s", "", limit=2, role="user")) == ["third", "first"]

    def test_search_with_nothing_matching_is_empty(self, memory: MemoryStore) -> None:
        """A query matching no message returns an empty list."""
        memory.add("a/s", Message.user("hello"))
        assert memory.search("a/s", "xylophone") == []

    def test_search_text_with_punctuation_is_safe(self, memory: MemoryStore) -> None:
        """Query text is words, never query syntax: quotes, operators and brackets are harmless."""
        memory.add("a/s", Message.user("AND OR NOT near"))
        assert _texts(memory.search("a/s", '"AND" (OR) NOT* near:')) == ["AND OR NOT near"]

    # -- async twins ------------------------------------------------------------------

    def test_async_twins_agree_with_sync(self, memory: MemoryStore) -> None:
        """aadd/alast/asearch/anamespaces/aclear behave like their sync twins."""

        async def scenario() -> tuple[list[Message], list[Message], list[str], int]:
            await memory.aadd("a/s", [Message.user("async hello"), Message.assistant("async world")])
            last = await memory.alast("a/s", 1)
            found = await memory.asearch("a/s", "hello")
            names = await memory.anamespaces()
            cleared = await memory.aclear("a/s")
            return last, found, names, cleared

        last, found, names, cleared = asyncio.run(scenario())
        assert _texts(last) == ["async world"]
        assert _texts(found) == ["async hello"]
        assert names == ["a/s"]
        assert cleared == 2
        assert memory.last("a/s", 5) == []
