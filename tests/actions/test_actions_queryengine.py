"""llamaindex's QueryEngine (retrieval over documents, answers with citations) and its chat routing.

The survey (003), section 4.1: "Step 2: 调用QueryEngine做RAG检索 response self._query_engine.query(message)"
(step 2: call the QueryEngine to do RAG retrieval) and "Router是轻量级判别器QueryEngine是重型检索器LLM是最终生成器"
(the router is a light classifier, the QueryEngine the heavy retriever, the LLM the final generator).
"""

import pytest
from hypothesis import given, settings, strategies as st

from zagent import Kernel
from zagent.plugins.actions.queryengine import QueryEngine, cited_ids
from zagent.plugins.memory.documents import DocumentChunk, chunk_text

PLUGINS = ["zagent.plugins.offline", "zagent.plugins.parsers", "zagent.plugins.actions", "zagent.plugins.memory"]
GUIDE = """The Zorblat 3000 is a kitchen robot.

To reset the Zorblat, hold the blue button for nine seconds until the light blinks.

The warranty covers two years of use."""
RECIPES = "Pancakes need flour, eggs and milk. Whisk them and fry in butter."


@pytest.fixture
def k():
    kernel = Kernel(plugins=PLUGINS, entry_points=False, strict=True)
    yield kernel
    kernel.close()


def store_of(k, tmp_path, **options):
    store = k.memory("documents", path=str(tmp_path / "docs.db"), **options)
    store.add(GUIDE, source="guide.md", chunk_size=100, overlap=0)
    store.add(RECIPES, source="recipes.md")
    return store


def test_query_retrieves_the_matching_chunk_and_cites_it(k, tmp_path):
    """003: "调用QueryEngine做RAG检索" (the QueryEngine retrieves): the chunk about resetting reaches the
    model, and the answer's citation names that chunk."""
    store = store_of(k, tmp_path)
    reset = next(c for c in store.search("reset blue button") if "blue button" in c.text)
    llm = k.llm("scripted:m", replies=[f"Hold the blue button for nine seconds [{reset.id}]."])
    answer = QueryEngine(kernel=k, store=store, llm=llm, top_k=2).query("How do I reset my Zorblat?")
    assert "blue button" in llm.requests[0].messages[-1].content
    assert answer.citations == [reset.id] and [c.source for c in answer.sources] == ["guide.md"]


def test_the_document_file_is_private(k, tmp_path):
    """003: the QueryEngine's store holds the documents: the file it creates is readable by its owner only."""
    import os
    import stat

    store_of(k, tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / "docs.db").st_mode) == 0o600


def test_search_matches_word_forms(k, tmp_path):
    """003: the QueryEngine is the "重型检索器" (heavy retriever): "resetting" finds the chunk saying "reset"."""
    assert "blue button" in store_of(k, tmp_path).search("resetting", k=1)[0].text


def test_a_made_up_citation_is_dropped(k, tmp_path):
    """003: answers come "根据以下资料" (from the material retrieved): an id that was not retrieved is no citation."""
    chunks = [DocumentChunk(id="guide.md#1", source="guide.md", text="x")]
    assert cited_ids("See [guide.md#1] and [secret.md#0], [guide.md#1, other#2].", chunks) == ["guide.md#1"]


def test_nothing_found_asks_no_model(k, tmp_path):
    """003: retrieval first, then the LLM: no chunk matching means no model call and an "I don't know"."""
    llm = k.llm("scripted:m", replies=["should not be asked"])
    answer = QueryEngine(kernel=k, store=store_of(k, tmp_path), llm=llm).query("quantum chromodynamics")
    assert llm.requests == [] and answer.citations == [] and "don't know" in answer.response


class ConceptEmbedder:
    """A fake embedding model: one dimension per concept, each concept a few words."""

    CONCEPTS = [("reset", "restart", "reboot"), ("flour", "pancake", "breakfast"), ("warranty", "guarantee")]

    async def aembed(self, texts):
        return [[float(any(w in t.lower() for w in words)) for words in self.CONCEPTS] for t in texts]


class EmbedderPlugin:
    def zagent_register_embedders(self, register):
        register("concepts", ConceptEmbedder)


def test_a_registered_embedder_finds_chunks_sharing_no_word(tmp_path):
    """003 (4.2): "用query embedding ... 算cosine相似度" (rank by cosine of embeddings): with an embedder,
    "guarantee" finds the warranty chunk, which does not contain the word."""
    k = Kernel(plugins=[*PLUGINS, EmbedderPlugin()], entry_points=False, strict=True)
    store = store_of(k, tmp_path, embedder=k.embedder())
    assert "warranty" in store.search("guarantee", k=1)[0].text
    k.close()


def test_the_documents_store_uses_the_registered_embedder_by_itself(tmp_path):
    """Issue wording "embeddings when an embedder is registered": ``k.memory("documents", ...)`` without
    ``embedder=`` embeds with the one registered (``embedder=None`` turns it off)."""
    k = Kernel(plugins=[*PLUGINS, EmbedderPlugin()], entry_points=False, strict=True)
    assert "warranty" in store_of(k, tmp_path).search("guarantee", k=1)[0].text
    assert k.memory("documents", path=str(tmp_path / "words.db"), embedder=None).embedder is None
    k.close()


