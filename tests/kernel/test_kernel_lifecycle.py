"""Kernel lifecycle details: closing what it handed out, cached embedders, failing output rails."""

import pytest

from zagent import Kernel, ToolBlocked


class Store:
    closed = 0

    def close(self):
        Store.closed += 1


class Embedder:
    made = 0

    def __init__(self, **options):
        Embedder.made += 1

    async def aembed(self, texts):
        return [[1.0] for _ in texts]


class Plugin:
    def zagent_register_memory(self, register):
        register("tiny", lambda **options: Store())

    def zagent_register_embedders(self, register):
        register("ones", Embedder)


def test_kernel_close_closes_memory_stores_it_made():
    """Kernel.close() closes every memory store k.memory() returned that is still alive."""
    k = Kernel([Plugin()], entry_points=False)
    Store.closed = 0
    stores = [k.memory("tiny"), k.memory("tiny")]
    k.close()
    assert Store.closed == 2 and len(stores) == 2


def test_embedder_instance_is_reused():
    """k.embedder() returns one instance per name and options, so its caches survive between steps."""
    k = Kernel([Plugin()], entry_points=False)
    Embedder.made = 0
    assert k.embedder() is k.embedder("ones")
    assert k.embedder("ones", model="x") is not k.embedder()
    assert Embedder.made == 2


def test_failing_after_llm_rail_withholds_the_reply():
    """An after-LLM rail that raises blocks the reply (fail closed) with a reason naming the rail."""
    class Broken:
        def zagent_after_llm_call(self, request, response, ctx):
            raise RuntimeError("regex exploded")

    k = Kernel(["zagent.plugins.offline", Broken()], entry_points=False)
    llm = k.llm("scripted:m", replies=["secret reply"])
    with pytest.raises(ToolBlocked, match="regex exploded") as info:
        llm.complete("hi")
    assert "secret reply" not in str(info.value)
