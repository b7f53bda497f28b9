"""Agent long-term memory: messages written to the SQLite backend chosen by name, per agent namespace."""

from .conftest import qa_spec


def test_long_term_memory_persists_across_agent_instances(kernel, tmp_path):
    """With use_long_term_memory, a new agent instance on the same file can recall earlier results."""
    kernel.add_plugin("zagent.plugins.memory")
    kernel.config["spec_paths"] = [str(tmp_path)]  # the app lets specs name files there
    path = str(tmp_path / "ltm.db")
    spec = qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": path})
    agent = kernel.agent(spec)
    agent.llm = kernel.llm("scripted:a", replies=["The tide is driven by the moon."])
    agent(question="What drives tides?")
    store = kernel.memory("sqlite", path=path)
    found = store.search(agent.namespace, "moon")
    assert [m.content for m in found] == ['{"answer":"The tide is driven by the moon."}']
    assert len(store.last(agent.namespace, 10)) == 2  # the inputs message and the result


def test_clear_memory_long_term_clears_the_namespace(kernel, tmp_path):
    """clear_memory(long_term=True) also empties the agent's long-term namespace."""
    kernel.add_plugin("zagent.plugins.memory")
    kernel.config["spec_paths"] = [str(tmp_path)]  # the app lets specs name files there
    path = str(tmp_path / "ltm.db")
    agent = kernel.agent(qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": path}))
    agent.llm = kernel.llm("scripted:a", replies=["x"])
    agent(question="q")
    agent.clear_memory(long_term=True)
    assert kernel.memory("sqlite", path=path).last(agent.namespace, 10) == []


def test_a_fresh_agent_extracts_a_missing_input_from_an_earlier_runs_memory(kernel, tmp_path):
    """A new agent instance (empty short-term memory) on the same file finds a missing input in what an
    earlier instance stored, through recall."""
    kernel.add_plugin("zagent.plugins.memory")
    kernel.config["spec_paths"] = [str(tmp_path)]  # the app lets specs name files there
    spec = qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlite", "path": str(tmp_path / "m.db")})
    first = kernel.agent(spec)
    first.llm = kernel.llm("scripted:first", replies=["Gravity of the moon."])
    first(question="What drives tides?")
    second = kernel.agent(spec)
    second.llm = kernel.llm("scripted:second", replies=['{"question": "What drives tides?"}', "The moon."])
    assert second().answer == "The moon."
    extraction = "\n".join(m.content or "" for m in second.llm.requests[0].messages)
    assert "What drives tides?" in extraction


def test_sessions_keep_long_term_memories_apart(kernel, tmp_path):
    """long_term_memory={"session": ...} stores under name/session, and recall sees only its own session."""
    kernel.add_plugin("zagent.plugins.memory")
    kernel.config["spec_paths"] = [str(tmp_path)]  # the app lets specs name files there
    path = str(tmp_path / "m.db")
    agents = {}
    for session in ("alice", "bob"):
        agents[session] = kernel.agent(qa_spec(use_long_term_memory=True,
                                               long_term_memory={"path": path, "session": session}))
        agents[session].llm = kernel.llm(f"scripted:{session}", replies=[f"hello {session}"])
        agents[session](question=f"who is {session}?")
    assert agents["alice"].namespace.startswith("QA@") and agents["alice"].namespace.endswith("/alice")
    assert [m.content for m in agents["alice"].recall("hello")] == ['{"answer":"hello alice"}']
    assert [m.content for m in agents["bob"].recall("hello")] == ['{"answer":"hello bob"}']


def test_long_term_memory_naming_an_unknown_backend_is_refused_when_the_agent_is_built(kernel):
    """A spec whose ``long_term_memory`` names no registered memory backend fails at ``kernel.agent``, naming the
    registered ones, not at the first run."""
    import pytest
    from zagent import ConfigError

    kernel.add_plugin("zagent.plugins.memory")
    with pytest.raises(ConfigError, match=r"long_term_memory name 'sqlit' is not a memory backend \(registered: .*sqlite"):
        kernel.agent(qa_spec(use_long_term_memory=True, long_term_memory={"name": "sqlit"}))


def test_long_term_memory_naming_a_store_that_keeps_no_messages_is_refused(kernel, tmp_path):
    """``long_term_memory: {"name": "runlog"}`` (a memory backend, but not a message store) stops the run with a
    ``ConfigError`` saying so, before any message is written to it."""
    import pytest
    from zagent import ConfigError

    kernel.add_plugin("zagent.plugins.runlog")
    kernel.config["spec_paths"] = [str(tmp_path)]
    agent = kernel.agent(qa_spec(use_long_term_memory=True,
                                 long_term_memory={"name": "runlog", "path": str(tmp_path / "logs.db")}))
    agent.llm = kernel.llm("scripted:a", replies=["x"])
    with pytest.raises(ConfigError, match="long_term_memory 'runlog' is not a message store"):
        agent(question="q")
