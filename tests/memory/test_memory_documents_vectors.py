"""The document store's vectors: chunks embedded by another embedder (another dimension) never mix into a
search by meaning, and ``remove`` forgets a source in one transaction."""

from zagent import Kernel
from zagent.plugins.memory.documents import DocumentStore

PLUGINS = ["zagent.plugins.memory"]


class Embedder:
    """``dims`` dimensions; each text is ``[1, 0, 0...]`` if it names a reset, else ``[0, 1, 0...]``."""

    def __init__(self, dims):
        self.dims = dims

    async def aembed(self, texts):
        return [[1.0 if "reset" in t.lower() else 0.0, 0.0 if "reset" in t.lower() else 1.0] + [0.0] * (self.dims - 2)
                for t in texts]


def test_chunks_of_another_dimension_are_left_out_of_a_search_by_meaning(tmp_path):
    """A store filled by a 3-dimension embedder, searched with a 2-dimension one: the old chunks are not ranked
    by meaning (no error, no comparison of vectors of different lengths); the new ones are."""
    path = str(tmp_path / "docs.db")
    old = DocumentStore(path, embedder=Embedder(3))
    old.add("How to reset the robot: hold the button.", source="old.md")
    old.close()
    store = DocumentStore(path, embedder=Embedder(2))
    store.add("To restart it, unplug it.", source="new.md")
    found = store.search("zzz", k=4)  # no word in common with any chunk: found by meaning only
    assert [c.source for c in found] == ["new.md"]
    store.close()


def test_search_by_meaning_with_a_new_dimension_does_not_raise(tmp_path):
    """Only chunks of another dimension, and a query by meaning: the search answers by words (here: nothing)."""
    path = str(tmp_path / "docs.db")
    old = DocumentStore(path, embedder=Embedder(4))
    old.add("Pancakes need flour.", source="recipes.md")
    old.close()
    store = DocumentStore(path, embedder=Embedder(2))
    assert store.search("zzz", k=2) == []
    store.close()


def test_remove_forgets_every_chunk_of_a_source_and_keeps_the_others(tmp_path):
    """``remove(source)`` drops its chunks and their words; another source stays searchable."""
    k = Kernel(plugins=PLUGINS, entry_points=False)
    store = k.memory("documents", path=str(tmp_path / "docs.db"), embedder=None)
    store.add("The warranty covers two years.", source="a.md")
    store.add("Pancakes need flour.", source="b.md")
    store.remove("a.md")
    assert store.sources() == ["b.md"]
    assert store.search("warranty") == []
    assert [c.source for c in store.search("flour")] == ["b.md"]
    k.close()
