"""Full-text recall of the sqlite backend: ranking, and words common to most messages."""

from zagent import Message


def test_rarer_words_rank_higher(kernel, db_path):
    """bm25: a message sharing the query's rare word ranks above one sharing only a common word."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", [Message.user(f"status update number {i}") for i in range(30)])
    mem.add("a/s", Message.user("status of the zeppelin"))
    assert mem.search("a/s", "zeppelin status", limit=1)[0].content == "status of the zeppelin"


def test_very_common_words_do_not_swamp_a_query(kernel, db_path):
    """A word found in most messages (past common_ratio and common_min) is left out of a longer query."""
    mem = kernel.memory("sqlite", path=db_path, common_min=10)
    mem.add("a/s", [Message.user(f"hello there {i}") for i in range(50)])
    mem.add("a/s", Message.user("the quokka smiled"))
    assert [m.content for m in mem.search("a/s", "hello quokka")] == ["the quokka smiled"]


def test_a_query_of_only_common_words_still_finds_messages(kernel, db_path):
    """When every query word is common, the rarest is kept and recall is not empty."""
    mem = kernel.memory("sqlite", path=db_path, common_min=10)
    mem.add("a/s", [Message.user(f"hello there {i}") for i in range(50)])
    assert len(mem.search("a/s", "hello there", limit=5)) == 5


def test_word_made_rare_by_clearing_is_searchable_again(kernel, db_path):
    """After clear(), a word that was common but is now rare is matched again."""
    mem = kernel.memory("sqlite", path=db_path, common_min=10)
    mem.add("noise/s", [Message.user(f"hello {i}") for i in range(50)])
    mem.add("a/s", [Message.user("hello friend"), Message.user("xylophone")])
    assert [m.content for m in mem.search("a/s", "hello xylophone")] == ["xylophone"]
    mem.clear("noise/s")
    assert sorted(m.content for m in mem.search("a/s", "hello xylophone")) == ["hello friend", "xylophone"]


def test_small_stores_never_leave_words_out(kernel, db_path):
    """Below common_min messages every query word counts, however frequent."""
    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", [Message.user("hello friend"), Message.user("xylophone"), Message.user("apple")])
    assert sorted(m.content for m in mem.search("a/s", "hello xylophone")) == ["hello friend", "xylophone"]


def test_tool_call_names_are_searchable(kernel, db_path):
    """A message's tool-call names are indexed with its text."""
    from zagent import ToolCall

    mem = kernel.memory("sqlite", path=db_path)
    mem.add("a/s", Message.assistant(None, [ToolCall(id="1", name="get_weather", arguments={})]))
    assert len(mem.search("a/s", "get_weather")) == 1


def test_query_words_are_held_to_the_postings_budget_rarest_first(kernel, db_path):
    """Past max_postings, the commonest kept words are left out, the rarest first kept; the rarest always stays."""
    mem = kernel.memory("sqlite", path=db_path, common_min=10, common_ratio=0.9, max_postings=30)
    mem.add("a/s", [Message.user(f"alpha filler {i}") for i in range(40)])
    mem.add("a/s", [Message.user(f"beta filler {i}") for i in range(20)])
    mem.add("a/s", [Message.user(f"other filler {i}") for i in range(40)])
    mem.add("a/s", Message.user("gamma"))
    conn = mem.db.connection()
    assert mem.common.prune(conn, ["alpha", "beta", "gamma"]) == ["beta", "gamma"]
    assert mem.common.prune(conn, ["alpha", "other"]) == ["alpha"]  # over budget alone: the rarest stays
    assert [m.content for m in mem.search("a/s", "alpha beta gamma", limit=1)] == ["gamma"]
    mem.close()


def test_bad_max_postings_is_refused(kernel, db_path):
    """max_postings must be an integer >= 1 or None."""
    import pytest

    from zagent import ConfigError

    for bad in (0, -5, 2.5, True, "10"):
        with pytest.raises(ConfigError, match="max_postings"):
            kernel.memory("sqlite", path=db_path, max_postings=bad)
