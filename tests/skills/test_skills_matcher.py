"""SkillMatcher: keyword scoring with a threshold, embeddings when installed, LLM re-rank on request."""

from zagent.plugins.skills import SkillMatcher, SkillRegistry, skills_for

from .conftest import price_skill

GREET = {"name": "greet-guests", "description": "Welcome a guest by name", "when_to_use": "the user wants a greeting",
         "instructions": "Say hello and use the guest's name.", "examples": ["Greet Ada for me"]}


def test_similar_request_matches(kernel):
    """A request sharing the skill's key words scores above the threshold and is returned."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    found = skills.match("How much do 2 bananas and 5 pears cost?")
    assert found is not None and found.name == "price-totals" and found.method == "keyword"


def test_unrelated_request_matches_nothing(kernel):
    """A request with no word in common with any skill gives None."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    assert skills.match("Tell me a joke about the weather") is None


def test_best_of_several_ranks_first(kernel):
    """With several skills, the one speaking to most of the request wins."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.registry.register(GREET)
    assert skills.match("Please greet our guest Grace").name == "greet-guests"
    assert [m.name for m in skills.matcher.rank("total price of 3 pears")][:1] == ["price-totals"]


def test_archived_skills_are_never_matched(kernel):
    """An archived skill is kept but not offered."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.lifecycle.archive("price-totals")
    assert skills.match("What do 2 pears cost together?") is None


def test_scores_are_the_same_without_the_sqlite_index(folder, clock):
    """Without the FTS index the registry is scored in Python, with the same result."""
    with_index = SkillRegistry(folder / "a", clock=clock).load()
    without = SkillRegistry(folder / "b", index=False, clock=clock).load()
    for reg in (with_index, without):
        reg.register(price_skill())
        reg.register(GREET)
    text = "What is the total price of 2 pears?"
    assert SkillMatcher(registry=with_index).rank(text) == SkillMatcher(registry=without).rank(text)


class WordEmbedder:
    """Vectors counting a few words: enough to tell prices from greetings."""

    words = ("price", "cost", "total", "hello", "greet", "guest")

    async def aembed(self, texts):
        return [[t.lower().count(w) + 0.01 for w in self.words] for t in texts]


class BrokenEmbedder:
    async def aembed(self, texts):
        raise RuntimeError("embedding service down")


def test_embedder_is_used_when_installed(kernel):
    """With an embedder plugin installed, matching ranks by cosine similarity."""
    class Plugin:
        def zagent_register_embedders(self, register):
            register("words", lambda **options: WordEmbedder())

    kernel.add_plugin(Plugin())
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.registry.register(GREET)
    found = skills.match("hello, greet the guest")
    assert found.name == "greet-guests" and found.method == "embedding"


def test_failing_embedder_falls_back_to_keywords(kernel):
    """An embedder that raises is logged and keyword scoring is used instead."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    matcher = SkillMatcher(registry=skills.registry, embedder=BrokenEmbedder())
    assert matcher.match("What do 2 pears cost together?").method == "keyword"


def test_llm_rerank_picks_among_candidates(kernel):
    """With rerank_llm, the model's JSON choice among the top candidates wins."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    skills.registry.register(GREET)
    llm = kernel.llm("scripted:rerank", replies=['{"skill": "price-totals"}'])
    matcher = SkillMatcher(registry=skills.registry, rerank_llm=llm, threshold=0.2)
    found = matcher.match("greet the guest and tell the total price")
    assert found.name == "price-totals" and found.method == "llm"
    assert "greet-guests" in llm.requests[0].messages[-1].content


def test_llm_rerank_may_answer_none(kernel):
    """The re-ranking model saying "none" means no skill is used."""
    skills = skills_for(kernel)
    skills.registry.register(price_skill())
    llm = kernel.llm("scripted:rerank-none", replies=['{"skill": "none"}'])
    assert SkillMatcher(registry=skills.registry, rerank_llm=llm).match("What do 2 pears cost?") is None
