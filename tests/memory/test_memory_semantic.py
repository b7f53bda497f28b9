"""Retrieval by meaning: an embedder registered through zagent_register_embedders ranks by cosine."""

import asyncio

import pytest

from zagent import ConfigError, Kernel, Message

TOPICS = {"fruit": ("apple", "banana", "pear"), "vehicle": ("car", "truck", "bus"), "weather": ("rain", "sun")}


class TopicEmbedder:
    """Maps text to a vector of topic hits, so 'banana' is near 'apple' without sharing a word."""

    def __init__(self):
        self.calls = 0

    async def aembed(self, texts):
        self.calls += 1
        return [[float(sum(w in t.lower() for w in words)) for words in TOPICS.values()] for t in texts]


class EmbedderPlugin:
    @staticmethod
    def zagent_register_embedders(register):
        register("topics", TopicEmbedder)


@pytest.fixture
def semantic_kernel():
    k = Kernel(plugins=["zagent.plugins.memory", EmbedderPlugin()], entry_points=False)
    yield k
    k.close()


def test_semantic_search_ranks_by_meaning(semantic_kernel, db_path):
    """With k.embedder(), search(semantic=True) finds related messages that share no word."""
    mem = semantic_kernel.memory("sqlite", path=db_path, embedder=semantic_kernel.embedder())
    mem.add("a/s", [Message.user("I ate an apple"), Message.user("the truck broke down"),
                    Message.user("rain all day")])
    assert [m.content for m in mem.search("a/s", "banana", limit=1, semantic=True)] == ["I ate an apple"]


def test_semantic_search_applies_filters(semantic_kernel, db_path):
    """Filters (role, namespace) apply to semantic search as to full-text search."""
    mem = semantic_kernel.memory("sqlite", path=db_path, embedder=semantic_kernel.embedder())
    mem.add("a/s", [Message.user("apple pie"), Message.assistant("pear tart")])
    mem.add("b/s", Message.user("banana bread"))
    found = mem.search("a/s", "fruit banana", semantic=True, role="assistant")
    assert [m.content for m in found] == ["pear tart"]


def test_async_add_and_search_use_the_embedder(semantic_kernel, db_path):
    """aadd embeds stored text and asearch(semantic=True) embeds the query, both awaited."""
    embedder = semantic_kernel.embedder()
    mem = semantic_kernel.memory("sqlite", path=db_path, embedder=embedder)

    async def scenario():
        await mem.aadd("a/s", [Message.user("bus stop"), Message.user("sun hat")])
        return await mem.asearch("a/s", "car", limit=1, semantic=True)

    assert [m.content for m in asyncio.run(scenario())] == ["bus stop"]
    assert embedder.calls == 2


def test_full_text_search_still_works_with_an_embedder(semantic_kernel, db_path):
    """Without semantic=True, recall is full-text even when an embedder is set."""
    mem = semantic_kernel.memory("sqlite", path=db_path, embedder=semantic_kernel.embedder())
    mem.add("a/s", [Message.user("apple"), Message.user("banana")])
    assert [m.content for m in mem.search("a/s", "banana")] == ["banana"]


def test_semantic_search_without_an_embedder_is_config_error(kernel, db_path):
    """semantic=True on a store without embedder raises ConfigError explaining how to add one."""
    assert kernel.embedder() is None
    mem = kernel.memory("sqlite", path=db_path)
    with pytest.raises(ConfigError, match="embedder"):
        mem.search("a/s", "x", semantic=True)


def test_embedder_returning_the_wrong_count_is_config_error(kernel, db_path):
    """An embedder that returns fewer vectors than texts is reported, and nothing is stored."""

    class Broken:
        async def aembed(self, texts):
            return []

    mem = kernel.memory("sqlite", path=db_path, embedder=Broken())
    with pytest.raises(ConfigError, match="one per text"):
        mem.add("a/s", [Message.user("x")])
    assert mem.count() == 0
