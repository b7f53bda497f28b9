"""The in-process backend: the default, bounded per namespace."""

import pytest

from zagent import ConfigError, Message


def test_default_memory_is_inprocess(kernel):
    """k.memory() without a name gives the in-process backend."""
    assert type(kernel.memory()).__name__ == "InProcessMemory"


def test_each_namespace_keeps_only_its_newest_messages(kernel):
    """With max_messages=n, a namespace keeps its newest n messages and forgets older ones."""
    mem = kernel.memory("inprocess", max_messages=3)
    mem.add("a/s", [Message.user(str(i)) for i in range(5)])
    mem.add("a/t", Message.user("other"))
    assert [m.content for m in mem.last("a/s", 10)] == ["2", "3", "4"]
    assert mem.count("a/t") == 1


def test_bad_max_messages_is_config_error(kernel):
    """max_messages must be a positive integer."""
    with pytest.raises(ConfigError, match="max_messages"):
        kernel.memory("inprocess", max_messages=0)


def test_semantic_search_is_refused_with_a_pointer(kernel):
    """The in-process backend has no embeddings; semantic=True says which backend has."""
    with pytest.raises(ConfigError, match="sqlite"):
        kernel.memory().search("a/s", "x", semantic=True)


def test_kernels_do_not_share_memory(kernel):
    """Two instances (e.g. of two kernels) hold separate messages: no global state."""
    first, second = kernel.memory(), kernel.memory()
    first.add("a/s", Message.user("only in first"))
    assert second.last("a/s", 5) == []