def test_the_query_engine_is_a_tool(k, tmp_path):
    """003: the QueryEngine answers a message; as a tool (``k.add_tool``) it gives the answer and its sources."""
    store = store_of(k, tmp_path)
    k.add_tool(QueryEngine(kernel=k, store=store, llm=k.llm("scripted:m", replies=["Flour, eggs, milk [recipes.md#0]."]))
               .as_tool("ask_docs", "Answer from the manuals"))
    result = k.run_tool({"name": "ask_docs", "arguments": {"question": "What do pancakes need?"}})
    assert result.ok and "Sources: [recipes.md#0] recipes.md" in result.content


def agent_of(k, llm):
    agent = k.agent({"name": "Helper", "prompt": "{q}", "inputs": [{"name": "q", "type": "string"}],
                     "outputs": [{"name": "a", "type": "string"}], "parse_mode": "str"})
    agent.llm = llm
    return agent


def test_chat_routes_to_retrieval(k, tmp_path):
    """003: "用LLM判断是否需检索Router ... if router_response retrieval: 调用QueryEngine" (the router decides;
    "retrieval" calls the QueryEngine): chat answers from the documents, with citations."""
    llm = k.llm("scripted:m", replies=["retrieval", "Hold the blue button [guide.md#1]."])
    agent = agent_of(k, llm)
    agent.query_engine = QueryEngine(kernel=k, store=store_of(k, tmp_path, ), llm=llm)
    reply = agent.chat("How do I reset the Zorblat?", use_react=False)
    assert reply.mode == "retrieval" and reply.metadata["citations"] == ["guide.md#1"]
    assert reply.metadata["sources"] == ["guide.md"]


@pytest.mark.parametrize("decision,routed", [("retrieval", True), ('{"route": "retrieval"}', True),
                                             ("Direct.", False), ("direct (no retrieval needed)", False),
                                             ("hmm", False)])
def test_the_router_reads_its_answer(k, decision, routed):
    """003: the router "只输出retrieval或direct" (outputs only retrieval or direct): the word it says first
    decides, whatever wraps it; neither word is direct (the fallback still applies)."""
    import asyncio

    from zagent.plugins.actions.docchat import needs_retrieval

    agent = agent_of(k, k.llm(f"scripted:router-{decision}", replies=[decision]))
    assert asyncio.run(needs_retrieval(agent, None, "q", k.context())) is routed


def test_chat_routed_direct_answers_without_documents(k, tmp_path):
    """003: "else: 直接用LLM回答无检索" (else the LLM answers directly, no retrieval)."""
    llm = k.llm("scripted:m", replies=["direct", "Paris."])
    agent = agent_of(k, llm)
    agent.query_engine = QueryEngine(kernel=k, store=store_of(k, tmp_path), llm=llm)
    reply = agent.chat("What is the capital of France?", use_react=False)
    assert reply.mode == "direct" and reply.content == "Paris." and len(llm.requests) == 2


def test_a_direct_i_dont_know_falls_back_to_retrieval(k, tmp_path):
    """003: "if I dont know in final_response.text or not mentioned in final_response.text: # 强制触发检索"
    (an "I don't know" answer forces retrieval): the direct answer is replaced by the documents' answer."""
    llm = k.llm("scripted:m", replies=["direct", "I don\u2019t know what a Zorblat is.", "Hold it [guide.md#1]."])
    agent = agent_of(k, llm)
    agent.query_engine = QueryEngine(kernel=k, store=store_of(k, tmp_path), llm=llm)
    reply = agent.chat("How do I reset the Zorblat?", use_react=False)
    assert reply.mode == "retrieval" and reply.metadata["fallback"] is True
    assert reply.content == "Hold it [guide.md#1]." and "blue button" in llm.requests[-1].messages[-1].content


def test_the_fallback_works_without_the_router(k, tmp_path):
    """003: "解决方案不是调高Router阈值而是增加fallback机制" (not a stricter router, a fallback): with
    ``route=False`` the one direct call that says "not mentioned" still ends in retrieval."""
    llm = k.llm("scripted:m", replies=["That is not mentioned anywhere I know.", "Two years [guide.md#2]."])
    agent = agent_of(k, llm)
    agent.query_engine = QueryEngine(kernel=k, store=store_of(k, tmp_path), llm=llm, route=False)
    reply = agent.chat("How long is the warranty?", use_react=False)
    assert reply.mode == "retrieval" and len(llm.requests) == 2


@pytest.mark.parametrize("text", ["I dont know", "it is not mentioned", "The text doesn't mention it.", "I don't know.", "I do not know the answer", "Sorry, I'm not sure.",
                                  "This is not mentioned in my data.", "I have no information about that.",
                                  "I cannot answer that", "我不知道", "资料里没有提到"])
def test_dont_know_phrasings_trigger_the_fallback(text):
    """003: "I dont know ... or not mentioned" (the fallback triggers): the usual ways of saying it count."""
    from zagent.plugins.actions.docchat import says_dont_know

    assert says_dont_know(text)


@pytest.mark.parametrize("text", ["I know: hold the blue button.", "Paris is the capital.", "Now you know!"])
def test_answers_do_not_trigger_the_fallback(text):
    """003: the fallback is for an answer that admits not knowing, not for an answer."""
    from zagent.plugins.actions.docchat import says_dont_know

    assert not says_dont_know(text)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "Zs", "P")), max_size=3000),
       st.integers(50, 400))
def test_chunks_are_bounded_and_keep_every_word(text, size):
    """003: the QueryEngine retrieves document pieces: every chunk fits ``chunk_size`` and every word
    of the document is in some chunk."""
    chunks = chunk_text(text, chunk_size=size, overlap=size // 4)
    assert all(len(c) <= size for c in chunks)
    joined = " ".join(chunks).split()
    assert set(text.split()) <= set(joined) | {w for w in text.split() if len(w) > size}
