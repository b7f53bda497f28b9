"""Agent long-term memory: messages written to the SQLite backend chosen by name, per agent namespace."""

from .conftest import qa_spec


def test_long_term_memory_persists_across_agent_instances(kernel, tmp_path):
    """With use_long_term_memory, a new agent instance on the same file can recall earlier results."""
    kernel.add_plugin("zagent.plugins.memory")
    path = str(tmp_path / "ltm.db")
    spec = qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": path})
    agent = kernel.agent(spec)
    agent.llm = kernel.llm("scripted:a", replies=["The tide is driven by the moon."])
    agent(question="What drives tides?")
    store = kernel.memory("sqlite", path=path)
    found = store.search("QA", "moon")
    assert [m.content for m in found] == ['{"answer":"The tide is driven by the moon."}']
    assert len(store.last("QA", 10)) == 2  # the inputs message and the result


def test_clear_memory_long_term_clears_the_namespace(kernel, tmp_path):
    """clear_memory(long_term=True) also empties the agent's long-term namespace."""
    kernel.add_plugin("zagent.plugins.memory")
    path = str(tmp_path / "ltm.db")
    agent = kernel.agent(qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": path}))
    agent.llm = kernel.llm("scripted:a", replies=["x"])
    agent(question="q")
    agent.clear_memory(long_term=True)
    assert kernel.memory("sqlite", path=path).last("QA", 10) == []
